"""Query primitives for search: nearest vectors and full-text matches, prefiltered by data."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from indexer.models import ChunkFilter, FileChunk, StoredChunk
from indexer.store._base import StoreBase, is_vector_index, rows, vector_matrix
from indexer.store._filters import chunk_where, document_where
from indexer.store._rows import CHUNK_COLUMNS, to_stored_chunk
from indexer.store._scan import count_admitted
from indexer.store._schema import CHUNKS, DOCUMENTS
from indexer.store._sql import and_all, in_list
from indexer.store._unindexed import fragment_key

__all__ = [
    "Candidate",
    "ChunkFacts",
    "Detail",
    "FactsMixin",
    "FilteredMixin",
    "SearchMixin",
    "TableKind",
    "TextField",
]

TableKind = Literal["chunks", "documents"]
TextField = Literal["search_text", "name_text"]
#: What a candidate carries besides its row id: ``full`` (ids, and for chunks file id, name
#: and definitions), ``id`` (the id only), ``file`` (a chunk's file id, a document's id) or
#: ``row`` (nothing). Reading any column of 100 hits costs a full-text query as much as its
#: search, so a caller that pins the table version keys chunks by row id and reads only
#: the page it shows.
Detail = Literal["full", "id", "file", "row"]
_NAMES: dict[str, str] = {"chunks": CHUNKS, "documents": DOCUMENTS}
_VECTOR_COLUMN = {"chunks": "embedding", "documents": "content_embedding"}
#: Versions whose vector layout is remembered (a search pins one; a writer makes a few a second).
_LAYOUTS_KEPT = 8
#: A table that had chunks without a vector is counted again after this long at the earliest.
_RECOUNT_SECONDS = 1.0
_CANDIDATE_COLUMNS = {"chunks": ["id", "file_id", "node_name", "definitions"], "documents": ["id"]}


@dataclass(frozen=True, slots=True)
class Candidate:
    """One entry of a candidate list: ids, the names it defines, and its raw score."""

    id: str
    """The row's id (empty for a candidate found with ``detail="row"``)."""
    file_id: str
    """The chunk's file (empty unless found with ``detail="full"``)."""
    score: float
    """Cosine similarity for vector lists, BM25 for full-text lists."""
    node_name: str = ""
    definitions: tuple[str, ...] = ()
    row_id: int = -1
    """Where the row was when found (``get_chunks_at`` reads it without an id lookup)."""

    @property
    def key(self) -> str:
        """What identifies the candidate within one search: its id, else its row id (padded,
        so ties in a fused ranking fall in table order)."""
        return self.id or f"@{self.row_id:020d}"


@dataclass(frozen=True, slots=True)
class _VectorLayout:
    """How one version of a table's vectors can be searched (see ``_vector_layout``)."""

    indexed: bool
    """Whether a vector index exists."""
    unindexed: tuple[Any, ...] = ()
    """The fragments (``lance.LanceFragment``) the index does not cover."""
    unindexed_embedded: bool = False
    """Whether any row of those fragments has its vector (``embedded = true``)."""
    keys: tuple[tuple[str, ...], ...] = ()
    """What identifies the state of each of those fragments (``fragment_key``)."""


def _nearest_first(parts: list[pa.Table], k: int) -> pa.Table:
    """The ``k`` rows of ``parts`` nearest the query (smallest ``_distance``)."""
    if len(parts) == 1:
        return parts[0]
    schema = parts[0].schema
    table = pa.concat_tables([p.select(schema.names).cast(schema) for p in parts])
    order = pc.sort_indices(table, sort_keys=[("_distance", "ascending")])
    return table.take(order[:k])


def _where(kind: TableKind, flt: ChunkFilter, embedded_only: bool = False) -> str | None:
    if kind == "chunks":
        return chunk_where(flt, embedded_only=embedded_only)
    return document_where(flt, embedded_only=embedded_only)


