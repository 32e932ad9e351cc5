"""Loaded only by the fault-injection test's subprocesses (via PYTHONPATH).

Every LanceDB/Lance commit (a table created, rows added, merged, updated or deleted, an
index created, optimized or compacted) is counted; with ``LODE_TEST_KILL_AFTER=N`` the
process SIGKILLs itself right after the N-th commit, so a test can stop a run at each
write boundary. With ``LODE_TEST_ENOSPC_AT=N`` the disk is full from the N-th commit on:
it and every later one raise what Lance raises then, and nothing is written.
``LODE_TEST_COMMITS_FILE`` receives the count of a run that was not killed.
The model is replaced by the deterministic fake embedder (the model is not the point).
The variables are read when they are used, so a run forked from a process that loaded this
module earlier (``forkserver.py``) takes its own.
"""

import atexit
import functools
import os
import signal

import lancedb.db
import lancedb.merge
import lancedb.table
from lance.dataset import DatasetOptimizer

import indexer._index_access
from indexer.embed import FakeEmbedder

#: Lance's words for a full disk (as a real run on a full tmpfs printed them).
_ENOSPC = "lance error: LanceError(IO): No space left on device (os error 28), lance-file/src/writer.rs:191:9"
_state = {"commits": 0}


def _setting(name):  # type: ignore[no-untyped-def]
    return int(os.environ.get(name, "0"))


def _counted(func):  # type: ignore[no-untyped-def]
    @functools.wraps(func)
    def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
        enospc_at = _setting("LODE_TEST_ENOSPC_AT")
        if enospc_at and _state["commits"] + 1 >= enospc_at:
            raise RuntimeError(_ENOSPC)
        result = func(*args, **kwargs)
        _state["commits"] += 1
        if _state["commits"] == _setting("LODE_TEST_KILL_AFTER"):
            os.kill(os.getpid(), signal.SIGKILL)
        return result

    return wrapper


for _cls, _names in (
    (
        lancedb.table.LanceTable,
        (
            "add",
            "delete",
            "update",
            "create_index",
            "create_fts_index",
            "create_scalar_index",
            "optimize",
            "compact_files",
            "add_columns",
        ),
    ),
    (lancedb.merge.LanceMergeInsertBuilder, ("execute",)),
    (lancedb.db.LanceDBConnection, ("create_table",)),
    (DatasetOptimizer, ("compact_files", "optimize_indices")),
):
    for _name in _names:
        if hasattr(_cls, _name):
            setattr(_cls, _name, _counted(getattr(_cls, _name)))

indexer._index_access.load_embedder = lambda *a, **k: FakeEmbedder()  # type: ignore[assignment]


@atexit.register
def _report() -> None:
    count_file = os.environ.get("LODE_TEST_COMMITS_FILE")
    if count_file:
        with open(count_file, "w") as out:
            out.write(str(_state["commits"]))
