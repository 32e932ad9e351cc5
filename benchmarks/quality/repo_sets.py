"""The three query sets of a whole-repository corpus, and the two trees they are asked against.

* ``doc`` (set a): the first sentence of a unit's doc comment → that unit, as in the
  source-only benchmark (``pairs.extract_pairs``: same filters, every doc comment of the
  tree blanked, line numbers kept), but only units of implementation files
  (``roles.file_role``). Asked against the *blanked* tree.
* ``change`` (set b): a commit subject made after the pinned version → the implementation
  files it changed (``changes``, mined once and committed). Asked against the *original*
  tree: the doc comments a developer reads are part of what such a question should find.
* ``identifier`` (set c): a function, method, class or type name → the unit defining it.
  Names are those defined exactly once in the whole tree (any file, any role), by a unit
  of an implementation file that is not a test, constructor or dunder, spans at least
  ``MIN_UNIT_LINES`` lines, and have at least ``MIN_NAME_CHARS`` characters. Asked against
  the *original* tree.
* ``question`` (set d): the doc pairs of set (a) whose unit is a function or method,
  the first sentence rewritten as a plain-English question by a fixed rule
  (``to_question``: "Returns the X." → "how do I get the X?", "Checks whether X." → "how
  do I check whether X?", a Go/Java sentence that opens with the unit's own name drops it,
  "Creates/Parses/… X" → "how do I create/parse/… X?", "The/A X …" → "where is the code
  for the X …?", "Is …"/"Invoked …" → "which function is …?"); every pair the rule turns into a question of at least
  ``MIN_QUESTION_WORDS`` words is kept (no pick). Asked against the *blanked* tree.
* ``bug`` (set e): a real issue report of the corpus's project (title and body) → the
  implementation files its fix changed (``bugs``, mined once and committed). Asked
  against the *original* tree.
* ``bug_src``: the same reports asked again with the search restricted by hand to
  implementation files (lode's ``roles`` filter; BM25 ranks implementation files only):
  the reference line a bug report's ranking is measured against.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from benchmarks.quality._units import LANGUAGES, Definition, iter_definitions
from benchmarks.quality.bugs import BugReport
from benchmarks.quality.changes import ChangePair
from benchmarks.quality.pairs import MIN_UNIT_LINES, PairSet
from benchmarks.quality.roles import IMPLEMENTATION

__all__ = [
    "MIN_NAME_CHARS",
    "MIN_QUESTION_WORDS",
    "QUESTION_KINDS",
    "SETS",
    "SOURCE_ONLY",
    "Query",
    "Target",
    "bug_queries",
    "change_queries",
    "doc_queries",
    "identifier_queries",
    "question_queries",
    "sample_queries",
    "to_question",
]

#: The query sets, in table order.
SETS = ("doc", "change", "identifier", "question", "bug", "bug_src")
#: Sets asked with the search restricted to implementation files (a reference line).
SOURCE_ONLY = frozenset({"bug_src"})
MIN_NAME_CHARS = 4
MIN_QUESTION_WORDS = 6
#: Unit kinds (tree-sitter node types) a question may target: functions and methods with a body.
QUESTION_KINDS = frozenset(
    {
        "function_definition",
        "function_declaration",
        "generator_function_declaration",
        "method_declaration",
        "method_definition",
        "function_item",
    }
)
_DUNDER = re.compile(r"__\w+__")
_GET_VERBS = frozenset({"return", "returns", "get", "gets", "retrieve", "retrieves", "fetch", "fetches"})
_CHECK_VERBS = frozenset({"check", "checks", "test", "tests", "determine", "determines", "tell", "tells"})
_ARTICLES = frozenset({"a", "an", "the", "this"})
_LINKING = frozenset({"is", "are", "was", "can", "should", "will", "may", "must"})
_MARKUP = re.compile(r"`+|\*\*")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+$")


@dataclass(frozen=True, slots=True)
class Target:
    """Where an answer is: a file, and for a unit the line a hit chunk must cover."""

    path: str
    line: int | None = None


@dataclass(frozen=True, slots=True)
class Query:
    """One question of a set and what answers it."""

    corpus: str
    set: str
    text: str
    targets: tuple[Target, ...]
    key: str
    """Identity within the corpus and set (a path and line, or a commit)."""

    @property
    def id(self) -> str:
        """Stable identity across runs: corpus, set and key."""
        return f"{self.corpus}:{self.set}:{self.key}"

    @property
    def paths(self) -> frozenset[str]:
        """The target files."""
        return frozenset(t.path for t in self.targets)


def doc_queries(corpus: str, pair_set: PairSet, roles: Mapping[str, str]) -> list[Query]:
    """Set (a): the doc-comment pairs whose unit lies in an implementation file."""
    return [
        Query(corpus, "doc", p.query, (Target(p.path, p.start_line),), f"{p.path}:{p.start_line}")
        for p in pair_set.pairs
        if roles.get(p.path) == IMPLEMENTATION
    ]


def change_queries(pairs: Sequence[ChangePair]) -> list[Query]:
    """Set (b): the committed change pairs, one target per changed file."""
    return [
        Query(p.corpus, "change", p.query, tuple(Target(path) for path in p.files), p.commit) for p in pairs
    ]


def _base_verb(word: str) -> str:
    """A third-person verb in its base form ("creates" → "create", "matches" → "match")."""
    lower = word.lower()
    if lower.endswith("ies") and len(lower) > 4:
        return lower[:-3] + "y"
    if lower.endswith(("sses", "shes", "ches", "xes", "zes")):
        return lower[:-2]
    if lower.endswith("s") and not lower.endswith("ss") and len(lower) > 3:
        return lower[:-1]
    return lower


def to_question(sentence: str, name: str = "") -> str | None:
    """A doc comment's first sentence as the question a person would type (None when the
    rule gives fewer than ``MIN_QUESTION_WORDS`` words). Fixed rule, in order: markup
    stripped; a leading ``name`` (the unit's own, Go/Java style) dropped; "Return(s)/Get(s)
    X" → "how do I get X?"; "Check(s)/Test(s) whether X" → "how do I check whether X?";
    "Whether X" → "how do I tell whether X?"; "A/An/The/This X" → "where is the code for
    the X?"; "Is/Can/… X" → "which function is/can/… X?"; "Invoked/Called… X" → "which
    function is invoked/called… X?"; any other first word → "how do I <its base form> X?"."""
    text = " ".join(_MARKUP.sub("", sentence).split()).rstrip(".!?:;, ")
    words = text.split(" ")
    if name and words and words[0].strip("`()") in (name, f"{name}()"):
        words = words[1:]
    if len(words) < 2 or not _WORD.match(words[0]):
        return None
    first, rest = words[0].lower(), " ".join(words[1:])
    if first in _GET_VERBS:
        question = f"how do I get {rest}"
    elif first in _CHECK_VERBS:
        question = f"how do I check {rest}"
    elif first == "whether":
        question = f"how do I tell whether {rest}"
    elif first in _ARTICLES:
        question = f"where is the code for the {rest}"
    elif first in _LINKING:
        question = f"which function {first} {rest}"
    elif first.endswith("ed"):
        question = f"which function is {first} {rest}"
    else:
        question = f"how do I {_base_verb(first)} {rest}"
    return f"{question}?" if len(question.split()) >= MIN_QUESTION_WORDS else None


def question_queries(corpus: str, pair_set: PairSet, roles: Mapping[str, str]) -> list[Query]:
    """Set (d): the doc pairs of functions and methods in implementation files, each first
    sentence rewritten as a plain-English question (``to_question``); every pair it turns
    into a question is kept."""
    out: list[Query] = []
    for p in pair_set.pairs:
        if roles.get(p.path) != IMPLEMENTATION or p.kind not in QUESTION_KINDS:
            continue
        question = to_question(p.query, p.name)
        if question:
            out.append(
                Query(
                    corpus, "question", question, (Target(p.path, p.start_line),), f"{p.path}:{p.start_line}"
                )
            )
    return out


def bug_queries(reports: Sequence[BugReport], set_name: str = "bug") -> list[Query]:
    """Set (e) (or its ``bug_src`` reference): each report's title and body → the files its
    fix changed."""
    return [
        Query(r.corpus, set_name, r.query, tuple(Target(path) for path in r.files), f"#{r.number}")
        for r in reports
    ]


def _keeps(definition: Definition) -> bool:
    return (
        not definition.test
        and not definition.constructor
        and not _DUNDER.fullmatch(definition.name)
        and len(definition.name) >= MIN_NAME_CHARS
        and definition.end_line - definition.start_line + 1 >= MIN_UNIT_LINES
    )


def identifier_queries(
    corpus: str, files: Mapping[str, bytes], languages: Mapping[str, str], roles: Mapping[str, str]
) -> list[Query]:
    """Set (c): names defined once in the whole tree, asked for their defining unit."""
    found: list[tuple[str, Definition]] = []
    for path, data in sorted(files.items()):
        language = languages.get(path, "")
        if language in LANGUAGES:
            found += [(path, d) for d in iter_definitions(language, data)]
    counts = Counter(d.name for _, d in found)
    return [
        Query(corpus, "identifier", d.name, (Target(path, d.start_line),), f"{path}:{d.start_line}")
        for path, d in found
        if counts[d.name] == 1 and roles.get(path) == IMPLEMENTATION and _keeps(d)
    ]


def sample_queries(queries: Sequence[Query], limit: int | None, seed: int = 0) -> list[Query]:
    """At most ``limit`` queries drawn with ``seed`` (all when None), in id order (the draw
    does not depend on the order of ``queries``)."""
    chosen = sorted(queries, key=lambda q: q.id)
    if limit is not None and len(chosen) > limit:
        chosen = random.Random(seed).sample(chosen, limit)
    return sorted(chosen, key=lambda q: q.id)
