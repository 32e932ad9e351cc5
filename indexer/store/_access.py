"""How one process uses the store: where its object store is, whether it may write, how
fresh its reads must be, and how long old table versions stay for readers.

A local folder needs none of it (the defaults are today's: writable, every read sees the
newest commit). An index on object storage (``s3://bucket/prefix``) is opened with the
same storage options by every path that reads or writes it: LanceDB's connection, the
pylance readers of the searches, the maintenance children (``_lance._jobs``, which get
them on stdin, never on their command line) and the migrations.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from indexer.errors import ReadOnlyError

__all__ = ["StoreAccess", "open_dataset", "refuse_writes"]


@dataclass(frozen=True, slots=True)
class StoreAccess:
    """What a process may do with the store, and how it reaches it."""

    storage_options: tuple[tuple[str, str], ...] = ()
    """Object-store options (endpoint, region, keys, ``allow_http``…); none for a folder."""
    read_only: bool = False
    """Never write: no table created, no migration, every write refused (``ReadOnlyError``)."""
    read_consistency: float = 0.0
    """Seconds a read may still use a table version after a newer one was committed (0:
    every read asks for the newest version first)."""
    keep_versions: float = 3600.0
    """Seconds a table version stays after a newer one replaced it (pruning waits that long)."""

    def lance_options(self) -> dict[str, str] | None:
        """The storage options as Lance and LanceDB take them (None: none)."""
        return dict(self.storage_options) or None


def open_dataset(uri: str, access: StoreAccess, version: int | None = None) -> Any:
    """A table opened by pylance (as of ``version``, or its newest)."""
    os.environ.setdefault("LANCE_LOG", "error")
    import lance

    return lance.dataset(uri, version=version, storage_options=access.lance_options())


class _RefusingLock:
    """Stands in for the store's write lock in a read-only process: every write takes it
    first, so every write is refused before it touches a table."""

    def __init__(self, where: Path | str) -> None:
        self.where = where

    def __enter__(self) -> None:
        raise ReadOnlyError(
            f"this process opened the index {self.where} read-only (a reader, such as "
            "`lode serve --read-only`): writes go through the index's writer (`lode serve`, "
            "`lode index` or `lode watch` on the same --db)"
        )

    def __exit__(self, *exc: object) -> None:
        return None


def refuse_writes(where: Path | str, read_only: bool) -> Any:
    """The store's write lock: a re-entrant lock, or one that refuses every write."""
    return _RefusingLock(where) if read_only else threading.RLock()
