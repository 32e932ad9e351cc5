"""What the query asks for, and the ranking prior of roles and units.

lode exists to find code: unless a query asks for tests, examples, docs, history,
configuration or build files, a chunk of implementation code outranks one of those at
the same relevance (``ROLE_PRIOR`` scales the fused score of the others). A query asks
for a role by its words (``_INTENT_WORDS``: "test", "example", "how do I", "changelog"…),
by a ``roles`` filter, or by a path filter into such files (``tests/**``). Generated and
vendored code are only asked for by a filter.

A unit split into pieces (a long function) ranks once: its best piece, the others folded
into it (they would fill the page's other slots with the same function).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from indexer.lexicon import identifier_words
from indexer.roles import file_role
from indexer.store import Candidate, ChunkFacts

__all__ = [
    "HEADER_PRIOR",
    "REPORT_PRIOR",
    "ROLE_PRIOR",
    "Folded",
    "apply_priors",
    "is_bug_report",
    "role_prior_for",
    "wanted_roles",
]

#: The fused score of a chunk of each role is scaled by this unless the query asks for it
#: (tuned on the whole-repository benchmark: ``benchmarks/tune_ranking.py``; a stronger
#: prior gained under 0.003 MRR there, so the milder one stays).
ROLE_PRIOR: Final[Mapping[str, float]] = {
    "implementation": 1.0,
    "test": 0.35,
    "docs": 0.45,
    "example": 0.45,
    "config": 0.6,
    "build": 0.6,
    "changelog": 0.2,
    "generated": 0.35,
    "vendored": 0.4,
}

#: A bug report asks for the code to change: the prior of every other role it does not ask
#: for is scaled by this too (tuned on the whole-repository benchmark's bug reports, which
#: quote tests, asserts and docs: ``benchmarks/tune_ranking.py``).
REPORT_PRIOR: Final = 0.5

#: The score of a container's header chunk (a class's name, docstring and fields, its
#: methods chunked apart) is scaled by this unless the query names the container: a question
#: the header's summary words match is answered by the member that does the work.
HEADER_PRIOR: Final = 0.7

_INTENT_WORDS: Final[Mapping[str, re.Pattern[str]]] = {
    "test": re.compile(
        r"\b(?:tests?|testing|tested|unit ?tests?|test ?cases?|specs?|fixtures?|mocks?|mocking|stubs?"
        r"|assert(?:s|ions?)?|pytest|unittest|junit|jest|mocha|vitest|rspec|coverage)\b"
    ),
    "example": re.compile(
        r"\b(?:examples?|samples?|demos?|snippets?|usage|how (?:do|can|should) (?:i|we|you)"
        r"|how to use|tutorials?|cookbook|recipes?)\b"
    ),
    "docs": re.compile(
        r"\b(?:docs?|documentation|documented|readme|guides?|tutorials?|manual|faq|how (?:do|can|should) "
        r"(?:i|we|you)|how to|what (?:is|are|does)|explain\w*|overview|introduction|getting started"
        r"|install\w*)\b"
    ),
    "changelog": re.compile(
        r"\b(?:change ?logs?|release notes?|releases?|changes? in|changed in|what'?s new|history"
        r"|deprecat\w+|breaking changes?|migrat\w+ guide|upgrad\w+ guide|since (?:version|v?\d))\b"
    ),
    "config": re.compile(
        r"\b(?:config\w*|settings?|options? file|yaml|toml|ini|\.env|env(?:ironment)? var\w*|dotfiles?)\b"
    ),
    "build": re.compile(
        r"\b(?:build (?:system|script|file|config\w*)|makefile|cmake|gradle|maven|pom\.xml|setup\.py"
        r"|packag\w+|dependenc\w+|ci (?:pipeline|workflow|job)s?|dockerfile|docker image|compil\w+ flags?)\b"
    ),
}


#: Signs that a query is a bug report (a traceback, an error line, expected vs actual, a code
#: block, versions): two of them make one.
_REPORT_SIGNS: Final[tuple[re.Pattern[str], ...]] = (
    # frames: Python, Java/Kotlin, JavaScript, Go, Rust
    re.compile(
        r"traceback \(most recent call last\)|^\s*file \"[^\"\n]+\", line \d+"
        r"|^\s*at [\w$.<>/]+ ?\(.*:\d+(?::\d+)?\)|^goroutine \d+|panicked at|^\s*\d+: +[\w:<>]+::",
        re.M,
    ),
    re.compile(r"^[ \t]*[\w.]*(?:error|exception|warning|panic)\b(?:\[\w+\])?:", re.M),
    re.compile(r"\bexpected\b.{0,300}?\b(?:got|but|actual(?:ly)?|instead)\b", re.S),
    re.compile(
        r"^[ \t#*]*(?:steps to reproduce|to reproduce|expected (?:behaviou?r|result|output)"
        r"|actual (?:behaviou?r|result|output)|reproduc\w+ example)\b",
        re.M,
    ),
    re.compile(r"^[ \t]*(?:```|~~~)", re.M),
    re.compile(r"\b(?:version|python|node|go|rustc|java|os)\b[ \t]*[:=]?[ \t]*v?\d+\.\d+"),
)
#: What a bug report asks for beyond the code to change: only an explicit request counts
#: (its traceback, asserts and test names quote tests; "how do I" asks for a fix).
_REPORT_REQUESTS: Final[Mapping[str, re.Pattern[str]]] = {
    "test": re.compile(
        r"\b(?:write|add|adding|need|needs|create|missing)\s+(?:a |an |some |the |more )?(?:\w+ )?tests?\b"
        r"|\btests? (?:should|must|need to|needs to|do not|don'?t) (?:cover|check|test)\b|\btest coverage\b"
    ),
    "docs": re.compile(r"\b(?:docs|documentation|documented|readme|docstrings?)\b"),
    "changelog": re.compile(r"\b(?:change ?logs?|release notes?)\b"),
    "build": _INTENT_WORDS["build"],
}


#: Words of a problem report; with a long text (``_LONG_REPORT`` characters), one of them, one
#: of ``_REPORT_SIGNS`` or the shape of a pasted issue (``_PASTED_ISSUE``) makes a report.
_PROBLEM_WORDS: Final = re.compile(
    r"\b(?:bugs?|regressions?|crash\w*|fails?|failing|failure|broken|hangs?|panics?|leaks?"
    r"|does ?n[o']t work|not working|incorrect\w*|wrong|unexpected\w*|instead of|should(?:n'?t| not)?"
    r"|invalid|inaccurate|mismatch\w*|misleading|unsound|segfault\w*|undefined behaviou?r"
    r"|(?:does|do|is|are) ?n[o']t \w+)\b"
)
#: A pasted issue: a title line, a blank line, then its text.
_PASTED_ISSUE: Final = re.compile(r"\A[^\n]{8,200}\n[ \t]*\n\S")
_LONG_REPORT: Final = 250


@functools.lru_cache(maxsize=64)
def is_bug_report(query: str) -> bool:
    """True when ``query`` reads as a bug report: two signs of ``_REPORT_SIGNS``, or a long
    text with one of them, a problem word, or a pasted issue's shape (title, blank line, text).
    Cached: one search asks it for its weights, its priors and its wanted roles (its patterns
    run over up to 2,000 characters each time)."""
    text = query.lower()
    signs = sum(1 for sign in _REPORT_SIGNS if sign.search(text))
    if signs >= 2:
        return True
    return len(text) >= _LONG_REPORT and (
        signs >= 1 or bool(_PROBLEM_WORDS.search(text)) or bool(_PASTED_ISSUE.match(text))
    )


def role_prior_for(query: str, prior: Mapping[str, float], report_prior: float) -> Mapping[str, float]:
    """``prior``, with every role but implementation scaled by ``report_prior`` when the
    query reads as a bug report."""
    if report_prior >= 1.0 or not is_bug_report(query):
        return prior
    return {role: p if role == "implementation" else p * report_prior for role, p in prior.items()}


def wanted_roles(query: str, roles: Sequence[str] = (), path_include: Sequence[str] = ()) -> frozenset[str]:
    """The roles other than implementation a query asks for (they keep their full score);
    of a bug report, only those it explicitly asks for."""
    text = query.lower()
    intents = _REPORT_REQUESTS if is_bug_report(query) else _INTENT_WORDS
    wanted = {role for role, words in intents.items() if words.search(text)}
    wanted.update(roles)
    for glob in path_include:  # a path filter into tests/, docs/, examples/…: those are wanted
        role = file_role(glob.replace("*", "x").rstrip("/") + "/x.py")
        if role != "implementation":
            wanted.add(role)
    wanted.discard("implementation")
    return frozenset(wanted)


@dataclass(frozen=True, slots=True)
class Folded:
    """A unit's pieces folded into its best one."""

    start_line: int
    """First line of the unit (of every piece of it found)."""
    end_line: int
    """Last line of the unit."""
    pieces: int
    """How many pieces were folded into the shown one (0: none)."""


