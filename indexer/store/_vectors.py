"""Vectors: the embedding cache (``embedding_cache``), the phase-2 backlog, and filling the
chunks' and documents' vectors in."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa

from indexer.models import StoredChunk
from indexer.store._lance._db import Db
from indexer.store._rows import (
    CHUNK_COLUMNS,
    parts,
    rows,
    to_chunk,
    to_stored_chunk,
    unit_mean,
    vector_matrix,
)
from indexer.store._schema import CHUNKS, DOCUMENTS, EMBEDDING_CACHE
from indexer.store._sql import and_all, equals, in_list

__all__ = ["BACKLOG", "CURRENT", "OUTDATED", "Vectors"]


#: The chunks phase 2 has to (re-)embed: no vector yet, or one made for a text no longer known.
BACKLOG = "(embedded = false OR vector_text_hash IS NULL)"
#: The chunks whose vector was made for their current embedding text.
CURRENT = "(embedded = true AND vector_text_hash IS NOT NULL)"
#: The chunks whose vector was made for a text no longer known (before an upgrade): it
#: answers searches until phase 2 makes it again.
OUTDATED = "(embedded = true AND vector_text_hash IS NULL)"


class Vectors:
    """Embedding cache and phase-2 (embedding) bookkeeping.

    A vector is known by the hash of the exact text it was made from
    (``indexer.chunker.embedding_input``: a caption with the chunk's name, kind, scope and
    path words, then its content): the cache is keyed by it (with the model id and the
    embedding-text version), and each chunk row records it (``vector_text_hash``), so
    duplicate contents in two files, a renamed file and a changed caption never share a
    vector made for another text."""

    def __init__(self, db: Db) -> None:
        self._db = db

    def _cache_key(self, text_hash: str) -> str:
        from indexer.chunker import embedding_text_version

        # torch and the float graph make the same vectors (one key); int8 ones are others
        encoder = self._db.vector_encoder
        model = self._db.model_id if encoder == "float" else f"{self._db.model_id}@{encoder}"
        return f"{model}:{embedding_text_version()}:{text_hash}"

    def cached(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Cached vectors for these embedding-text hashes (of this store's model)."""
        if not hashes or not self._db.table(EMBEDDING_CACHE).count_rows():  # a first index: nothing to find
            return {}
        keys = [self._cache_key(h) for h in sorted(set(hashes) - {""})]
        table = self._db.select_in(EMBEDDING_CACHE, "key", keys, ["text_hash", "vector"])
        matrix = vector_matrix(table["vector"], self._db.dimension)
        return dict(zip(table["text_hash"].to_pylist(), matrix, strict=True))

    def remember(self, vectors: Mapping[str, np.ndarray]) -> None:
        """Remember vectors by embedding-text hash (existing entries are kept)."""
        if not vectors:
            return
        hashes = sorted(vectors)
        table = pa.table(
            {
                "key": [self._cache_key(h) for h in hashes],
                "model_id": [self._db.model_id] * len(hashes),
                "text_hash": hashes,
                "vector": self._db.vector_array(np.stack([vectors[h] for h in hashes])),
            }
        )
        with self._db.write_lock:
            self._db.table(EMBEDDING_CACHE).merge_insert("key").when_not_matched_insert_all().execute(table)

    def cache_size(self) -> int:
        """Number of cached vectors."""
        return int(self._db.table(EMBEDDING_CACHE).count_rows())

    def of_chunks(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The vectors of the embedded chunks among ``ids`` (others are left out)."""
        table = self._db.select_in(CHUNKS, "id", sorted(set(ids)), ["id", "embedding"], "embedded = true")
        matrix = vector_matrix(table["embedding"], self._db.dimension)
        return dict(zip(table["id"].to_pylist(), matrix, strict=True))

    def backlog(self, project_id: str | None = None) -> list[tuple[str, int]]:
        """(chunk id, priority) of every chunk without a vector of its current text (none
        yet, or one made for another text), in the order phase 2 embeds them: the newest
        run's first (an edited file jumps the backlog), within a run by role
        (``indexer.roles.EMBED_ORDER``: implementation code first), then README and docs
        files ahead of others of their role (the priority's low bit)."""
        from indexer.roles import embed_rank

        where = and_all([BACKLOG, equals("project_id", project_id)])
        table = self._db.select(CHUNKS, where, ["id", "priority", "role"])
        ids, priorities = table["id"].to_pylist(), [p or 0 for p in table["priority"].to_pylist()]
        ranks = [embed_rank(role) for role in table["role"].to_pylist()]
        order = sorted(
            range(len(ids)), key=lambda i: (-(priorities[i] >> 1), ranks[i], -(priorities[i] & 1), ids[i])
        )
        return [(ids[i], priorities[i]) for i in order]

    def pending_chunks(self, ids: Sequence[str]) -> list[StoredChunk]:
        """These chunks if they still exist without a vector of their text, in the order asked."""
        table = self._db.select_in(CHUNKS, "id", ids, CHUNK_COLUMNS, BACKLOG)
        found = {r["id"]: to_stored_chunk(r) for r in rows(table)}
        return [found[i] for i in ids if i in found]

    def refresh_keys(self) -> int:
        """Forget the text hash of every vector made for another text than its chunk's
        embedding text now (after an upgrade that changed ``embedding_text``): phase 2 embeds
        those chunks again, and their old vectors answer searches until then; how many."""
        from indexer.chunker import embedding_input

        batches = self._db.own_dataset(CHUNKS).to_batches(
            columns=[*CHUNK_COLUMNS, "vector_text_hash"], filter="vector_text_hash IS NOT NULL"
        )
        stale = [
            row["id"]
            for batch in batches
            for row in batch.to_pylist()
            if embedding_input(row["file_path"], to_chunk(row))[1] != row["vector_text_hash"]
        ]
        with self._db.write_lock:
            for part in parts(stale):
                self._db.table(CHUNKS).update(
                    where=in_list("id", part), values_sql={"vector_text_hash": "NULL"}
                )
            self._db.cache.clear()
        return len(stale)

    def forget_all(self) -> int:
        """Forget the text hash of every vector (they were made by another kind of encoder):
        phase 2 embeds every chunk again, and the old vectors answer searches until then;
        how many."""
        with self._db.write_lock:
            stale = int(self._db.table(CHUNKS).count_rows("vector_text_hash IS NOT NULL"))
            if stale:
                self._db.table(CHUNKS).update(
                    where="vector_text_hash IS NOT NULL", values_sql={"vector_text_hash": "NULL"}
                )
            self._db.cache.clear()
        return stale

    def write(self, ids: Sequence[str], vectors: np.ndarray, text_hashes: Sequence[str]) -> int:
        """Fill in vectors of chunks that still exist, each made from the embedding text of
        that hash; returns how many were updated.

        Whole rows are written (read by id, their vectors swapped in): a merge of only the
        vector columns rewrites those columns in every fragment its rows are in and takes
        each such fragment out of the vector and scalar indexes, far slower and bigger. The
        new rows miss the indexes until the next fold (``Changes.rewritten``).
        """
        if not ids:
            return 0
        at = {chunk_id: i for i, chunk_id in enumerate(ids)}
        with self._db.write_lock:
            schema = self._db.table(CHUNKS).schema
            found = self._db.select_in(CHUNKS, "id", list(at)).select(schema.names).cast(schema)
            if not found.num_rows:
                return 0
            order = np.asarray([at[i] for i in found["id"].to_pylist()], dtype=np.int64)
            new = {
                "embedding": self._db.vector_array(np.asarray(vectors)[order]),
                "embedded": [True] * found.num_rows,
                "vector_text_hash": [text_hashes[i] for i in order],
            }
            for name, values in new.items():
                field = schema.field(name)
                found = found.set_column(
                    schema.get_field_index(name), field, pa.array(values).cast(field.type)
                )
            self._db.table(CHUNKS).merge_insert("id").when_matched_update_all().execute(found)
            self._db.cache.clear()
            self._db.changes.written += found.num_rows
            self._db.changes.rewritten += found.num_rows
        return int(found.num_rows)

    def complete_documents(self, file_ids: Sequence[str]) -> int:
        """Give documents whose chunks all have vectors their mean vector; returns how many."""
        if not file_ids:
            return 0
        per_file: dict[str, list[np.ndarray]] = defaultdict(list)
        pending: set[str] = set()
        table = self._db.select_in(
            CHUNKS, "file_id", sorted(set(file_ids)), ["file_id", "embedded", "embedding"]
        )
        matrix = vector_matrix(table["embedding"], self._db.dimension)
        for i, (fid, done) in enumerate(
            zip(table["file_id"].to_pylist(), table["embedded"].to_pylist(), strict=True)
        ):
            if done:
                per_file[fid].append(matrix[i])
            else:
                pending.add(fid)
        ready = sorted(fid for fid in per_file if fid not in pending)
        if not ready:
            return 0
        means = np.stack([unit_mean(per_file[f]) for f in ready])
        table = pa.table(
            {
                "id": ready,
                "content_embedding": self._db.vector_array(means),
                "embedded": pa.array([True] * len(ready), pa.bool_()),
            }
        )
        with self._db.write_lock:
            self._db.table(DOCUMENTS).merge_insert("id").when_matched_update_all().execute(table)
        return len(ready)

    def complete_pending(self, project_id: str | None = None) -> int:
        """Complete documents left unembedded although all their chunks have vectors (a run
        killed between ``write`` and ``complete_documents``); returns how many."""
        where = and_all(["embedded = false", "chunk_count > 0", equals("project_id", project_id)])
        table = self._db.select(DOCUMENTS, where, ["id"])
        return self.complete_documents(table["id"].to_pylist())

    def coverage(self, project_id: str | None = None, role: str | None = None) -> float:
        """Share of chunks (of ``role``, or all) with a vector of their current text, in
        [0, 1] (1 when there are none); at most a second old."""
        key = f"coverage:{project_id}:{role}"
        cached = self._db.cache.get(key)
        if cached is not None:
            return float(cached)
        where = and_all([equals("project_id", project_id), equals("role", role)])
        total = int(self._db.table(CHUNKS).count_rows(where))
        done = int(self._db.table(CHUNKS).count_rows(and_all([where, CURRENT]))) if total else 0
        coverage = done / total if total else 1.0
        self._db.cache.put(key, coverage)
        return coverage
