"""Index and table maintenance through pylance, run in this process or as a child process.

A child runs this file as a script (``python _jobs.py JOB JSON-ARGS``), so it
imports Lance (and LanceDB for ``optimize_small_table``), not lode: a big store's
maintenance would otherwise run on the Lance runtime the searches use and fill its CPU
pool for seconds (and leave the writer the memory it took), where a child is scheduled
by the OS at the niceness of the thread that starts it (the server's writer). The storage
options of an index on object storage come on its stdin (a JSON object), never on its
command line, where every user of the machine could read the keys.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

__all__ = [
    "compact_small_fragments",
    "create_vector_index",
    "is_vector_index",
    "merge_segments",
    "optimize_indices",
    "optimize_small_table",
    "optimize_table",
    "prune_replaced_versions",
    "prune_tables",
]


#: Rows a compaction reads and writes at a time: fewer than Lance's default lowers the
#: peak memory of rewriting a big fragment at no cost in time.
COMPACT_BATCH_ROWS = 1024


def _dataset(uri: str, options: dict[str, str] | None) -> Any:
    os.environ.setdefault("LANCE_LOG", "error")
    import lance

    return lance.dataset(uri, storage_options=options or None)


def is_vector_index(index_type: str) -> bool:
    """Whether a Lance index type (``IVF_SQ``, ``IvfFlat``, ``Inverted``…) is a vector index."""
    return any(kind in index_type.upper() for kind in ("IVF", "HNSW", "PQ"))


def optimize_indices(uri: str, names: list[str], merge: int, options: dict[str, str] | None = None) -> None:
    """Lance ``optimize_indices`` of ``names`` on table ``uri`` (``merge``: how many of
    their newest segments to merge; 0 adds the rows they miss as a new segment)."""
    _dataset(uri, options).optimize.optimize_indices(num_indices_to_merge=merge, index_names=names)


def merge_segments(uri: str, split_only: bool, options: dict[str, str] | None = None) -> None:
    """Merge the segments of each scalar and full-text index of table ``uri`` into one,
    folding in the rows they miss (with ``split_only``, only indexes of several segments)."""
    dataset = _dataset(uri, options)
    segments = {
        index.name: len(index.segments)
        for index in dataset.describe_indices()
        if not is_vector_index(index.index_type) and (len(index.segments) > 1 or not split_only)
    }
    if segments:
        merge = max(segments.values())
        dataset.optimize.optimize_indices(index_names=list(segments), num_indices_to_merge=merge)


def optimize_table(uri: str, target_rows: int, options: dict[str, str] | None = None) -> None:
    """Compact table ``uri`` and bring every index up to date.

    Compaction comes first: it merges fragments under ``target_rows`` rows that the same
    index segments cover (bigger ones stay as they are) and rewrites only the segments
    covering them; merging the segments first would make it rewrite every index of the
    table. Then each scalar and full-text
    index is merged into one segment covering every row (so the next compaction can merge
    what this one could not), and the vector index takes the new rows in its partitions.
    """
    _dataset(uri, options).optimize.compact_files(
        target_rows_per_fragment=target_rows, batch_size=COMPACT_BATCH_ROWS
    )
    merge_segments(uri, split_only=False, options=options)
    dataset = _dataset(uri, options)
    vector = [index.name for index in dataset.describe_indices() if is_vector_index(index.index_type)]
    if vector:
        dataset.optimize.optimize_indices(index_names=vector)


def compact_small_fragments(uri: str, target_rows: int, options: dict[str, str] | None = None) -> None:
    """Merge the fragments of table ``uri`` under ``target_rows`` rows (deleted rows stay
    where they are: materializing them would rewrite the big fragments they sit in). Lance
    remaps only the index segments covering the merged fragments."""
    _dataset(uri, options).optimize.compact_files(
        target_rows_per_fragment=target_rows, materialize_deletions=False, batch_size=COMPACT_BATCH_ROWS
    )


def optimize_small_table(db_uri: str, name: str, options: dict[str, str] | None = None) -> None:
    """LanceDB's optimize of table ``name`` of the database at ``db_uri`` (a table of small
    fragments only: see ``Maintenance._optimize_searched_table``), versions kept
    (lode prunes them), then the split index segments merged."""
    os.environ.setdefault("LANCEDB_LOG", "error")
    from datetime import timedelta

    import lancedb

    table = lancedb.connect(db_uri, storage_options=options or None).open_table(name)
    table.optimize(cleanup_older_than=timedelta(days=3650))
    merge_segments(table.uri, split_only=True, options=options)


def create_vector_index(
    uri: str, column: str, partition_rows: int, options: dict[str, str] | None = None
) -> None:
    """Build (or rebuild) the IVF_SQ cosine index of ``column`` on table ``uri`` with about
    ``partition_rows`` rows per partition: the index LanceDB's ``IvfSq`` config builds
    (same kind, name and recorded parameters)."""
    _dataset(uri, options).create_index(
        column, index_type="IVF_SQ", metric="cosine", replace=True, target_partition_size=partition_rows
    )


def prune_replaced_versions(dataset: Any, keep_seconds: float) -> tuple[int, int]:
    """Delete the versions of a pylance ``dataset`` that a newer version replaced more than
    ``keep_seconds`` ago (never the newest); (bytes freed, versions left)."""
    history = sorted(dataset.versions(), key=lambda v: int(v["version"]))
    cutoff = time.time() - keep_seconds
    doomed = [
        int(old["version"])
        for old, new in itertools.pairwise(history)
        if float(new["timestamp"].timestamp()) <= cutoff
    ]
    if not doomed:
        return 0, len(history)
    stats = dataset.cleanup_old_versions(versions=doomed, error_if_tagged_old_versions=False)
    return int(getattr(stats, "bytes_removed", 0) or 0), len(history) - len(doomed)


def prune_tables(uris: list[str], keep_seconds: float, options: dict[str, str] | None = None) -> None:
    """Wait until the versions of tables ``uris`` replaced by now are ``keep_seconds`` old,
    then prune them (the versions replaced later stay): a writer that ends (``lode index``)
    leaves this job behind, so its folder settles once the readers' window has passed."""
    time.sleep(keep_seconds + 1.0)
    for uri in uris:
        try:
            prune_replaced_versions(_dataset(uri, options), keep_seconds)
        except (OSError, RuntimeError, ValueError):  # gone, or pruned by the next writer meanwhile
            continue


