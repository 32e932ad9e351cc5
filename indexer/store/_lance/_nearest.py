"""Nearest vectors among the rows a vector index does not cover yet, searched in memory.

A vector index covers the rows it was built or last updated on; a search asks it for
those (``fast_search``) and searches the rest exactly, only where some have their vector
(new rows of an index run are placeholders until phase 2): ``UnindexedVectors.layout``
says, per table version, which fragments the index misses and whether any has vectors.

While an index run fills in vectors (phase 2), the rows it wrote sit in fragments the
vector index misses until the next optimize, most of them still placeholders. Lance's own
search of those fragments reads and compares every row of them for every query, the
largest part of a search while a project indexes. Here the vectors those fragments have
are read once per fragment state (a write rewrites the fragment) and kept as a unit
matrix, so a query costs a matrix product, a scalar filter of the fragments when the
search has one, and a read of the columns its nearest rows need.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from indexer.store._lance._jobs import is_vector_index
from indexer.store._lance._scan import admitted_row_ids, count_admitted

__all__ = [
    "MAX_CACHED_ROWS",
    "UnindexedVectors",
    "VectorLayout",
    "fragment_key",
    "nearest_first",
]

#: Vectors kept in memory at most (~75 MB at 384 dimensions); fragments beyond the cap are
#: searched by Lance itself.
MAX_CACHED_ROWS = 50_000
#: Versions whose vector layout is remembered (a search pins one; a writer makes a few a second).
_LAYOUTS_KEPT = 8


@dataclass(frozen=True, slots=True)
class VectorLayout:
    """How one version of a table's vectors can be searched (``UnindexedVectors.layout``)."""

    indexed: bool
    """Whether a vector index exists."""
    unindexed: tuple[Any, ...] = ()
    """The fragments (``lance.LanceFragment``) the index does not cover."""
    unindexed_embedded: bool = False
    """Whether any row of those fragments has its vector (``embedded = true``)."""
    keys: tuple[tuple[str, ...], ...] = ()
    """What identifies the state of each of those fragments (``fragment_key``)."""


def nearest_first(parts: list[pa.Table], k: int) -> pa.Table:
    """The ``k`` rows of ``parts`` nearest the query (smallest ``_distance``)."""
    if len(parts) == 1:
        return parts[0]
    schema = parts[0].schema
    table = pa.concat_tables([p.select(schema.names).cast(schema) for p in parts])
    order = pc.sort_indices(table, sort_keys=[("_distance", "ascending")])
    return table.take(order[:k])


@dataclass(frozen=True, slots=True)
class _Rows:
    """The embedded rows of one fragment state: row ids and unit vectors."""

    row_ids: np.ndarray
    unit: np.ndarray


def fragment_key(table: str, fragment: Any) -> tuple[str, ...]:
    """What identifies one state of a fragment: its id, data files and deletion file (a
    write that changes any of its rows gives it a new data or deletion file)."""
    meta = fragment.metadata
    files = tuple(str(f.path) for f in meta.files)
    return (table, str(meta.id), *files, str(meta.deletion_file))


