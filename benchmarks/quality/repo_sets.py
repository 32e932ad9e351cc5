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
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from benchmarks.quality._units import LANGUAGES, Definition, iter_definitions
from benchmarks.quality.changes import ChangePair
from benchmarks.quality.pairs import MIN_UNIT_LINES, PairSet
from benchmarks.quality.roles import IMPLEMENTATION

__all__ = [
    "MIN_NAME_CHARS",
    "SETS",
    "Query",
    "Target",
    "change_queries",
    "doc_queries",
    "identifier_queries",
    "sample_queries",
]

#: The query sets, in table order.
SETS = ("doc", "change", "identifier")
MIN_NAME_CHARS = 4
_DUNDER = re.compile(r"__\w+__")


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