_JOBS: dict[str, Callable[..., None]] = {
    "compact_small_fragments": compact_small_fragments,
    "create_vector_index": create_vector_index,
    "merge_segments": merge_segments,
    "optimize_indices": optimize_indices,
    "optimize_small_table": optimize_small_table,
    "optimize_table": optimize_table,
    "prune_tables": prune_tables,
}
#: Jobs that outlive the process that starts them: they commit nothing (a prune deletes
#: only files of versions no reader may read any more), so a next writer is safe beside them.
DETACHED = frozenset({"prune_tables"})


def _end_with_parent() -> None:
    """Be killed when the process that started this job ends (Linux): a stopping lode
    leaves at once, and its job must not commit later beside the next writer. A job cut
    short leaves the table as it was (Lance commits atomically)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    parent = os.getppid()
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # it ended before the call took effect
        os._exit(1)


def _detach() -> None:
    """Go on in a child of a session of its own and let the starter's call return at once
    (the starter ends soon, and must not wait for this job nor leave a zombie)."""
    if os.fork() > 0:
        os._exit(0)
    os.setsid()


def main(argv: list[str], options: str = "") -> None:
    """Run one job: ``argv`` is [job name, JSON list of its arguments]; ``options`` the
    storage options as a JSON object (empty: none)."""
    job, args = argv
    if job in DETACHED:
        _detach()
    else:
        _end_with_parent()
    _JOBS[job](*json.loads(args), options=json.loads(options) if options.strip() else None)


if __name__ == "__main__":
    main(sys.argv[1:], sys.stdin.read())
