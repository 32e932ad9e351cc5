"""Running the maintenance jobs of ``_jobs`` in a child process, or in this one for a small
store (see ``_jobs`` for why a big store's maintenance runs in children)."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from indexer.errors import StoreError
from indexer.memory import child_env
from indexer.storage_failure import log_failure, storage_cause, storage_error
from indexer.store._lance import _jobs
from indexer.store._lance._db import Db
from indexer.store._schema import CHUNKS

__all__ = [
    "CHILD_MIN_ROWS",
    "JOB_FAILURES",
    "OPTIMIZE_TIMEOUT",
    "VECTOR_INDEX_TIMEOUT",
    "JobInterruptedError",
    "in_process",
    "job_ran",
    "run_job",
]

log = logging.getLogger(__name__)

#: Stores with fewer chunks than this fold and optimize in this process, bigger ones in a
#: child process.
CHILD_MIN_ROWS = 20_000
#: A fold, merge or optimize still running after this long is killed (its table stays as it was).
OPTIMIZE_TIMEOUT = 600.0
#: A vector index build still running after this long is killed (1M chunks take minutes).
VECTOR_INDEX_TIMEOUT = 3600.0
#: What a failed job raises (here or in a child).
JOB_FAILURES = (StoreError, OSError, RuntimeError, ValueError, subprocess.SubprocessError)
#: How often a child job's parent checks whether to interrupt it.
_INTERRUPT_POLL_SECONDS = 0.05


class JobInterruptedError(StoreError):
    """A child job was killed because a save waits (its table stays as it was: a job
    commits at its end, as one that runs out of time)."""


def in_process(db: Db) -> bool:
    """Whether index and table maintenance runs in this process: for a chunk table under
    ``CHILD_MIN_ROWS`` rows it takes a fraction of what a child process needs to start."""
    return int(db.table(CHUNKS).count_rows()) < CHILD_MIN_ROWS


def run_job(
    job: str,
    args: list[Any],
    options: dict[str, str] | None,
    here: bool,
    what: str,
    timeout: float = OPTIMIZE_TIMEOUT,
    interrupt: Callable[[], bool] | None = None,
) -> None:
    """Run a job of ``_jobs`` here or in a child (its storage options on its stdin); a
    child is killed once ``interrupt()`` says so (``JobInterruptedError``)."""
    if here:
        getattr(_jobs, job)(*args, options=options)
        return
    child = subprocess.Popen(
        [sys.executable, _jobs.__file__, job, json.dumps(args)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(),
        text=True,
    )
    deadline = time.monotonic() + timeout
    given: str | None = json.dumps(options or {})
    while True:
        try:
            _, stderr = child.communicate(given, timeout=_INTERRUPT_POLL_SECONDS)
            break
        except subprocess.TimeoutExpired:
            given = None  # sent once: a retry goes on where the first call left it
            if interrupt is not None and interrupt():
                child.kill()
                child.communicate()
                raise JobInterruptedError(f"{what}: interrupted for a save") from None
            if time.monotonic() >= deadline:
                child.kill()
                child.communicate()
                raise
    if child.returncode != 0:
        if storage_cause(stderr).waits:  # a full disk, refused credentials… (one line)
            raise storage_error(stderr)
        raise StoreError(f"{what} failed: {stderr.strip()[-2000:]}")


def job_ran(
    db: Db,
    job: str,
    args: list[Any],
    here: bool,
    what: str,
    failed: str,
    timeout: float = OPTIMIZE_TIMEOUT,
    interrupt: Callable[[], bool] | None = None,
) -> bool:
    """``run_job`` with the store's storage options; False when the job failed, which is
    logged as ``failed`` (the caller then does the work another way). An interrupted job
    raises ``JobInterruptedError``: its work is left for later, not done another way."""
    try:
        run_job(job, args, db.access.lance_options(), here, what, timeout, interrupt)
    except JobInterruptedError:
        raise
    except JOB_FAILURES as exc:
        log_failure(log, failed, exc)
        return False
    return True