def _columns(kind: TableKind, detail: Detail) -> list[str]:
    if detail == "file":
        return ["file_id"] if kind == "chunks" else ["id"]
    return {"full": _CANDIDATE_COLUMNS[kind], "id": ["id"], "row": []}[detail]


def _to_candidates(kind: TableKind, table: Any, score_column: str) -> list[Candidate]:
    """Candidates from a result table, read column by column (a dict per row costs a
    100-row list ~0.3 ms)."""
    raw = table[score_column].to_pylist()
    scores = [1.0 - r for r in raw] if score_column == "_distance" else raw
    n = len(scores)
    names = set(table.column_names)

    def column(name: str, default: Any) -> list[Any]:
        return table[name].to_pylist() if name in names else [default] * n

    row_ids, ids = column("_rowid", -1), column("id", None)
    if kind == "documents":
        return [
            Candidate(ids[i] or "", ids[i] or "", float(scores[i]), row_id=int(row_ids[i])) for i in range(n)
        ]
    file_ids, node_names, definitions = (
        column("file_id", None),
        column("node_name", None),
        column("definitions", None),
    )
    return [
        Candidate(
            ids[i] or "",
            file_ids[i] or "",
            float(scores[i]),
            node_names[i] or "",
            tuple(definitions[i] or ()),
            int(row_ids[i]),
        )
        for i in range(n)
    ]


