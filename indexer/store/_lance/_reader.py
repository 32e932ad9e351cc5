"""Search reads through the Lance engine itself (pylance), each pinned to one table version.

lancedb 0.40 embeds Lance 13.0.0; pylance 13.0.0 is the same engine with a synchronous
Python API. A query through it is one call that releases the GIL, where lancedb's async
builder adds an event-loop hop and its own planning (figures: docs/performance.md).
Writes stay on lancedb; a reader
sees them at the next version it pins (``latest_version`` reads the newest manifest).

On object storage that read is a LIST request, so a reader with a consistency window
(``StoreAccess.read_consistency``) asks at most once per window and serves the version it
knows meanwhile: a commit reaches its searches at most that long after it landed.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from indexer.store._access import StoreAccess, open_dataset

__all__ = ["TableReader"]


class TableReader:
    """One table of the store opened read-only by pylance; safe to share between threads.

    ``at(version)`` is the table as of that version (queries on it see exactly the rows
    that version has, so row ids found in one query can be read by the next); checkouts
    share one session, so index pages cached by one version serve the next.
    """

    def __init__(self, uri: str, access: StoreAccess | None = None) -> None:
        self.uri = uri
        self.access = access or StoreAccess()
        self._lock = threading.Lock()
        self._newest: Any = None
        #: (newest version seen, when it was asked: ``time.monotonic()``).
        self._latest: tuple[int, float] | None = None

    def _open(self) -> Any:
        with self._lock:
            if self._newest is None:
                self._newest = open_dataset(self.uri, self.access)
            return self._newest

    def latest_version(self) -> int:
        """The newest committed version of the table (one small read of its manifest list),
        or, within the consistency window, the newest one seen when it was last asked."""
        window = self.access.read_consistency
        known = self._latest
        if window > 0 and known is not None and time.monotonic() - known[1] < window:
            return known[0]
        latest = int(self._open().latest_version)
        self._latest = (latest, time.monotonic())
        return latest

    def at(self, version: int | None = None) -> Any:
        """The table (a ``lance.LanceDataset``) as of ``version``, or as of its newest one."""
        newest = self._open()
        if version is None:
            version = self.latest_version()
        if int(newest.version) == version:
            return newest
        pinned = newest.checkout_version(version)
        with self._lock:
            if version > int(self._newest.version):
                self._newest = pinned
        return pinned
