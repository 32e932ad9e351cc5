"""Storage health: telling a damaged or unwritable index from a bug, and remembering it.

A read or write that fails inside the storage libraries (Lance, LanceDB, Arrow: a data file
cut short, an index that panics, a folder turned read-only, a full disk) is a *storage
failure*: the index, not the request, is at fault. ``StorageHealth`` keeps the last one
until something proves the store sound again (a task that writes, a check that passes),
so ``/health`` answers ``degraded`` with the reason instead of ``ok`` beside a broken index.
"""

from __future__ import annotations

import errno
import threading
import time
from dataclasses import dataclass

__all__ = ["StorageFailure", "StorageHealth", "describe_storage_failure", "is_storage_failure"]

_STORAGE_MODULES = ("lance", "lancedb", "pyarrow")
_STORAGE_WORDS = ("lanceerror", "lance error", "arrow error", "object store", "io error")
#: What an operating-system error means for the index.
_OS_REASONS = {
    errno.EROFS: "the index folder is read-only",
    errno.EACCES: "the index folder is not writable",
    errno.EPERM: "the index folder is not writable",
    errno.ENOSPC: "the disk holding the index is full",
    errno.EDQUOT: "the disk quota of the index folder is used up",
    errno.EIO: "the disk holding the index failed to read or write",
}


def is_storage_failure(exc: BaseException) -> bool:
    """True when ``exc`` came from the storage libraries or the file system (not a bug of
    lode, not a bad request): a Lance/LanceDB/Arrow error, a Rust panic, an ``OSError``."""
    if isinstance(exc, KeyboardInterrupt | SystemExit | GeneratorExit):
        return False
    if isinstance(exc, OSError):
        return True
    for cls in type(exc).__mro__:
        if cls.__module__.split(".")[0] in _STORAGE_MODULES or cls.__name__ == "PanicException":
            return True
    text = str(exc).lower()
    return isinstance(exc, RuntimeError | ValueError) and any(w in text for w in _STORAGE_WORDS)


def describe_storage_failure(exc: BaseException) -> str:
    """One sentence for a storage failure (what it means, then the library's words)."""
    what = _OS_REASONS.get(getattr(exc, "errno", None) or -1, "the index cannot be read or written")
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if len(detail) > 300:
        detail = detail[:300] + "…"
    return f"{what} ({type(exc).__name__}: {detail}); run `lode check` to see what is damaged"


@dataclass(frozen=True, slots=True)
class StorageFailure:
    """The last storage failure seen."""

    where: str
    """What was being done (``search``, ``index task``, ``prewarm``…)."""
    message: str
    """``describe_storage_failure`` of it."""
    at: float
    """When (``time.time()``)."""


class StorageHealth:
    """The last storage failure, until the store proves sound again; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failure: StorageFailure | None = None

    def failed(self, where: str, exc: BaseException | str) -> None:
        """Remember a storage failure met while doing ``where`` (an exception, or its
        description when another process met it)."""
        message = exc if isinstance(exc, str) else describe_storage_failure(exc)
        failure = StorageFailure(where, message, time.time())
        with self._lock:
            self._failure = failure

    def recovered(self) -> None:
        """Forget the failure: the store was read or written whole since."""
        with self._lock:
            self._failure = None

    @property
    def failure(self) -> StorageFailure | None:
        """The failure still standing, if any."""
        with self._lock:
            return self._failure
