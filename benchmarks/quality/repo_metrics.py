"""Per-query figures of the whole-repository benchmark, from what a search returned.

A query's answer is recorded as an ``Answer``: the chunks of the chunk-granularity page
in the order the API returns them (groups in order, each group's chunks in order), the
files of a deeper page of the same chunk ranking in the order of their best chunk, and
the files of the document-granularity page. From it, per query (``K`` = 10):

* ``chunk_mrr``: 1 / rank of the first hit chunk among the first ``K`` chunks in API
  order (a hit covers a target's line; for a file target, any chunk of the file);
* ``file_mrr``: 1 / rank of the first target file among the first ``K`` files of the
  document-granularity answer;
* ``best_file_mrr``: the same over files ordered by their best chunk in the chunk ranking;
* ``acc@5``: 1 when every target file is among the first 5 files (document granularity);
* ``any@5``: 1 when at least one is;
* ``nonimpl@5``: the share of the first 5 files (document granularity) that the role
  rules do not call implementation;
* ``nonimpl_chunks@5``: the share of the first 5 chunks in API order from such files.

The BM25 baseline ranks files only: it has the file figures (``file_mrr``, ``acc@5``,
``any@5``, ``nonimpl@5``), not the chunk ones.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from benchmarks.quality.metrics import first_hit_rank
from benchmarks.quality.repo_sets import Query

__all__ = [
    "CHUNK_METRICS",
    "FILE_METRICS",
    "REPO_METRICS",
    "TOP",
    "Answer",
    "ChunkRef",
    "K",
    "file_values",
    "query_values",
]

K = 10
TOP = 5
#: Figures every lode mode has, in table order.
REPO_METRICS = (
    "chunk_mrr",
    "file_mrr",
    "best_file_mrr",
    "acc@5",
    "any@5",
    "nonimpl@5",
    "nonimpl_chunks@5",
)
#: Figures of the chunk ranking only (the BM25 baseline has none).
CHUNK_METRICS = ("chunk_mrr", "best_file_mrr", "nonimpl_chunks@5")
#: Figures of a file ranking (the BM25 baseline has these).
FILE_METRICS = ("file_mrr", "acc@5", "any@5", "nonimpl@5")


@dataclass(frozen=True, slots=True)
class ChunkRef:
    """A returned chunk: its file and lines."""

    path: str
    start_line: int
    end_line: int


@dataclass(frozen=True, slots=True)
class Answer:
    """What lode returned for one query in one mode."""

    chunks: tuple[ChunkRef, ...]
    """The chunk page in API order."""
    best_files: tuple[str, ...]
    """Files in the order of their best chunk in the chunk ranking."""
    files: tuple[str, ...]
    """The document page in API order."""


def _covers(query: Query, chunk: ChunkRef) -> bool:
    return any(
        t.path == chunk.path and (t.line is None or chunk.start_line <= t.line <= chunk.end_line)
        for t in query.targets
    )


def _reciprocal(rank: int | None) -> float:
    return 1.0 / rank if rank else 0.0


def _share(items: Sequence[str], is_impl: Callable[[str], bool]) -> float:
    return sum(1 for path in items if not is_impl(path)) / len(items) if items else 0.0


def file_values(query: Query, files: Sequence[str], is_impl: Callable[[str], bool]) -> dict[str, float]:
    """The file figures of a file ranking (best first)."""
    targets = query.paths
    top = list(files[:TOP])
    return {
        "file_mrr": _reciprocal(first_hit_rank([f in targets for f in files], K)),
        "acc@5": 1.0 if targets <= set(top) else 0.0,
        "any@5": 1.0 if targets & set(top) else 0.0,
        "nonimpl@5": _share(top, is_impl),
    }


def query_values(query: Query, answer: Answer, is_impl: Callable[[str], bool]) -> dict[str, float]:
    """Every figure of ``REPO_METRICS`` for one query's answer."""
    values = file_values(query, answer.files, is_impl)
    values["chunk_mrr"] = _reciprocal(first_hit_rank([_covers(query, c) for c in answer.chunks], K))
    values["best_file_mrr"] = _reciprocal(first_hit_rank([f in query.paths for f in answer.best_files], K))
    values["nonimpl_chunks@5"] = _share([c.path for c in answer.chunks[:TOP]], is_impl)
    return {name: values[name] for name in REPO_METRICS}
