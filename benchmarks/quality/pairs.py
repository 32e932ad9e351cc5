"""Query/target pairs (the CodeSearchNet protocol) and the blanked corpus they are asked against.

The query is the first sentence of a unit's doc comment; the target is the unit. Every
doc comment of the corpus is blanked before indexing, with its line breaks kept, so the
indexed text never contains a query and line numbers do not move. Pairs are dropped
when the unit is a test, a constructor or a dunder method, spans fewer than
``MIN_UNIT_LINES`` lines, when the query has fewer than ``MIN_QUERY_WORDS`` words or is
boilerplate, and when the same query text documents several units.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from benchmarks.quality._doctext import first_sentence, is_boilerplate, word_count
from benchmarks.quality._units import LANGUAGES, Unit, parse_errors, scan_source

__all__ = [
    "MIN_QUERY_WORDS",
    "MIN_UNIT_LINES",
    "Pair",
    "PairSet",
    "blank_source",
    "extract_pairs",
    "sample_pairs",
]

MIN_QUERY_WORDS = 3
MIN_UNIT_LINES = 3
_TEST_PATH = re.compile(
    r"(^|/)(tests?|testing|spec|__tests__|testdata)/|(^|/)(test_[^/]*|conftest\.py)$|"
    r"_test\.\w+$|\.(test|spec)\.\w+$|Tests?\.\w+$"
)
_DUNDER = re.compile(r"__\w+__")


@dataclass(frozen=True, slots=True)
class Pair:
    """One query and the unit that answers it."""

    corpus: str
    query: str
    path: str
    """File of the target, relative to the corpus root (POSIX)."""
    name: str
    kind: str
    start_line: int
    """The target's first line (1-based): a hit is a chunk of ``path`` covering it."""
    end_line: int

    @property
    def id(self) -> str:
        """Stable identity across runs: corpus, path and line."""
        return f"{self.corpus}:{self.path}:{self.start_line}"


@dataclass(slots=True)
class PairSet:
    """The pairs of a corpus, its blanked files, and how many candidates each filter dropped."""

    pairs: list[Pair] = field(default_factory=list)
    blanked: dict[str, bytes] = field(default_factory=dict)
    dropped: Counter[str] = field(default_factory=Counter)
    documented_units: int = 0
    blanked_comments: int = 0
    broken_files: list[str] = field(default_factory=list)
    """Files whose syntax the blanking broke (should stay empty)."""


def blank_source(data: bytes, ranges: Sequence[tuple[int, int, str]]) -> bytes:
    """``data`` with each range emptied but its line breaks kept.

    A comment keeps only its newlines; a docstring becomes an empty string literal
    spanning as many lines (``""`` or ``\"\"\"`` + newlines + ``\"\"\"``) so the code still parses.
    """
    out: list[bytes] = []
    cursor = 0
    for start, end, kind in sorted(ranges):
        if start < cursor:
            raise ValueError(f"overlapping doc ranges at byte {start}")
        out.append(data[cursor:start])
        newlines = data.count(b"\n", start, end)
        if kind == "docstring":
            out.append(b'""' if newlines == 0 else b'"""' + b"\n" * newlines + b'"""')
        else:
            out.append(b"\n" * newlines)
        cursor = end
    out.append(data[cursor:])
    return b"".join(out)


def _drop_reason(path: str, unit: Unit, query: str) -> str | None:
    """Why a documented unit makes no pair (None when it does)."""
    checks = (
        ("test", unit.test or bool(_TEST_PATH.search(path))),
        ("constructor", unit.constructor),
        ("dunder", bool(_DUNDER.fullmatch(unit.name))),
        ("short_unit", unit.end_line - unit.start_line + 1 < MIN_UNIT_LINES),
        ("boilerplate", is_boilerplate(query)),
        ("short_query", word_count(query) < MIN_QUERY_WORDS),
    )
    return next((reason for reason, failed in checks if failed), None)


def _normalized(query: str) -> str:
    return re.sub(r"\W+", " ", query.lower()).strip()


def extract_pairs(corpus: str, files: Mapping[str, bytes], languages: Mapping[str, str]) -> PairSet:
    """Pairs and blanked files of a corpus; ``languages`` maps each path to its language.

    Files in a language without doc-comment rules are kept as they are and give no pairs.
    """
    result = PairSet()
    documented: list[tuple[str, Unit, str]] = []
    for path, data in sorted(files.items()):
        language = languages.get(path, "")
        if language not in LANGUAGES:
            result.blanked[path] = data
            continue
        scan = scan_source(language, data)
        blanked = blank_source(data, scan.doc_ranges)
        if parse_errors(language, blanked) and not parse_errors(language, data):
            result.broken_files.append(path)
        result.blanked[path] = blanked
        result.blanked_comments += len(scan.doc_ranges)
        documented += [(path, unit, first_sentence(unit.doc)) for unit in scan.units]
    result.documented_units = len(documented)
    seen = Counter(_normalized(query) for _, _, query in documented)
    for path, unit, query in documented:
        reason = _drop_reason(path, unit, query)
        if reason is None and seen[_normalized(query)] > 1:
            reason = "duplicate_doc"
        if reason:
            result.dropped[reason] += 1
        else:
            result.pairs.append(
                Pair(corpus, query, path, unit.name, unit.kind, unit.start_line, unit.end_line)
            )
    return result


def sample_pairs(pairs: Sequence[Pair], limit: int | None, seed: int = 0) -> list[Pair]:
    """At most ``limit`` pairs drawn at random with ``seed`` (all when ``limit`` is None), in id order."""
    chosen = list(pairs)
    if limit is not None and len(chosen) > limit:
        chosen = random.Random(seed).sample(chosen, limit)
    return sorted(chosen, key=lambda p: (p.path, p.start_line))
