"""Storage health: telling a damaged or unwritable index from a bug, and remembering it.

A read or write that fails inside the storage libraries (Lance, LanceDB, Arrow: a data file
cut short, an index that panics, a folder turned read-only, a full disk) is a *storage
failure* (``indexer.storage_failure`` tells its cause): the index, not the request, is at
fault. ``StorageHealth`` keeps the last one until something proves the store sound again
(a task that writes; for damage, also a check that passes), so ``/health`` answers
``degraded`` with the reason instead of ``ok`` beside a broken or unwritable index.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from indexer.storage_failure import describe_storage_failure, is_storage_failure, storage_cause

__all__ = ["StorageFailure", "StorageHealth", "describe_storage_failure", "is_storage_failure"]


@dataclass(frozen=True, slots=True)
class StorageFailure:
    """The last storage failure seen."""

    where: str
    """What was being done (``search``, ``index task``, ``prewarm``…)."""
    message: str
    """``describe_storage_failure`` of it."""
    at: float
    """When (``time.time()``)."""
    unwritable: bool = False
    """True when a write failed for a cause that waits for someone to act (a full disk,
    refused credentials: ``StorageCause.waits``): only a write that succeeds clears it."""


class StorageHealth:
    """The last storage failure, until the store proves sound again; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failure: StorageFailure | None = None

    def failed(self, where: str, exc: BaseException | str, writing: bool = False) -> None:
        """Remember a storage failure met while doing ``where`` (an exception, or its
        description when another process met it); ``writing``: it failed a write."""
        message = exc if isinstance(exc, str) else describe_storage_failure(exc)
        waits = not isinstance(exc, str) and storage_cause(exc).waits
        with self._lock:  # a write failed: so it stays while the same kind of failure goes on
            standing = self._failure is not None and self._failure.unwritable
            self._failure = StorageFailure(where, message, time.time(), waits and (writing or standing))

    def recovered(self) -> None:
        """Forget the failure: the store was written since."""
        with self._lock:
            self._failure = None

    def checked(self) -> None:
        """A check of the store passed (it read everything): forget the failure, unless a
        write failed for a cause a read cannot disprove (a full disk reads fine)."""
        with self._lock:
            if self._failure is not None and not self._failure.unwritable:
                self._failure = None

    @property
    def failure(self) -> StorageFailure | None:
        """The failure still standing, if any."""
        with self._lock:
            return self._failure