class UnindexedVectors:
    """Per-fragment caches of the vectors outside a table's vector index, and the vector
    layout of the last few versions of each table searched (thread-safe)."""

    def __init__(self, max_rows: int = MAX_CACHED_ROWS) -> None:
        """An empty cache holding at most ``max_rows`` vectors."""
        self.max_rows = max_rows
        self._rows: OrderedDict[tuple[str, ...], _Rows] = OrderedDict()
        self._layouts: OrderedDict[tuple[str, int], VectorLayout] = OrderedDict()
        self._lock = threading.Lock()

    def layout(self, name: str, column: str, dataset: Any) -> VectorLayout:
        """Where the vectors of one version of a table are: whether an index covers them,
        the fragments it misses, and whether any row there has its vector (cached per
        version: a version never changes)."""
        key = (name, int(dataset.version))
        with self._lock:
            known = self._layouts.get(key)
        if known is not None:
            return known
        covered: set[int] | None = None
        for index in dataset.describe_indices():
            if column in index.field_names and is_vector_index(index.index_type):
                covered = {f for segment in index.segments for f in segment.fragment_ids}
        if covered is None:
            layout = VectorLayout(indexed=False)
        else:
            unindexed = tuple(f for f in dataset.get_fragments() if f.fragment_id not in covered)
            embedded = count_admitted(dataset, "embedded = true", fragments=list(unindexed), limit=1) > 0
            keys = tuple(fragment_key(name, f) for f in unindexed)
            layout = VectorLayout(indexed=True, unindexed=unindexed, unindexed_embedded=embedded, keys=keys)
        with self._lock:
            self._layouts[key] = layout
            while len(self._layouts) > _LAYOUTS_KEPT:
                self._layouts.popitem(last=False)
        return layout

    def search(
        self,
        dataset: Any,
        layout: VectorLayout,
        nearest: dict[str, Any],
        columns: list[str],
        *,
        embedded: str,
        where: str | None,
        scan_where: str | None,
    ) -> pa.Table:
        """The nearest rows among those the vector index misses (``layout``), by cosine
        distance, with ``columns`` as Lance's own search gives them: from the in-memory
        copy of their vectors (``embedded`` admits the rows with a vector, ``where`` the
        search's), or by Lance's scan of them (filtered by ``scan_where``) when they hold
        more vectors than the cache may keep."""
        fragments = list(layout.unindexed)
        parts: list[_Rows] = []
        for fragment, key in zip(fragments, layout.keys, strict=True):
            part = self._fragment_rows(dataset, fragment, key, nearest["column"], embedded)
            if part is None:
                break
            parts.append(part)
        else:
            admitted = admitted_row_ids(dataset, where, fragments=fragments).to_numpy() if where else None
            query = np.asarray(nearest["q"], dtype=np.float32)
            norm = float(np.linalg.norm(query))
            unit_query = query / norm if norm else query
            # per fragment, so a query never copies the cached matrices
            found_ids, distances = [np.zeros(0, np.uint64)], [np.zeros(0, np.float32)]
            for part in parts:
                row_ids, unit = part.row_ids, part.unit
                if admitted is not None:
                    keep = np.isin(row_ids, admitted)
                    row_ids, unit = row_ids[keep], unit[keep]
                found_ids.append(row_ids)
                distances.append(1.0 - unit @ unit_query)
            row_ids, distance = np.concatenate(found_ids), np.concatenate(distances)
            order = _first(distance, nearest["k"])
            kept = [c for c in columns if c != "_distance"]
            return _result(dataset, row_ids[order], distance[order], kept)
        scan = dataset.scanner(
            columns=columns,
            filter=scan_where,
            prefilter=True,
            nearest=nearest,
            with_row_id=True,
            fragments=fragments,
        )
        return cast(pa.Table, scan.to_table())

    def _fragment_rows(
        self, dataset: Any, fragment: Any, key: tuple[str, ...], column: str, embedded: str
    ) -> _Rows | None:
        with self._lock:
            known = self._rows.get(key)
            if known is not None:
                self._rows.move_to_end(key)
                return known
        # the row ids first, then their vectors: a scan with the filter reads every row's vector
        found = admitted_row_ids(dataset, embedded, fragments=[fragment])
        if len(found) > self.max_rows:
            return None
        table = dataset._take_rows(found.to_pylist(), columns=[column, "_rowid"])
        row_ids = table["_rowid"].to_numpy()
        vectors = table[column].combine_chunks()
        dimension = vectors.type.list_size
        matrix = np.asarray(vectors.flatten().to_numpy(), dtype=np.float32).reshape(-1, dimension)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        rows = _Rows(row_ids, matrix / np.where(norms > 0, norms, 1.0))
        with self._lock:
            self._rows[key] = rows
            while sum(len(r.row_ids) for r in self._rows.values()) > self.max_rows and len(self._rows) > 1:
                self._rows.popitem(last=False)
        return rows


def _first(distance: np.ndarray, k: int) -> np.ndarray:
    """Indexes of the ``k`` smallest distances, nearest first (ties in row order)."""
    if len(distance) > k:
        picked = np.argpartition(distance, k - 1)[:k]
        return picked[np.argsort(distance[picked], kind="stable")]
    return np.argsort(distance, kind="stable")


def _result(dataset: Any, row_ids: np.ndarray, distance: np.ndarray, columns: list[str]) -> pa.Table:
    """The found rows as a table of ``columns``, ``_rowid`` and ``_distance``."""
    data: dict[str, Any] = {}
    if columns and len(row_ids):
        taken = dataset._take_rows(row_ids.tolist(), columns=[*columns, "_rowid"])
        at = {int(r): i for i, r in enumerate(taken["_rowid"].to_pylist())}
        taken = taken.take(pa.array([at[int(r)] for r in row_ids], pa.int64()))
        data = {name: taken[name] for name in columns}
    elif columns:
        schema = dataset.schema
        data = {name: pa.array([], schema.field(name).type) for name in columns}
    data["_rowid"] = pa.array(row_ids, pa.uint64())
    data["_distance"] = pa.array(distance, pa.float32())
    return pa.table(data)
