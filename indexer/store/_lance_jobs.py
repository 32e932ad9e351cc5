"""Index and table maintenance through pylance, run in this process or as a child process.

A child runs this file as a script (``python _lance_jobs.py JOB JSON-ARGS``), so it
imports Lance only, not lode: a big store's maintenance would otherwise run on the Lance
runtime the searches use and fill its CPU pool for seconds, where a child is scheduled by
the OS at the niceness of the thread that starts it (the server's writer).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["optimize_indices", "optimize_table"]


def _dataset(uri: str) -> Any:
    os.environ.setdefault("LANCE_LOG", "error")
    import lance

    return lance.dataset(uri)


def _is_vector(index_type: str) -> bool:
    # ``_base.is_vector_index`` again: importing it would import lode into the child
    return any(kind in index_type.upper() for kind in ("IVF", "HNSW", "PQ"))


def optimize_indices(uri: str, names: list[str], merge: int) -> None:
    """Lance ``optimize_indices`` of ``names`` on table ``uri`` (``merge``: how many of
    their newest segments to merge; 0 adds the rows they miss as a new segment)."""
    _dataset(uri).optimize.optimize_indices(num_indices_to_merge=merge, index_names=names)


def optimize_table(uri: str, target_rows: int) -> None:
    """Compact table ``uri`` and bring every index up to date.

    Compaction comes first: it merges fragments under ``target_rows`` rows that the same
    index segments cover (bigger ones stay as they are) and rewrites only the segments
    covering them; merging the segments first would make it rewrite every index of the
    table (8.0 s of CPU instead of 3.7 s on 118k chunks). Then each scalar and full-text
    index is merged into one segment covering every row (so the next compaction can merge
    what this one could not), and the vector index takes the new rows in its partitions.
    """
    _dataset(uri).optimize.compact_files(target_rows_per_fragment=target_rows)
    dataset = _dataset(uri)
    vector: list[str] = []
    other: dict[str, int] = {}
    for index in dataset.describe_indices():
        if _is_vector(index.index_type):
            vector.append(index.name)
        else:
            other[index.name] = len(index.segments)
    if other:
        dataset.optimize.optimize_indices(index_names=list(other), num_indices_to_merge=max(other.values()))
    if vector:
        _dataset(uri).optimize.optimize_indices(index_names=vector)


_JOBS: dict[str, Callable[..., None]] = {
    "optimize_indices": optimize_indices,
    "optimize_table": optimize_table,
}


def main(argv: list[str]) -> None:
    """Run one job: ``argv`` is [job name, JSON list of its arguments]."""
    job, args = argv
    _JOBS[job](*json.loads(args))


if __name__ == "__main__":
    main(sys.argv[1:])
