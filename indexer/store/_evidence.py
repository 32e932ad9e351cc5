"""Reads for discovery: many query vectors in one search, chunk vectors by id, chunk windows."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from indexer.models import ChunkFilter, StoredChunk
from indexer.store._base import StoreBase, rows, vector_matrix
from indexer.store._filters import chunk_where
from indexer.store._rows import CHUNK_COLUMNS, to_stored_chunk
from indexer.store._schema import CHUNKS
from indexer.store._search import Candidate
from indexer.store._sql import in_list, quote

__all__ = ["EvidenceMixin"]

_PART = 500


class EvidenceMixin(StoreBase):
    """Batched reads that keep discovery to a few store calls per question."""

    def vector_candidates_many(self, vectors: np.ndarray, flt: ChunkFilter, k: int) -> list[list[Candidate]]:
        """For each query vector, the ``k`` nearest embedded chunks admitted by ``flt``
        (score: cosine similarity), in one store call."""
        matrix = np.asarray(vectors, dtype=np.float32).reshape(-1, self.dimension)
        if not len(matrix):
            return []
        table = (
            self._t(CHUNKS)
            .search(matrix if len(matrix) > 1 else matrix[0], vector_column_name="embedding")
            .distance_type("cosine")
            .nprobes(int(getattr(self, "nprobes", 32)))
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

    def chunk_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The vectors of the embedded chunks among ``ids`` (others are left out)."""
        found: dict[str, np.ndarray] = {}
        unique = sorted(set(ids))
        for start in range(0, len(unique), _PART):
            part = unique[start : start + _PART]
            table = (
                self._t(CHUNKS)
                .search()
                .where(f"{in_list('id', part)} AND embedded = true")
                .select(["id", "embedding"])
                .limit(None)
                .to_arrow()
            )
            matrix = vector_matrix(table["embedding"], self.dimension)
            found.update(zip(table["id"].to_pylist(), matrix, strict=True))
        return found

    def chunk_windows(self, spans: Sequence[tuple[str, int, int]]) -> list[StoredChunk]:
        """Chunks of each (file id, first index, last index) span, by file then position."""
        if not spans:
            return []
        clauses = [
            f"(file_id = {quote(fid)} AND chunk_index >= {int(lo)} AND chunk_index <= {int(hi)})"
            for fid, lo, hi in spans
        ]
        out: list[StoredChunk] = []
        for start in range(0, len(clauses), 100):
            where = " OR ".join(clauses[start : start + 100])
            table = self._t(CHUNKS).search().where(where).select(CHUNK_COLUMNS).limit(None).to_arrow()
            out.extend(to_stored_chunk(r) for r in rows(table))
        unique = {c.id: c for c in out}
        return sorted(unique.values(), key=lambda c: (c.file_id, c.chunk.chunk_index))
