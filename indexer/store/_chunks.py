"""Chunks (``code_chunks``): one row per chunk, its text, metadata and vector."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from contextlib import suppress
from typing import Any

import numpy as np

from indexer.models import Chunk, ChunkFilter, ChunkView, FileChunk, StoredChunk
from indexer.store._filters import chunk_where
from indexer.store._lance._db import Db
from indexer.store._lance._replace import replace_rows
from indexer.store._rows import (
    CHUNK_COLUMNS,
    CHUNK_FIELDS,
    VIEW_COLUMNS,
    FileWrite,
    chunk_columns,
    chunks_from_columns,
    rows,
    table_from_columns,
    to_chunk_view,
    to_stored_chunk,
    unpack_view,
    vector_matrix,
)
from indexer.store._schema import CHUNKS, chunks_schema
from indexer.store._sql import and_all, equals, in_list, quote
from indexer.store._vectors import BACKLOG, CURRENT

__all__ = ["Chunks"]


class Chunks:
    """Writes and reads of ``code_chunks`` by id, row id, file and filter (the ranked reads
    of a search are ``Search``'s)."""

    def __init__(self, db: Db) -> None:
        self._db = db

    def merge(self, writes: Sequence[FileWrite], stamp: Any, append: bool = False) -> None:
        """Swap in every chunk of these files (one commit; inside ``Files.replace``)."""
        db = self._db
        cols: dict[str, list[Any]] = defaultdict(list)
        for write in writes:
            for name, values in chunk_columns(write, stamp, db.placeholder).items():
                cols[name].extend(values)
        vectors = cols.pop("vectors", [])
        matrix = np.stack(vectors) if vectors else np.zeros((0, db.dimension), dtype=np.float32)
        table = table_from_columns(
            {**cols, "embedding": db.vector_array(matrix)}, chunks_schema(db.dimension)
        )
        if append:
            db.table(CHUNKS).add(table)
            return
        file_ids = sorted({w.document.id for w in writes})
        replace_rows(db, CHUNKS, in_list("file_id", file_ids), table)  # fresh ids: no match elsewhere

    def get(self, ids: Sequence[str]) -> list[StoredChunk]:
        """Chunks by id, in the order asked (unknown ids are left out)."""
        table = self._db.select_in(CHUNKS, "id", ids, CHUNK_COLUMNS)
        found = {r["id"]: to_stored_chunk(r) for r in rows(table)}
        return [found[i] for i in ids if i in found]

    def views(self, refs: Sequence[tuple[str, int]], version: int | None = None) -> list[ChunkView]:
        """Views of chunks by (id, row id) as search candidates carry them, in the order asked;
        read in ``version`` of the chunk table when given (the version they were found in).

        Reading by row id skips the id lookup; a row id that no longer holds its chunk
        (the table was compacted or rewritten since) falls back to the lookup by id.
        """
        found: dict[str, ChunkView] = {}
        known = [row_id for _, row_id in refs if row_id >= 0]
        if known and version is not None:
            with suppress(OSError, RuntimeError, ValueError):  # that version's files pruned since
                found.update((v.id, v) for v in self.views_at_rows(known, version).values())
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
            found.update((c.id, ChunkView.of(c)) for c in self.get(missing))
        return [found[i] for i, _ in refs if i in found]

    def views_at_rows(self, row_ids: Sequence[int], version: int | None = None) -> dict[int, ChunkView]:
        """Views of chunks by row id in version ``version`` of the chunk table (the version
        the row ids were found in; when None, the newest, and the caller checks that it did
        not change since)."""
        if not row_ids:
            return {}
        dataset = self._db.dataset(CHUNKS, version)
        found = rows(dataset._take_rows(list(row_ids), columns=["content", "view", "role", "_rowid"]))
        views = {
            int(r["_rowid"]): unpack_view(r["view"], r["content"], r["role"])
            for r in found
            if r["view"] is not None
        }
        if len(views) < len(found):  # rows an older lode wrote after the migration: no view cell
            missing = [r for r in row_ids if r not in views]
            full = dataset._take_rows(missing, columns=[*VIEW_COLUMNS, "_rowid"])
            views.update((int(r["_rowid"]), to_chunk_view(r)) for r in rows(full))
        return views

    def at_line(self, file_id: str, line: int) -> dict[str, Any] | None:
        """The chunk of a file holding 1-based ``line`` (``id``, ``start_line``, ``end_line``,
        ``node_type``, ``node_name``; the shortest when pieces overlap), or None when no
        chunk holds it (a blank line between units)."""
        where = f"file_id = {quote(file_id)} AND start_line <= {int(line)} AND end_line >= {int(line)}"
        table = self._db.dataset(CHUNKS).to_table(
            columns=["id", "start_line", "end_line", "node_type", "node_name"], filter=where
        )
        found = rows(table)
        return min(found, key=lambda r: (r["end_line"] - r["start_line"], r["id"])) if found else None

    def of_files(self, file_ids: Sequence[str]) -> list[StoredChunk]:
        """Every chunk of these files, by file then position."""
        found = map(to_stored_chunk, rows(self._db.select_in(CHUNKS, "file_id", file_ids, CHUNK_COLUMNS)))
        return sorted(found, key=lambda c: (c.file_path, c.chunk.chunk_index))

    def by_file(self, file_ids: Sequence[str]) -> dict[str, list[Chunk]]:
        """Every chunk of these files by file id, in chunk order (read column by column, for
        the outline's build: much faster than row dicts for whole projects)."""
        select = ["file_id", *CHUNK_FIELDS]
        found = self._db.select_in(CHUNKS, "file_id", file_ids, select)
        cols = {name: found[name].to_pylist() for name in select}
        out: dict[str, list[Chunk]] = {}
        for file_id, chunk in zip(cols.pop("file_id"), chunks_from_columns(cols), strict=True):
            out.setdefault(file_id, []).append(chunk)
        for chunks in out.values():
            chunks.sort(key=lambda c: c.chunk_index)
        return out

    def windows(self, spans: Sequence[tuple[str, int, int]]) -> list[StoredChunk]:
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
            out.extend(map(to_stored_chunk, rows(self._db.select(CHUNKS, where, CHUNK_COLUMNS))))
        unique = {c.id: c for c in out}
        return sorted(unique.values(), key=lambda c: (c.file_id, c.chunk.chunk_index))

    def with_vectors(self, flt: ChunkFilter) -> list[tuple[StoredChunk, np.ndarray | None]]:
        """Every chunk admitted by ``flt`` (meant for a few files) with its vector if it has one."""
        where = chunk_where(flt) or "true"
        table = self._db.arrow(
            CHUNKS, lambda t: t.query().where(where).select([*CHUNK_COLUMNS, "embedding"]).to_arrow()
        )
        out: list[tuple[StoredChunk, np.ndarray | None]] = []
        for row in rows(table):
            vec = np.asarray(row["embedding"], dtype=np.float32) if row["embedded"] else None
            out.append((to_stored_chunk(row), vec))
        return out

    def for_ranking(self, flt: ChunkFilter) -> list[FileChunk]:
        """Every chunk admitted by ``flt`` (meant for a few files) as ranking within a file
        reads it: id, row id, position, text and vector (6 columns, not whole chunks)."""
        where = chunk_where(flt) or "true"
        columns = ["id", "file_id", "chunk_index", "content", "embedded", "embedding"]
        table = self._db.arrow(
            CHUNKS, lambda t: t.query().where(where).select(columns).with_row_id().to_arrow()
        )
        if not table.num_rows:
            return []
        matrix = vector_matrix(table["embedding"], self._db.dimension)
        cols = [table[name].to_pylist() for name in (*columns[:5], "_rowid")]
        return [
            FileChunk(i, int(row_id), fid, index or 0, content or "", matrix[n] if done else None)
            for n, (i, fid, index, content, done, row_id) in enumerate(zip(*cols, strict=True))
        ]

    def count(self, project_id: str | None = None, embedded: bool | None = None) -> int:
        """Number of chunks, optionally of one project and/or by embedded state (True: with a
        vector of their current text; False: phase 2's backlog)."""
        where = and_all(
            [
                equals("project_id", project_id),
                None if embedded is None else (CURRENT if embedded else BACKLOG),
            ]
        )
        return int(self._db.table(CHUNKS).count_rows(where))
