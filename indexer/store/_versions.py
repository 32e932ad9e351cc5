"""Pruning the table versions newer ones replaced, once no reader may read them.

Every commit makes a new version of its table, and the files only older versions refer
to stay on disk until those versions are pruned: a vector write of phase 2 rewrites its
rows (and marks the old ones deleted), a compaction rewrites whole fragments. A
version is pruned once a newer one has existed for ``access.keep_versions`` seconds (a
minute for a local folder, an hour on object storage: see ``keep_versions_for``). The
writer prunes after each optimize, between the writes of a long phase 2 and when idle
(``prune_if_due``); a process that ends leaves a job to prune what it replaced last
(``prune_later``), so the folder settles a minute after a run, not at the next one.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
from datetime import timedelta

from indexer.config import is_object_store
from indexer.memory import child_env
from indexer.store import _lance_jobs
from indexer.store._base import StoreBase
from indexer.store._schema import (
    CHUNKS,
    DOCUMENTS,
    EMBEDDING_CACHE,
    INTENTS,
    PROJECTS,
    SYMBOLS,
    TASKS,
    VOCABULARY,
)

__all__ = ["LEAVE_JOB_SECONDS", "PRUNE_AT_MOST_EVERY_SECONDS", "PRUNE_EVERY_SECONDS", "VersionsMixin"]

log = logging.getLogger(__name__)

#: ``prune_if_due`` looks for versions to prune every sixth of the keep window (10 s for a
#: local folder's minute), but at least every this many seconds…
PRUNE_EVERY_SECONDS = 600.0
#: …and at most this often. Listing the versions reads every kept manifest: on object
#: storage (an hour kept) that is a request per version, so it asks every 10 minutes there.
PRUNE_AT_MOST_EVERY_SECONDS = 1.0
#: ``prune_later`` leaves a job only for a keep window this short or shorter.
LEAVE_JOB_SECONDS = 600.0
#: The tables whose versions are pruned (``meta`` and ``file_errors`` change rarely).
_PRUNED = (CHUNKS, DOCUMENTS, EMBEDDING_CACHE, PROJECTS, TASKS, VOCABULARY, SYMBOLS, INTENTS)


class VersionsMixin(StoreBase):
    """Prunes replaced table versions (``prune_versions``, ``prune_if_due``, ``prune_later``)."""

    #: The tables' newest versions when a prune last left each with only that one (None:
    #: replaced versions may wait).
    _versions_pruned: dict[str, int] | None = None
    #: When ``prune_if_due`` last looked (``time.monotonic()``).
    _last_version_prune: float = 0.0

    def prune_versions(self, keep: timedelta = timedelta(hours=1)) -> int:
        """Delete the files of the table versions that a newer one replaced more than
        ``keep`` ago (no compaction); bytes freed. A version is judged by when it stopped
        being the newest, not by its own age: a reader may have pinned the version that was
        current a moment ago however old it is, and keeps reading it for up to its
        consistency window (or a paging client for as long as its continuation token)."""
        freed = 0
        left: dict[str, int] = {}
        with self._write_lock:
            for name in _PRUNED:
                if name in self._tables:
                    dataset = self._own_dataset(name)
                    bytes_freed, versions = _lance_jobs.prune_replaced_versions(dataset, keep.total_seconds())
                    freed += bytes_freed
                    left[name] = versions
            self._versions_pruned = self._newest_versions() if all(n == 1 for n in left.values()) else None
        return freed

    def _newest_versions(self) -> dict[str, int]:
        return {name: int(self._t(name).version) for name in _PRUNED if name in self._tables}

    def prune_interval(self) -> float:
        """Seconds between two looks of ``prune_if_due``: a sixth of the keep window, within
        [``PRUNE_AT_MOST_EVERY_SECONDS``, ``PRUNE_EVERY_SECONDS``]."""
        return min(max(self.access.keep_versions / 6, PRUNE_AT_MOST_EVERY_SECONDS), PRUNE_EVERY_SECONDS)

    def prune_if_due(self) -> int:
        """``prune_versions`` with the store's keep window, when a table has versions a
        prune may have left or a write made since, at most every ``prune_interval()``
        seconds; bytes freed (0 when not due)."""
        if time.monotonic() - self._last_version_prune < self.prune_interval():
            return 0
        self._last_version_prune = time.monotonic()
        if self._versions_pruned is not None and self._versions_pruned == self._newest_versions():
            return 0
        return self.prune_versions(timedelta(seconds=self.access.keep_versions))

    def prune_later(self) -> bool:
        """Before this process ends: leave a job (a process of its own, outliving this one)
        that prunes, once the keep window has passed, the versions replaced by now; True
        when it was started. Only for a local folder with versions waiting and a window of
        at most ``LEAVE_JOB_SECONDS``: on object storage (an hour), or with a longer window
        set, the next writer prunes them (no job left sleeping for an hour after each run)."""
        if self.access.read_only or is_object_store(self.path):
            return False
        if self.access.keep_versions > LEAVE_JOB_SECONDS:
            return False
        if self._versions_pruned is not None and self._versions_pruned == self._newest_versions():
            return False
        uris = [str(self._t(name).uri) for name in _PRUNED if name in self._tables]
        try:
            # the job forks itself off and this call returns at once (``_lance_jobs._detach``)
            args = json.dumps([uris, self.access.keep_versions])
            subprocess.run(
                [sys.executable, _lance_jobs.__file__, "prune_tables", args],
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
