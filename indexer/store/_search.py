"""The search's store queries: candidate lists (nearest vectors, BM25 matches, chunks a
filter admits) and the facts ranking reads of them, each read through pylance in one
pinned version of the chunk or document table (``Chunks.views`` reads a page of them)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from indexer.models import ChunkFilter
from indexer.store._filters import chunk_where, document_where
from indexer.store._lance._db import Db
from indexer.store._lance._nearest import UnindexedVectors, nearest_first
from indexer.store._lance._scan import count_admitted
from indexer.store._schema import CHUNKS, DOCUMENTS
from indexer.store._sql import and_all, in_list

__all__ = ["NPROBES", "Candidate", "ChunkFacts", "Detail", "Search", "TableKind", "TextField"]

#: IVF partitions probed per query once a vector index exists.
NPROBES = 32

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
    """Where the row was when found (``Chunks.views`` reads it without an id lookup)."""

    @property
    def key(self) -> str:
        """What identifies the candidate within one search: its id, else its row id (padded,
        so ties in a fused ranking fall in table order)."""
        return self.id or f"@{self.row_id:020d}"


def _where(kind: TableKind, flt: ChunkFilter, embedded_only: bool = False) -> str | None:
    """The WHERE text selecting the rows of table ``kind`` that ``flt`` admits."""
    if kind == "chunks":
        return chunk_where(flt, embedded_only=embedded_only)
    return document_where(flt, embedded_only=embedded_only)


def _columns(kind: TableKind, detail: Detail) -> list[str]:
    """The columns a candidate of table ``kind`` found with ``detail`` reads."""
    if detail == "file":
        return ["file_id"] if kind == "chunks" else ["id"]
    return {"full": _CANDIDATE_COLUMNS[kind], "id": ["id"], "row": []}[detail]


def _to_candidates(kind: TableKind, table: Any, score_column: str) -> list[Candidate]:
    """Candidates from a result table, read column by column (faster than a dict per row)."""
    raw = table[score_column].to_pylist()
    scores = [1.0 - r for r in raw] if score_column == "_distance" else raw
    names = set(table.column_names)

    def column(name: str, default: Any = None) -> list[Any]:
        return table[name].to_pylist() if name in names else [default] * len(scores)

    ids = column("id")
    file_ids = ids if kind == "documents" else column("file_id")  # a document's file is itself
    node_names, definitions, row_ids = column("node_name"), column("definitions"), column("_rowid", -1)
    return [
        Candidate(
            ids[i] or "",
            file_ids[i] or "",
            float(score),
            node_names[i] or "",
            tuple(definitions[i] or ()),
            int(row_ids[i]),
        )
        for i, score in enumerate(scores)
    ]


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
    header: str | None = None
    """The container's name when the chunk is a class's (struct's, trait's…) header, whose
    members are chunks of their own; else None."""


#: Node types whose members are chunked apart from their header.
CONTAINER_TYPES = frozenset({"class", "struct", "interface", "trait", "impl", "enum", "namespace"})
#: Columns read for ``ChunkFacts``.
_FACT_COLUMNS = ["id", "role", "file_id", "node_type", "node_name", "scope_path", "start_line", "end_line"]
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
            header=cols["node_name"][i] or ""
            if cols["node_type"][i] in CONTAINER_TYPES and unit_end > end
            else None,
        )
        out.append((int(row_id), cols["id"][i], facts))
    return out


#: A table that had chunks without a vector is counted again after this long at the earliest.
_RECOUNT_SECONDS = 1.0


class Search:
    """Nearest-neighbour and BM25 candidate lists, and what ranking and a page read of them."""

    def __init__(self, db: Db) -> None:
        self._db = db
        #: How each version's vectors are laid out, and in-memory vectors of the rows
        #: outside the vector index.
        self._unindexed = UnindexedVectors()
        #: (chunk table version, whether every chunk of it has its vector, when counted).
        self._embedded_version: tuple[int, bool, float] | None = None

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
        ``embedded_only=False`` drops the ``embedded = true`` prefilter (CPU per query):
        only for a caller that pinned a version of the table in which
        ``all_embedded_at`` holds, so no placeholder vector can be found. ``version`` pins
        the table version searched (its newest when None).
        """
        where = _where(kind, flt, embedded_only=embedded_only)
        nearest = {
            "column": _VECTOR_COLUMN[kind],
            "q": np.asarray(vector, dtype=np.float32),
            "k": k,
            "nprobes": NPROBES,
            "metric": "cosine",
        }
        dataset = self._db.dataset(_NAMES[kind], version)
        columns = [*_columns(kind, detail), "_distance"]
        layout = self._unindexed.layout(_NAMES[kind], _VECTOR_COLUMN[kind], dataset)
        if not layout.indexed:
            table = dataset.to_table(
                columns=columns, filter=where, prefilter=True, nearest=nearest, with_row_id=True
            )
            return _to_candidates(kind, table, "_distance")
        # the index answers for the rows it covers; rows written since it was built or
        # last updated are searched exactly, and only where some have their vector (new
        # rows of an index run are placeholders until phase 2), in memory (``_nearest``)
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
            found = self._unindexed.search(
                dataset,
                layout,
                nearest,
                columns,
                embedded=_where(kind, ChunkFilter(), embedded_only=True) or "true",
                where=_where(kind, flt),
                scan_where=_where(kind, flt, embedded_only=True),
            )
            parts.append(found)
        table = nearest_first(parts, k)
        return _to_candidates(kind, table, "_distance")

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
        table = self._db.dataset(_NAMES[kind], version).to_table(
            columns=[*_columns(kind, detail), "_score"],
            filter=_where(kind, flt),
            prefilter=True,  # filters before ranking
            full_text_query=MatchQuery(text, field),
            limit=k,
            with_row_id=True,
        )
        return _to_candidates(kind, table, "_score")

    def vector_candidates_many(self, vectors: np.ndarray, flt: ChunkFilter, k: int) -> list[list[Candidate]]:
        """For each query vector, the ``k`` nearest embedded chunks admitted by ``flt``
        (score: cosine similarity), in one store call."""
        matrix = np.asarray(vectors, dtype=np.float32).reshape(-1, self._db.dimension)
        if not len(matrix):
            return []
        table = (
            self._db.table(CHUNKS)
            .search(matrix if len(matrix) > 1 else matrix[0], vector_column_name="embedding")
            .distance_type("cosine")
            .nprobes(NPROBES)
            .where(chunk_where(flt, embedded_only=True), prefilter=True)
            .select(["id", "file_id", "node_name", "definitions"])
            .limit(k)
            .to_arrow()
        )
        out: list[list[Candidate]] = [[] for _ in range(len(matrix))]
        queries = table["query_index"].to_pylist() if "query_index" in table.column_names else None
        for i, candidate in enumerate(_to_candidates("chunks", table, "_distance")):
            out[int(queries[i]) if queries else 0].append(candidate)
        for found in out:
            found.sort(key=lambda c: -c.score)
        return out

    def admitted_chunks(self, flt: ChunkFilter, k: int, version: int | None = None) -> list[Candidate]:
        """Up to ``k`` chunks ``flt`` admits (ids, names, definitions), in table order."""
        table = self._db.dataset(CHUNKS, version).to_table(
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
        table = self._db.dataset(CHUNKS, version).to_table(
            columns=list(dict.fromkeys([*columns, "id"])),
            filter=and_all([in_list("id", scores), chunk_where(flt)]),
            with_row_id=True,
        )
        ids = table["id"].to_pylist()
        table = table.append_column("_score", pa.array([scores[i] for i in ids], pa.float64()))
        found = _to_candidates("chunks", table, "_score")
        return found if "id" in columns else [replace(c, id="") for c in found]

    def chunk_facts(
        self, candidates: Sequence[Candidate], version: int | None = None
    ) -> dict[str, ChunkFacts]:
        """``ChunkFacts`` by candidate key; rows read by row id in ``version`` of the chunk
        table (the version the candidates were found in), a candidate whose row moved since
        (an id that no longer sits at its row id) by its id."""
        if not candidates:
            return {}
        dataset = self._db.dataset(CHUNKS, version)
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

    def chunk_table_version(self) -> int:
        """The chunk table's newest version: a search pinned to it (``version=``) reads
        exactly its rows, so row ids found by one query of the search hold for the next."""
        return self._db.reader(CHUNKS).latest_version()

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
        table = self._db.dataset(CHUNKS, version)
        complete = count_admitted(table, "embedded IS NOT TRUE", limit=1) == 0
        self._embedded_version = (version, complete, time.monotonic())
        return complete
