"""The store's shared state: the LanceDB connection, its tables and the write lock."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from indexer.store._access import StoreAccess, open_dataset, refuse_writes
from indexer.store._lance_jobs import is_vector_index
from indexer.store._reader import TableReader
from indexer.store._schema import CHUNKS, PROJECTS
from indexer.store._unindexed import UnindexedVectors

__all__ = ["StoreBase", "TtlCache", "is_vector_index", "now", "rows", "unit_mean", "vector_matrix"]


def now() -> datetime:
    """The current time, UTC, microsecond precision (as stored)."""
    return datetime.now(UTC)


def unit_mean(vectors: list[np.ndarray]) -> np.ndarray:
    """The unit-length mean of some vectors (a document's vector from its chunks')."""
    mean: np.ndarray = np.mean(np.stack(vectors), axis=0).astype(np.float32)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm > 0 else mean


def vector_matrix(column: Any, dimension: int) -> np.ndarray:
    """An Arrow column of fixed-size float lists as a (rows, ``dimension``) float32 matrix."""
    whole = column.combine_chunks() if hasattr(column, "combine_chunks") else column
    if len(whole) == 0:
        return np.zeros((0, dimension), dtype=np.float32)
    values = whole.flatten().to_numpy(zero_copy_only=False)
    return np.asarray(values, dtype=np.float32).reshape(-1, dimension)


def rows(table: pa.Table) -> list[dict[str, Any]]:
    """Arrow rows as dicts."""
    return table.to_pylist()  # type: ignore[no-any-return]


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


class StoreBase:
    """What every part of the store shares."""

    def __init__(
        self,
        path: Path | str,
        conn: Any,
        tables: dict[str, Any],
        model_id: str,
        dimension: int,
        access: StoreAccess | None = None,
        session: Any = None,
    ) -> None:
        self.path = path
        self._conn = conn
        #: The bounded caches of ``conn`` (``open_store`` gives them; None: LanceDB's own).
        self._session = session
        self._tables = tables
        self.model_id = model_id
        self.dimension = dimension
        #: Where the store is and what this process may do with it.
        self.access = access or StoreAccess()
        #: Every write holds it; a read-only store's refuses them all (``ReadOnlyError``).
        self._write_lock: Any = refuse_writes(path, self.access.read_only)
        #: Held through writes that belong together (``write_unit``); taken for good by a
        #: process that stops (``hold_writes``).
        self._unit_lock = threading.RLock()
        #: This thread's depth of nested write units; set once a stop holds writes.
        self._unit_depth = threading.local()
        self._stopping = threading.Event()
        #: Short-lived answers for every search (project list, coverage); writes clear it.
        self._cache = TtlCache(ttl=1.0)
        #: Rows changed since the last optimize (drives ``maybe_optimize``).
        self._rows_written = 0
        #: Rows phase 1 added since the last optimize (new rows the scalar and full-text
        #: indexes miss until folded in)…
        self._rows_added = 0
        #: …and rows phase 2 rewrote with their vectors (``set_chunk_vectors``), new rows too.
        self._rows_rewritten = 0
        #: (``_rows_added``, ``_rows_rewritten``) when rows were last folded into the indexes
        #: (``fold_new_rows``).
        self._rows_folded = (0, 0)
        self._last_optimize = time.monotonic()
        #: Clear while ``optimize`` runs a big store's maintenance in child processes
        #: (``maintenance_settled``).
        self._maintenance_idle = threading.Event()
        self._maintenance_idle.set()
        #: (chunk table version, whether every chunk of it has its vector, when counted).
        self._embedded_version: tuple[int, bool, float] | None = None
        #: True once every scalar and full-text index exists (the vector index comes later).
        self._indexes_complete = False
        placeholder = np.zeros(dimension, dtype=np.float32)
        placeholder[0] = 1.0
        #: Stored in place of a vector not computed yet (``embedded = false`` rows).
        self.placeholder = placeholder
        #: (table, version) → how its vectors are laid out for a search (``_vector_layout``).
        self._layouts: OrderedDict[tuple[str, int], Any] = OrderedDict()
        #: In-memory vectors of the rows outside the vector index (``_unindexed``).
        self._unindexed = UnindexedVectors()
        #: pylance readers of the tables searches read (opened on first use).
        self._readers: dict[str, TableReader] = {}
        self._readers_lock = threading.Lock()
        #: Set by the first ``prewarm``: this process answers searches, so each optimize
        #: loads the new indexes again (a process that only indexes, ``lode index`` or
        #: ``lode watch``, never searches: ~160 MB for 115k chunks it would hold for nothing).
        self._keep_warm = False
        #: (projects, chunks) table versions the cached answers were read at
        #: (``forget_if_changed``).
        self._cached_versions: tuple[int, int] | None = None

    def _t(self, name: str) -> Any:
        return self._tables[name]

    @contextmanager
    def write_unit(self) -> Iterator[None]:
        """Writes that belong together (a file's chunks and its document, vectors and the
        documents they complete): a stopping process waits for them, never cuts them.
        Taken before ``_write_lock``, never inside it."""
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
        versions = (self._reader(PROJECTS).latest_version(), self._reader(CHUNKS).latest_version())
        if versions != self._cached_versions:
            self._cache.clear()
            self._cached_versions = versions

    def _reader(self, name: str) -> TableReader:
        """The pylance reader of table ``name`` (see ``_reader``)."""
        with self._readers_lock:
            reader = self._readers.get(name)
            if reader is None:
                reader = self._readers[name] = TableReader(self._t(name).uri, self.access)
            return reader

    def connection_cache_bytes(self) -> int:
        """Bytes the caches of the store's LanceDB connection hold (its index data and
        table metadata; 0 when it has LanceDB's own session)."""
        return 0 if self._session is None else int(self._session.size_bytes)

    def _dataset(self, name: str, version: int | None = None) -> Any:
        """Table ``name`` as of ``version`` (its newest when None), for one read."""
        return self._reader(name).at(version)

    def _own_dataset(self, name: str) -> Any:
        """Table ``name`` opened afresh through pylance, for one maintenance operation
        (index folds, cleanups). Such operations hold their dataset object exclusively
        while they run: on the readers' shared object, every search meanwhile would fail
        with "Already mutably borrowed"."""
        return open_dataset(self._t(name).uri, self.access)

    def _arrow(self, name: str, build: Callable[[Any], Any]) -> pa.Table:
        """Run a query built by ``build`` on the async handle of table ``name``.

        The synchronous query builder of lancedb 0.40 hops to its event loop five or six
        times per query (schema checks, then the query), ~4 ms per query on 2 cores; one
        hop with the async builder does the same work. ``build`` gets the
        ``AsyncTable`` and returns an awaitable Arrow table.
        """
        from lancedb.background_loop import LOOP

        return LOOP.run(build(self._t(name)._table))

    def _vector_array(self, vectors: np.ndarray) -> pa.FixedSizeListArray:
        flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).ravel(), type=pa.float32())
        return pa.FixedSizeListArray.from_arrays(flat, self.dimension)