class SearchMixin(StoreBase):
    """Nearest-neighbour and BM25 candidate lists."""

    nprobes: int = 32
    """IVF partitions probed per query once a vector index exists."""

    def vector_candidates(
        self,
        kind: TableKind,
        vector: np.ndarray,
        flt: ChunkFilter,
        k: int,
        *,
        detail: Detail = "full",
        embedded_only: bool = True,
        version: int | None = None,
    ) -> list[Candidate]:
        """The ``k`` nearest embedded rows admitted by ``flt`` (score: cosine similarity).

        ``detail`` says what a candidate carries besides its row id (see ``Detail``).
        ``embedded_only=False`` drops the ``embedded = true`` prefilter (~4 ms of CPU per
        query on 110k chunks): only for a caller that pinned a version of the table in which
        ``all_embedded_at`` holds, so no placeholder vector can be found. ``version`` pins
        the table version searched (its newest when None).
        """
        where = _where(kind, flt, embedded_only=embedded_only)
        nearest = {
            "column": _VECTOR_COLUMN[kind],
            "q": np.asarray(vector, dtype=np.float32),
            "k": k,
            "nprobes": self.nprobes,
            "metric": "cosine",
        }
        dataset = self._dataset(_NAMES[kind], version)
        columns = [*_columns(kind, detail), "_distance"]
        layout = self._vector_layout(kind, dataset)
        if not layout.indexed:
            table = dataset.to_table(
                columns=columns, filter=where, prefilter=True, nearest=nearest, with_row_id=True
            )
            return _to_candidates(kind, table, "_distance")
        # the index answers for the rows it covers; rows written since it was built or
        # last updated are searched exactly, and only where some have their vector (new
        # rows of an index run are placeholders until phase 2), in memory (``_unindexed``)
        indexed = dataset.to_table(
            columns=columns,
            filter=where,
            prefilter=True,  # filters before the search
            nearest=nearest,
            with_row_id=True,
            fast_search=True,
        )
        # the index measures squared L2 between unit vectors, twice the cosine distance
        # (Lance converts it only when it also scans rows itself)
        half = pc.multiply(indexed["_distance"], pa.scalar(0.5, indexed.schema.field("_distance").type))
        parts = [indexed.set_column(indexed.schema.get_field_index("_distance"), "_distance", half)]
        if layout.unindexed and layout.unindexed_embedded:
            parts.append(self._unindexed_nearest(kind, dataset, layout, flt, nearest, columns))
        table = _nearest_first(parts, k)
        return _to_candidates(kind, table, "_distance")

    def _unindexed_nearest(
        self,
        kind: TableKind,
        dataset: Any,
        layout: _VectorLayout,
        flt: ChunkFilter,
        nearest: dict[str, Any],
        columns: list[str],
    ) -> pa.Table:
        """The nearest rows among those the vector index misses: from the in-memory copy of
        their vectors (``UnindexedVectors``), or by Lance's scan of them when too many."""
        found = self._unindexed.nearest(
            dataset,
            layout.unindexed,
            layout.keys,
            column=_VECTOR_COLUMN[kind],
            embedded=_where(kind, ChunkFilter(), embedded_only=True) or "true",
            where=_where(kind, flt),
            vector=nearest["q"],
            k=nearest["k"],
            columns=[c for c in columns if c != "_distance"],
        )
        if found is not None:
            return found
        scan = dataset.scanner(
            columns=columns,
            filter=_where(kind, flt, embedded_only=True),
            prefilter=True,
            nearest=nearest,
            with_row_id=True,
            fragments=list(layout.unindexed),
        )
        return cast(pa.Table, scan.to_table())

    def _vector_layout(self, kind: TableKind, dataset: Any) -> _VectorLayout:
        """Where the vectors of one version of a table are: whether an index covers them,
        the fragments it misses, and whether any row there has its vector (cached per
        version: a version never changes)."""
        key = (_NAMES[kind], int(dataset.version))
        with self._readers_lock:
            known = self._layouts.get(key)
        if known is not None:
            return cast(_VectorLayout, known)
        column = _VECTOR_COLUMN[kind]
        covered: set[int] | None = None
        for index in dataset.describe_indices():
            if column in index.field_names and is_vector_index(index.index_type):
                covered = {f for segment in index.segments for f in segment.fragment_ids}
        if covered is None:
            layout = _VectorLayout(indexed=False)
        else:
            unindexed = tuple(f for f in dataset.get_fragments() if f.fragment_id not in covered)
            embedded = count_admitted(dataset, "embedded = true", fragments=list(unindexed), limit=1) > 0
            keys = tuple(fragment_key(_NAMES[kind], f) for f in unindexed)
            layout = _VectorLayout(indexed=True, unindexed=unindexed, unindexed_embedded=embedded, keys=keys)
        with self._readers_lock:
            self._layouts[key] = layout
            while len(self._layouts) > _LAYOUTS_KEPT:
                self._layouts.popitem(last=False)
        return layout

    def text_candidates(
        self,
        kind: TableKind,
        text: str,
        flt: ChunkFilter,
        k: int,
        field: TextField = "search_text",
        *,
        detail: Detail = "full",
        version: int | None = None,
    ) -> list[Candidate]:
        """The ``k`` best BM25 matches of ``text`` admitted by ``flt`` (score: BM25).

        ``field`` is ``search_text`` (path, name and content words) or, for chunks,
        ``name_text`` (the words of the unit's own name); ``detail`` and ``version`` as
        for ``vector_candidates``.
        """
        from lance.query import MatchQuery

        if not text.strip():
            return []
        table = self._dataset(_NAMES[kind], version).to_table(
            columns=[*_columns(kind, detail), "_score"],
            filter=_where(kind, flt),
            prefilter=True,  # filters before ranking
            full_text_query=MatchQuery(text, field),
            limit=k,
            with_row_id=True,
        )
        return _to_candidates(kind, table, "_score")

    def chunks_with_vectors(self, flt: ChunkFilter) -> list[tuple[StoredChunk, np.ndarray | None]]:
        """Every chunk admitted by ``flt`` (meant for a few files) with its vector if it has one."""
        where = chunk_where(flt) or "true"
        table = self._arrow(
            CHUNKS, lambda t: t.query().where(where).select([*CHUNK_COLUMNS, "embedding"]).to_arrow()
        )
        out: list[tuple[StoredChunk, np.ndarray | None]] = []
        for row in rows(table):
            vec = np.asarray(row["embedding"], dtype=np.float32) if row["embedded"] else None
            out.append((to_stored_chunk(row), vec))
        return out

    def chunks_for_ranking(self, flt: ChunkFilter) -> list[FileChunk]:
        """Every chunk admitted by ``flt`` (meant for a few files) as ranking within a file
        reads it: id, row id, position, text and vector (6 columns: whole chunks, as
        ``chunks_with_vectors`` reads them, took 29 ms a page on 1M chunks)."""
        where = chunk_where(flt) or "true"
        columns = ["id", "file_id", "chunk_index", "content", "embedded", "embedding"]
        table = self._arrow(CHUNKS, lambda t: t.query().where(where).select(columns).with_row_id().to_arrow())
        if not table.num_rows:
            return []
        matrix = vector_matrix(table["embedding"], self.dimension)
        cols = [table[name].to_pylist() for name in (*columns[:5], "_rowid")]
        return [
            FileChunk(i, int(row_id), fid, index or 0, content or "", matrix[n] if done else None)
            for n, (i, fid, index, content, done, row_id) in enumerate(zip(*cols, strict=True))
        ]

    def file_ids_with_chunks(self, flt: ChunkFilter, file_ids: Sequence[str]) -> set[str]:
        """Which of ``file_ids`` have at least one chunk admitted by ``flt``."""
        where = and_all([chunk_where(replace(flt, file_ids=tuple(file_ids)))])
        table = self._t(CHUNKS).search().where(where or "true").select(["file_id"]).limit(None).to_arrow()
        return set(table["file_id"].to_pylist())

    def chunk_table_version(self) -> int:
        """The chunk table's newest version: a search pinned to it (``version=``) reads
        exactly its rows, so row ids found by one query of the search hold for the next."""
        return self._reader(CHUNKS).latest_version()

    def all_embedded_at(self, version: int) -> bool:
        """True when every chunk of version ``version`` of the chunk table has its vector.

        Counted once per version (rows ``embedded = true`` admits against all rows); a table
        that had rows without one is not counted again for ``_RECOUNT_SECONDS`` (each write
        of an index run makes a version). Both counts read that very version.
        """
        known = self._embedded_version
        if known is not None and known[0] == version:
            return known[1]
        if known is not None and not known[1] and time.monotonic() - known[2] < _RECOUNT_SECONDS:
            return False
        table = self._dataset(CHUNKS, version)
        complete = count_admitted(table, "embedded IS NOT TRUE", limit=1) == 0
        self._embedded_version = (version, complete, time.monotonic())
        return complete

    def index_version(self) -> int:
        """A number that changes whenever chunks or documents change (for continuation tokens)."""
        return int(self._t(CHUNKS).version) * 1_000_000 + int(self._t(DOCUMENTS).version)


