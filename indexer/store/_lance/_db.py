"""What every table object of the store shares: the LanceDB connection and its tables, the
pylance readers searches pin, the write lock and write units, and short-lived answers."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from indexer.store._access import StoreAccess, open_dataset, refuse_writes
from indexer.store._lance._reader import TableReader
from indexer.store._rows import parts
from indexer.store._schema import CHUNKS, PROJECTS
from indexer.store._sql import and_all, in_list

__all__ = ["Changes", "Db", "TtlCache"]


class TtlCache:
    """A tiny thread-safe cache whose entries expire after ``ttl`` seconds."""

    def __init__(self, ttl: float) -> None:
        self.ttl = ttl
        self._items: dict[str, tuple[float, Any]] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> Any:
        """The live value for ``key``, or None."""
        with self._lock:
            item = self._items.get(key)
        if item is None or time.monotonic() - item[0] > self.ttl:
            return None
        return item[1]

    def put(self, key: str, value: Any) -> None:
        """Remember ``value`` for ``ttl`` seconds."""
        with self._lock:
            self._items[key] = (time.monotonic(), value)

    def clear(self) -> None:
        """Forget everything (after a write of this process)."""
        with self._lock:
            self._items.clear()


@dataclass(slots=True)
class Changes:
    """Rows written since the last optimize, which ``Maintenance`` folds in and optimizes by."""

    written: int = 0
    """Rows changed since the last optimize (drives ``maybe_optimize``)."""
    added: int = 0
    """Rows phase 1 added since the last optimize (new rows the scalar and full-text
    indexes miss until folded in)…"""
    rewritten: int = 0
    """…and rows phase 2 rewrote with their vectors (``Vectors.write``), new rows too."""
    folded: tuple[int, int] = (0, 0)
    """(``added``, ``rewritten``) when rows were last folded into the indexes."""
    last_optimize: float = field(default_factory=time.monotonic)


class Db:
    """One store's connection, tables, readers and write lock."""

    def __init__(
        self,
        path: Path | str,
        conn: Any,
        tables: dict[str, Any],
        model_id: str,
        dimension: int,
        access: StoreAccess | None = None,
        session: Any = None,
        vector_encoder: str = "float",
    ) -> None:
        self.path = path
        self.conn = conn
        #: The bounded caches of ``conn`` (``open_store`` gives them; None: LanceDB's own).
        self.session = session
        self.tables = tables
        self.model_id = model_id
        self.dimension = dimension
        #: The kind of vector this process makes of documents (``EmbedConfig.vector_encoder``):
        #: part of the embedding cache's key.
        self.vector_encoder = vector_encoder
        #: Where the store is and what this process may do with it.
        self.access = access or StoreAccess()
        #: Every write holds it; a read-only store's refuses them all (``ReadOnlyError``).
        self.write_lock: Any = refuse_writes(path, self.access.read_only)
        #: Held through writes that belong together (``write_unit``); taken for good by a
        #: process that stops (``hold_writes``).
        self._unit_lock = threading.RLock()
        #: This thread's depth of nested write units; set once a stop holds writes.
        self._unit_depth = threading.local()
        self._stopping = threading.Event()
        #: Short-lived answers for every search (project list, coverage); writes clear it.
        self.cache = TtlCache(ttl=1.0)
        self.changes = Changes()
        placeholder = np.zeros(dimension, dtype=np.float32)
        placeholder[0] = 1.0
        #: Stored in place of a vector not computed yet (``embedded = false`` rows).
        self.placeholder = placeholder
        #: pylance readers of the tables searches read (opened on first use).
        self._readers: dict[str, TableReader] = {}
        self.readers_lock = threading.Lock()
        #: (projects, chunks) table versions the cached answers were read at
        #: (``forget_if_changed``).
        self._cached_versions: tuple[int, int] | None = None

    def table(self, name: str) -> Any:
        """The LanceDB table ``name``."""
        return self.tables[name]

    @contextmanager
    def write_unit(self) -> Iterator[None]:
        """Writes that belong together (a file's chunks and its document, vectors and the
        documents they complete): a stopping process waits for them, never cuts them.
        Taken before ``write_lock``, never inside it."""
        self._unit_lock.acquire()
        depth = getattr(self._unit_depth, "n", 0)
        if depth == 0 and self._stopping.is_set():
            # a stop was asked for while this thread waited: it lets no unit begin (the
            # stopper may not hold the lock yet: a lock is not fair)
            self._unit_lock.release()
            threading.Event().wait()
        self._unit_depth.n = depth + 1
        try:
            yield
        finally:
            self._unit_depth.n = depth
            self._unit_lock.release()

    def hold_writes(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the write unit in progress, then let no other
        begin (for good: a process stopping while its writer still runs, e.g. inside the
        model, exits with every unit whole). True when no unit runs now. Single writes
        outside units (an optimize, an index build) are atomic commits: cut, they leave
        the tables as they were."""
        self._stopping.set()
        return self._unit_lock.acquire(timeout=timeout)

    def forget_if_changed(self) -> None:
        """Forget cached answers (project list, coverage) when the projects or chunk table
        has a newer version than when they were read: for a reader in another process than
        the writer, whose writes clear them only in its own process."""
        versions = (self.reader(PROJECTS).latest_version(), self.reader(CHUNKS).latest_version())
        if versions != self._cached_versions:
            self.cache.clear()
            self._cached_versions = versions

    def select(
        self, name: str, where: str | None = None, columns: list[str] | None = None, limit: int | None = None
    ) -> pa.Table:
        """The ``columns`` (all when None) of at most ``limit`` rows of table ``name`` that
        ``where`` admits (every row when None), read through LanceDB's query builder."""
        query = self.table(name).search()
        if where:
            query = query.where(where)
        if columns is not None:
            query = query.select(columns)
        return query.limit(limit).to_arrow()

    def select_in(
        self, name: str, column: str, values: Sequence[str], columns: list[str] | None = None, where: str = ""
    ) -> pa.Table:
        """``select`` of the rows whose ``column`` holds one of ``values`` (and that ``where``
        admits), one query per ``parts`` of them (one that finds nothing for no values)."""
        runs = parts(list(values)) or [[]]
        found = [self.select(name, and_all([in_list(column, p), where]), columns) for p in runs]
        return pa.concat_tables(found) if len(found) != 1 else found[0]

    def reader(self, name: str) -> TableReader:
        """The pylance reader of table ``name`` (see ``_reader``)."""
        with self.readers_lock:
            reader = self._readers.get(name)
            if reader is None:
                reader = self._readers[name] = TableReader(self.table(name).uri, self.access)
            return reader

    def clear_readers(self) -> None:
        """Open every reader afresh on its next use (their caches go with them)."""
        with self.readers_lock:
            self._readers.clear()

    def connection_cache_bytes(self) -> int:
        """Bytes the caches of the store's LanceDB connection hold (its index data and
        table metadata; 0 when it has LanceDB's own session)."""
        return 0 if self.session is None else int(self.session.size_bytes)

    def dataset(self, name: str, version: int | None = None) -> Any:
        """Table ``name`` as of ``version`` (its newest when None), for one read."""
        return self.reader(name).at(version)

    def own_dataset(self, name: str) -> Any:
        """Table ``name`` opened afresh through pylance, for one maintenance operation
        (index folds, cleanups). Such operations hold their dataset object exclusively
        while they run: on the readers' shared object, every search meanwhile would fail
        with "Already mutably borrowed"."""
        return open_dataset(self.table(name).uri, self.access)

    def fragment_rows(self, name: str) -> list[int]:
        """The rows of each fragment of table ``name``, deleted ones included (pylance's
        ``count_rows`` holds the GIL: ``count_admitted``)."""
        return [f.metadata.physical_rows for f in self.own_dataset(name).get_fragments()]

    def arrow(self, name: str, build: Callable[[Any], Any]) -> pa.Table:
        """Run a query built by ``build`` on the async handle of table ``name``.

        The synchronous query builder of lancedb 0.40 hops to its event loop five or six
        times per query (schema checks, then the query), ~4 ms per query on 2 cores; one
        hop with the async builder does the same work. ``build`` gets the
        ``AsyncTable`` and returns an awaitable Arrow table.
        """
        from lancedb.background_loop import LOOP

        return LOOP.run(build(self.table(name)._table))

    def vector_array(self, vectors: np.ndarray) -> pa.FixedSizeListArray:
        """Vectors as an Arrow column of this store's dimension."""
        flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).ravel(), type=pa.float32())
        return pa.FixedSizeListArray.from_arrays(flat, self.dimension)
