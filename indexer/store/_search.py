"""The search's store queries: candidate lists (nearest vectors, BM25 matches, chunks a
filter admits), the facts ranking reads of them and the views a page shows, each read
through pylance in one pinned version of the chunk or document table."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from indexer.models import ChunkFilter, ChunkView
from indexer.store._candidates import (
    CANDIDATE_COLUMNS,
    FACT_COLUMNS,
    NAMES,
    NPROBES,
    UNIT_COLUMNS,
    VECTOR_COLUMN,
    Candidate,
    ChunkFacts,
    Detail,
    TableKind,
    TextField,
    columns_of,
    facts_of,
    to_candidates,
    where_of,
)
from indexer.store._chunks import Chunks
from indexer.store._filters import chunk_where
from indexer.store._lance._db import Db
from indexer.store._lance._nearest import UnindexedVectors, VectorLayouts, nearest_first
from indexer.store._lance._scan import count_admitted
from indexer.store._rows import VIEW_COLUMNS, rows, to_chunk_view, unpack_view
from indexer.store._schema import CHUNKS
from indexer.store._sql import and_all, in_list

__all__ = ["Search"]

#: A table that had chunks without a vector is counted again after this long at the earliest.
_RECOUNT_SECONDS = 1.0


class Search:
    """Nearest-neighbour and BM25 candidate lists, and what ranking and a page read of them."""

    def __init__(self, db: Db, chunks: Chunks) -> None:
        self._db = db
        self._chunks = chunks
        #: (table, version) → how its vectors are laid out for a search.
        self._layouts = VectorLayouts()
        #: In-memory vectors of the rows outside the vector index.
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
        ``embedded_only=False`` drops the ``embedded = true`` prefilter (~4 ms of CPU per
        query on 110k chunks): only for a caller that pinned a version of the table in which
        ``all_embedded_at`` holds, so no placeholder vector can be found. ``version`` pins
        the table version searched (its newest when None).
        """
        where = where_of(kind, flt, embedded_only=embedded_only)
        nearest = {
            "column": VECTOR_COLUMN[kind],
            "q": np.asarray(vector, dtype=np.float32),
            "k": k,
            "nprobes": NPROBES,
            "metric": "cosine",
        }
        dataset = self._db.dataset(NAMES[kind], version)
        columns = [*columns_of(kind, detail), "_distance"]
        layout = self._layouts.of(NAMES[kind], VECTOR_COLUMN[kind], dataset)
        if not layout.indexed:
            table = dataset.to_table(
                columns=columns, filter=where, prefilter=True, nearest=nearest, with_row_id=True
            )
            return to_candidates(kind, table, "_distance")
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
                embedded=where_of(kind, ChunkFilter(), embedded_only=True) or "true",
                where=where_of(kind, flt),
                scan_where=where_of(kind, flt, embedded_only=True),
            )
            parts.append(found)
        table = nearest_first(parts, k)
        return to_candidates(kind, table, "_distance")

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
        table = self._db.dataset(NAMES[kind], version).to_table(
            columns=[*columns_of(kind, detail), "_score"],
            filter=where_of(kind, flt),
            prefilter=True,  # filters before ranking
            full_text_query=MatchQuery(text, field),
            limit=k,
            with_row_id=True,
        )
        return to_candidates(kind, table, "_score")

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
        for row in rows(table):
            candidate = Candidate(
                row["id"],
                row["file_id"],
                1.0 - float(row["_distance"]),
                row["node_name"],
                tuple(row["definitions"] or ()),
            )
            out[int(row.get("query_index", 0))].append(candidate)
        for found in out:
            found.sort(key=lambda c: -c.score)
        return out

    def admitted_chunks(self, flt: ChunkFilter, k: int, version: int | None = None) -> list[Candidate]:
        """Up to ``k`` chunks ``flt`` admits (ids, names, definitions), in table order."""
        table = self._db.dataset(CHUNKS, version).to_table(
            columns=CANDIDATE_COLUMNS["chunks"], filter=chunk_where(flt) or "true", limit=k, with_row_id=True
        )
        return to_candidates(
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
        columns = columns_of("chunks", detail)
        table = self._db.dataset(CHUNKS, version).to_table(
            columns=list(dict.fromkeys([*columns, "id"])),
            filter=and_all([in_list("id", scores), chunk_where(flt)]),
            with_row_id=True,
        )
        ids = table["id"].to_pylist()
        table = table.append_column("_score", pa.array([scores[i] for i in ids], pa.float64()))
        found = to_candidates("chunks", table, "_score")
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
        columns = [*FACT_COLUMNS, *(c for c in UNIT_COLUMNS if c in present)]
        try:
            taken = dataset._take_rows(row_ids, columns=[*columns, "_rowid"])
            at_rows = {row: (cid, f) for row, cid, f in facts_of(taken)}
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
            by_id = {cid: f for _, cid, f in facts_of(table)}
            found.update((c.key, by_id[c.id]) for c in lost if c.id in by_id)
        return found

    def chunk_views(self, refs: Sequence[tuple[str, int]], version: int | None = None) -> list[ChunkView]:
        """Views of chunks by (id, row id) as search candidates carry them, in the order asked;
        read in ``version`` of the chunk table when given (the version they were found in).

        Reading by row id skips the id lookup; a row id that no longer holds its chunk
        (the table was compacted or rewritten since) falls back to the lookup by id.
        """
        found: dict[str, ChunkView] = {}
        known = [row_id for _, row_id in refs if row_id >= 0]
        if known and version is not None:
            with suppress(OSError, RuntimeError, ValueError):  # that version's files pruned since
                found.update((v.id, v) for v in self.chunk_views_at_rows(known, version).values())
        elif known:
            try:
                table = self._db.arrow(
                    CHUNKS, lambda t: t.take_row_ids(known).select(VIEW_COLUMNS).to_arrow()
                )
                found.update((r["id"], to_chunk_view(r)) for r in rows(table))
            except (OSError, RuntimeError, ValueError):  # rows moved by a compaction: by id below
                pass
        missing = [i for i, _ in refs if i not in found]
        if missing:
            found.update((c.id, ChunkView.of(c)) for c in self._chunks.get(missing))
        return [found[i] for i, _ in refs if i in found]

    def chunk_views_at_rows(self, row_ids: Sequence[int], version: int | None = None) -> dict[int, ChunkView]:
        """Views of chunks by row id in version ``version`` of the chunk table (the version
        the row ids were found in; when None, the newest, and the caller checks that it did
        not change since)."""
        if not row_ids:
            return {}
        dataset = self._db.dataset(CHUNKS, version)
        table = dataset._take_rows(list(row_ids), columns=["content", "view", "role", "_rowid"])
        found = zip(
            table["_rowid"].to_pylist(),
            table["view"].to_pylist(),
            table["content"].to_pylist(),
            table["role"].to_pylist(),
            strict=True,
        )
        views = {
            int(row_id): unpack_view(view, content, role)
            for row_id, view, content, role in found
            if view is not None
        }
        if len(views) < table.num_rows:  # rows an older lode wrote after the migration: no view cell
            missing = [r for r in row_ids if r not in views]
            full = dataset._take_rows(missing, columns=[*VIEW_COLUMNS, "_rowid"])
            views.update((int(r["_rowid"]), to_chunk_view(r)) for r in rows(full))
        return views

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