@dataclass(frozen=True, slots=True)
class ChunkFacts:
    """What ranking needs of a candidate besides its score: role and unit."""

    role: str
    """The chunk's role (``indexer.roles``)."""
    file_id: str
    """Its file."""
    unit: tuple[Any, ...]
    """Identifies the unit the chunk is (a piece of) within its file: pieces of one split
    unit share it."""
    start_line: int
    """First line of its unit (of the chunk itself when it is a whole unit)."""
    end_line: int
    """Last line of its unit."""


#: Columns read for ``ChunkFacts``.
_FACT_COLUMNS = ["id", "role", "file_id", "node_type", "scope_path", "start_line", "end_line"]
_UNIT_COLUMNS = ["unit_start_line", "unit_end_line"]


def _facts_of(table: pa.Table) -> list[tuple[int, str, ChunkFacts]]:
    """(row id, chunk id, facts) of each row of ``table``."""
    names = set(table.column_names)
    cols = {
        name: table[name].to_pylist() for name in [*_FACT_COLUMNS, *_UNIT_COLUMNS, "_rowid"] if name in names
    }
    n = table.num_rows
    unit_starts, unit_ends = cols.get("unit_start_line", [None] * n), cols.get("unit_end_line", [None] * n)
    out = []
    for i, row_id in enumerate(cols["_rowid"]):
        start, end = cols["start_line"][i], cols["end_line"][i]
        unit_start, unit_end = unit_starts[i] or 0, unit_ends[i] or 0
        if unit_start > 0:  # the chunker says which unit a piece is of (every piece shares it)
            unit: tuple[Any, ...] = ("unit", unit_start, unit_end)
        else:  # an index of an older chunker: pieces of one unit share its kind and scope path
            scope = tuple(cols["scope_path"][i] or ())
            unit = (cols["node_type"][i], scope) if scope else (cols["node_type"][i], start)
            unit_start, unit_end = start, end
        facts = ChunkFacts(
            role=cols["role"][i] or "implementation",
            file_id=cols["file_id"][i],
            unit=unit,
            start_line=unit_start if unit_start > 0 else start,
            end_line=unit_end if unit_end > 0 else end,
        )
        out.append((int(row_id), cols["id"][i], facts))
    return out


