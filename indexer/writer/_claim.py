"""One interface over the local lock and the object-storage lease."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from indexer.config import LodeConfig, is_object_store
from indexer.errors import LodeError, ReadOnlyError
from indexer.writer._info import WriterInfo
from indexer.writer._lease import WriterLease, current_lease_writer
from indexer.writer._lock import WriterLock, current_writer

__all__ = ["WriterClaim", "find_writer", "read_only_error", "writer_claim"]


class WriterClaim(Protocol):
    """This process's claim to be the writer of one index."""

    @property
    def held(self) -> bool:
        """True while the claim holds."""

    def acquire(self, command: str, url: str | None = None) -> WriterInfo:
        """Take the claim (``WriterBusyError`` naming the writer when another process holds it)."""

    def release(self) -> None:
        """Give the claim up."""


def writer_claim(config: LodeConfig) -> WriterClaim:
    """The claim a process makes to write ``config.db``: its lease on object storage, its
    lock in a local folder."""
    if is_object_store(config.db):
        storage = config.storage
        return WriterLease(str(config.db), storage.store_options, ttl=storage.writer_lease_seconds)
    return WriterLock(Path(config.db))


def find_writer(config: LodeConfig) -> WriterInfo | None:
    """The process writing ``config.db`` now, or None."""
    if is_object_store(config.db):
        return current_lease_writer(str(config.db), config.storage.store_options)
    return current_writer(Path(config.db))


def read_only_error(config: LodeConfig) -> ReadOnlyError:
    """The error a reader answers a write with, naming the writer (and where it answers)."""
    try:
        writer = find_writer(config)
    except (LodeError, OSError):  # the lease cannot be read: say what a writer is anyway
        writer = None
    now = f"; its writer now is {writer.describe()}" if writer is not None else ""
    return ReadOnlyError(
        f"this lode server only reads the index {config.db} (`lode serve --read-only`): send "
        f"writes to its writer, `lode serve`, `lode index` or `lode watch` with the same --db{now}"
    )