def _words(text: str) -> frozenset[str]:
    return frozenset(identifier_words(text).lower().split())


def apply_priors(
    ranked: Sequence[tuple[Candidate, float]],
    facts: Mapping[str, ChunkFacts],
    wanted: frozenset[str],
    prior: Mapping[str, float] = ROLE_PRIOR,
    query: str = "",
    header_prior: float = HEADER_PRIOR,
) -> tuple[list[tuple[Candidate, float]], dict[str, Folded]]:
    """``ranked`` with each score scaled by its role's prior (unless wanted) and, for a
    container's header, by ``header_prior`` unless the query names the container; pieces of
    one unit folded into the best one, best first; and the folded units by key."""
    asked = _words(query)
    scored: list[tuple[Candidate, float, ChunkFacts | None]] = []
    for cand, score in ranked:
        fact = facts.get(cand.key)
        weight = 1.0 if fact is None or fact.role in wanted else prior.get(fact.role, 1.0)
        if fact is not None and fact.header is not None and not _words(fact.header) <= asked:
            weight *= header_prior
        scored.append((cand, score * weight, fact))
    scored.sort(key=lambda item: (-item[1], item[0].key))
    kept: list[tuple[Candidate, float]] = []
    units: dict[tuple[Any, ...], tuple[str, int, int, int]] = {}
    for cand, score, fact in scored:
        if fact is None:
            kept.append((cand, score))
            continue
        unit = (fact.file_id, *fact.unit)
        seen = units.get(unit)
        if seen is None:
            units[unit] = (cand.key, fact.start_line, fact.end_line, 0)
            kept.append((cand, score))
        else:
            key, start, end, pieces = seen
            units[unit] = (key, min(start, fact.start_line), max(end, fact.end_line), pieces + 1)
    folded = {key: Folded(start, end, pieces) for key, start, end, pieces in units.values() if pieces}
    return kept, folded