class FilteredMixin(StoreBase):
    """Chunks a filter admits, without a query text."""

    def admitted_chunks(self, flt: ChunkFilter, k: int, version: int | None = None) -> list[Candidate]:
        """Up to ``k`` chunks ``flt`` admits (ids, names, definitions), in table order."""
        table = self._dataset(CHUNKS, version).to_table(
            columns=_CANDIDATE_COLUMNS["chunks"], filter=chunk_where(flt) or "true", limit=k, with_row_id=True
        )
        return _to_candidates(
            "chunks", table.append_column("_score", pa.array([1.0] * table.num_rows)), "_score"
        )

    def chunk_candidates(
        self,
        scores: Mapping[str, float],
        flt: ChunkFilter,
        *,
        detail: Detail = "full",
        version: int | None = None,
    ) -> list[Candidate]:
        """The chunks of ``scores`` (chunk id → score) that ``flt`` admits, as candidates in
        table order; ``detail`` and ``version`` as for ``vector_candidates``."""
        if not scores:
            return []
        columns = _columns("chunks", detail)
        table = self._dataset(CHUNKS, version).to_table(
            columns=list(dict.fromkeys([*columns, "id"])),
            filter=and_all([in_list("id", scores), chunk_where(flt)]),
            with_row_id=True,
        )
        ids = table["id"].to_pylist()
        table = table.append_column("_score", pa.array([scores[i] for i in ids], pa.float64()))
        found = _to_candidates("chunks", table, "_score")
        return found if "id" in columns else [replace(c, id="") for c in found]


class FactsMixin(StoreBase):
    """Role and unit of ranked chunk candidates, read in one take."""

    def chunk_facts(
        self, candidates: Sequence[Candidate], version: int | None = None
    ) -> dict[str, ChunkFacts]:
        """``ChunkFacts`` by candidate key; rows read by row id in ``version`` of the chunk
        table (the version the candidates were found in), a candidate whose row moved since
        (an id that no longer sits at its row id) by its id."""
        if not candidates:
            return {}
        dataset = self._dataset(CHUNKS, version)
        row_ids = sorted({c.row_id for c in candidates if c.row_id >= 0})
        present = set(dataset.schema.names)
        columns = [*_FACT_COLUMNS, *(c for c in _UNIT_COLUMNS if c in present)]
        try:
            taken = dataset._take_rows(row_ids, columns=[*columns, "_rowid"])
            at_rows = {row: (cid, f) for row, cid, f in _facts_of(taken)}
        except (OSError, RuntimeError, ValueError):
            # a row id of another version (Lance 13 refuses deleted rows and fragments
            # gone): every candidate by its id
            at_rows = {}
        found: dict[str, ChunkFacts] = {}
        lost: list[Candidate] = []
        for c in candidates:
            hit = at_rows.get(c.row_id)
            if hit is not None and (not c.id or hit[0] == c.id):
                found[c.key] = hit[1]
            elif c.id:
                lost.append(c)
        if lost:
            table = dataset.to_table(
                columns=columns, filter=in_list("id", [c.id for c in lost]), with_row_id=True
            )
            by_id = {cid: f for _, cid, f in _facts_of(table)}
            found.update((c.key, by_id[c.id]) for c in lost if c.id in by_id)
        return found
