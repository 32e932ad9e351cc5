"""Pruning the table versions newer ones replaced, once no reader may read them.

Every commit makes a new version of its table, and the files only older versions refer
to stay on disk until those versions are pruned: a vector write of phase 2 rewrites its
rows (and marks the old ones deleted), a compaction rewrites whole fragments. A
version is pruned once a newer one has existed for ``access.keep_versions`` seconds (a
minute for a local folder, an hour on object storage: see ``keep_versions_for``). The
writer prunes after each optimize, between the writes of a long phase 2 and when idle
(``prune_if_due``); a process that ends leaves a job to prune what it replaced last
(``prune_later``), so the folder settles a minute after a run, not at the next one.

``disk_usage`` weighs the folder against what its newest versions hold: the live rows
(text, vectors, metadata, as Arrow bytes) and the files of their indexes.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from indexer.config import is_object_store
from indexer.errors import StoreError
from indexer.memory import child_env
from indexer.store._lance import _jobs
from indexer.store._lance._db import Db
from indexer.store._schema import CHUNKS, SEARCHED_TABLES, UPKEPT_TABLES

__all__ = ["LEAVE_JOB_SECONDS", "PRUNE_AT_MOST_EVERY_SECONDS", "PRUNE_EVERY_SECONDS", "DiskUsage", "Versions"]

log = logging.getLogger(__name__)

#: ``prune_if_due`` looks for versions to prune every sixth of the keep window (10 s for a
#: local folder's minute), but at least every this many seconds…
PRUNE_EVERY_SECONDS = 600.0
#: …and at most this often. Listing the versions reads every kept manifest: on object
#: storage (an hour kept) that is a request per version, so it asks every 10 minutes there.
PRUNE_AT_MOST_EVERY_SECONDS = 1.0
#: ``prune_later`` leaves a job only for a keep window this short or shorter.
LEAVE_JOB_SECONDS = 600.0
#: The tables whose versions are pruned.
_PRUNED = (*SEARCHED_TABLES, *UPKEPT_TABLES)


@dataclass(frozen=True, slots=True)
class DiskUsage:
    """The size of a local index folder and of what it holds."""

    on_disk: int
    """Bytes of every file in the index folder."""
    held: int
    """Bytes the newest version of every table holds: its live rows as Arrow data, and the
    files of its current indexes."""
    versions: int
    """Table versions on disk, over all tables."""
    chunks: int
    """Rows of the chunk table."""

    @property
    def ratio(self) -> float:
        """``on_disk`` over ``held`` (1.0 for an empty store)."""
        return self.on_disk / self.held if self.held else 1.0


def _folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def _held_bytes(dataset: Any, folder: Path) -> int:
    """Live rows (streamed, batch by batch) plus the current index files of one table."""
    rows = sum(batch.nbytes for batch in dataset.to_batches(batch_size=8192))
    indexes = {str(segment.uuid) for index in dataset.describe_indices() for segment in index.segments}
    index_files = sum(_folder_bytes(folder / "_indices" / uuid) for uuid in indexes)
    return int(rows) + index_files


class Versions:
    """Prunes replaced table versions (``prune``, ``prune_if_due``, ``prune_later``)."""

    def __init__(self, db: Db) -> None:
        self._db = db
        #: The tables' newest versions when a prune last left each with only that one (None:
        #: replaced versions may wait).
        self.pruned: dict[str, int] | None = None
        #: When ``prune_if_due`` last looked (``time.monotonic()``).
        self._last_look = 0.0

    def prune(self, keep: timedelta = timedelta(hours=1)) -> int:
        """Delete the files of the table versions that a newer one replaced more than
        ``keep`` ago (no compaction); bytes freed. A version is judged by when it stopped
        being the newest, not by its own age: a reader may have pinned the version that was
        current a moment ago however old it is, and keeps reading it for up to its
        consistency window (or a paging client for as long as its continuation token)."""
        freed = 0
        left: dict[str, int] = {}
        with self._db.write_lock:
            for name in _PRUNED:
                if name in self._db.tables:
                    dataset = self._db.own_dataset(name)
                    bytes_freed, versions = _jobs.prune_replaced_versions(dataset, keep.total_seconds())
                    freed += bytes_freed
                    left[name] = versions
            self.pruned = self._newest_versions() if all(n == 1 for n in left.values()) else None
        return freed

    def _newest_versions(self) -> dict[str, int]:
        return {name: int(self._db.table(name).version) for name in _PRUNED if name in self._db.tables}

    def interval(self) -> float:
        """Seconds between two looks of ``prune_if_due``: a sixth of the keep window, within
        [``PRUNE_AT_MOST_EVERY_SECONDS``, ``PRUNE_EVERY_SECONDS``]."""
        return min(max(self._db.access.keep_versions / 6, PRUNE_AT_MOST_EVERY_SECONDS), PRUNE_EVERY_SECONDS)

    def prune_if_due(self) -> int:
        """``prune`` with the store's keep window, when a table has versions a prune may
        have left or a write made since, at most every ``interval()`` seconds; bytes freed
        (0 when not due)."""
        if time.monotonic() - self._last_look < self.interval():
            return 0
        self._last_look = time.monotonic()
        if self.pruned is not None and self.pruned == self._newest_versions():
            return 0
        return self.prune(timedelta(seconds=self._db.access.keep_versions))

    def prune_later(self) -> bool:
        """Before this process ends: leave a job (a process of its own, outliving this one)
        that prunes, once the keep window has passed, the versions replaced by now; True
        when it was started. Only for a local folder with versions waiting and a window of
        at most ``LEAVE_JOB_SECONDS``: on object storage (an hour), or with a longer window
        set, the next writer prunes them (no job left sleeping for an hour after each run)."""
        db = self._db
        if db.access.read_only or is_object_store(db.path):
            return False
        if db.access.keep_versions > LEAVE_JOB_SECONDS:
            return False
        if self.pruned is not None and self.pruned == self._newest_versions():
            return False
        uris = [str(db.table(name).uri) for name in _PRUNED if name in db.tables]
        try:
            # the job forks itself off and this call returns at once (``_jobs._detach``)
            args = json.dumps([uris, db.access.keep_versions])
            subprocess.run(
                [sys.executable, _jobs.__file__, "prune_tables", args],
                env=child_env(),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=True,
                timeout=30,
            )
        except (OSError, subprocess.SubprocessError):
            log.warning("could not leave a job pruning old versions (the next run will)", exc_info=True)
            return False
        return True

    def disk_usage(self) -> DiskUsage:
        """The index folder's size on disk against what its newest versions hold (a local
        folder only: an object store has no folder to walk)."""
        folder = Path(str(self._db.path))
        if not folder.is_dir():
            raise StoreError(f"disk usage is measured on a local index folder, not {self._db.path}")
        held = versions = 0
        for name in sorted(self._db.tables):
            dataset = self._db.own_dataset(name)
            held += _held_bytes(dataset, Path(str(self._db.table(name).uri)))
            versions += len(dataset.versions())
        chunks = int(self._db.own_dataset(CHUNKS).count_rows())
        return DiskUsage(_folder_bytes(folder), held, versions, chunks)
