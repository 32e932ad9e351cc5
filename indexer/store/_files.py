"""Documents and chunks: per-file atomic replace, deletes, reads, and repair."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from typing import Any

import numpy as np
import pyarrow as pa

from indexer.models import ChunkView, Document, StoredChunk
from indexer.store._base import StoreBase, now, rows, unit_mean
from indexer.store._rows import (
    CHUNK_COLUMNS,
    VIEW_COLUMNS,
    DocState,
    FileWrite,
    chunk_columns,
    document_search_text,
    table_from_columns,
    to_chunk_view,
    to_document,
    to_stored_chunk,
    unpack_view,
)
from indexer.store._schema import (
    CHUNKS,
    DOCUMENTS,
    FILE_ERRORS,
    INTENTS,
    SYMBOLS,
    chunks_schema,
    documents_schema,
    intents_schema,
)
from indexer.store._sql import and_all, in_list, quote
from indexer.store._symbols import SymbolsMixin
from indexer.store._vectors import BACKLOG, CURRENT
from indexer.store._vocabulary import VocabularyMixin, words_of

__all__ = ["FilesMixin"]

_DOC_META = [
    "id", "project_id", "file_path", "content_hash", "file_size", "last_modified", "indexed_at",
    "languages", "primary_language", "chunk_count", "keywords", "summary", "embedded", "role",
]  # fmt: skip


def _select_where(where: str, columns: list[str]) -> Callable[[Any], Any]:
    """An async query (for ``_arrow``): the ``columns`` of every row matching ``where``."""
    return lambda table: table.query().where(where).select(columns).to_arrow()


def _chunked(items: Sequence[str], size: int = 500) -> Iterable[Sequence[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _outdated() -> str:
    """Documents another chunker than this lode's cut (null: before versions were kept)."""
    from indexer.chunker import CHUNKER_VERSION  # (the chunker's grammars: not on a store's start)

    return f"(chunker_version IS NULL OR chunker_version != {int(CHUNKER_VERSION)})"


def _words(writes: Sequence[FileWrite]) -> set[str]:
    """The vocabulary words of the chunks of ``writes`` (computed ahead where they were)."""
    out = words_of(item.chunk.content for write in writes if write.words is None for item in write.chunks)
    for write in writes:
        if write.words:
            out.update(write.words.split("\n"))
    return out


class FilesMixin(SymbolsMixin, VocabularyMixin, StoreBase):
    """Writes and reads of ``code_documents``, ``code_chunks`` and ``code_symbols``."""

    # ---- the incremental diff -------------------------------------------------------
    def document_states(self, project_id: str) -> dict[str, DocState]:
        """file_path → what the diff needs, for every document of a project."""
        cols = [
            "id", "file_path", "content_hash", "file_size", "last_modified", "chunk_count", "embedded",
            "chunker_version",
        ]  # fmt: skip
        table = (
            self._t(DOCUMENTS)
            .search()
            .where(f"project_id = {quote(project_id)}")
            .select(cols)
            .limit(None)
            .to_arrow()
        )
        states = {}
        for r in rows(table):
            r["chunker_version"] = r["chunker_version"] or 0  # null: cut before versions were kept
            states[r["file_path"]] = DocState(**{c: r[c] for c in cols})
        return states

    # ---- writes -----------------------------------------------------------------------
    def replace_files(self, writes: Sequence[FileWrite], *, maybe_new: bool = False) -> None:
        """Swap in new versions of files: all their chunks, then their symbols, then their
        documents.

        One merge per table: readers see either a file's old chunks or its new ones, never
        both or neither. LanceDB has no transaction across tables: a crash between the
        merges leaves chunks (and maybe symbols) whose ``file_hash`` differs from their
        document's ``content_hash``, or of no document at all, which ``repair`` finds and
        the file is indexed again whole. A file whose content the store holds already (a
        full re-chunk) would not show that way: such files are first recorded as being
        written (``write_intents``) and forgotten after the documents' commit.
        """
        if not writes:
            return
        stamp = now()
        file_ids = sorted({w.document.id for w in writes})
        rewrites = sorted({w.document.id for w in writes if w.rewrite})
        with self.write_unit(), self._write_lock:
            if rewrites:
                self._record_intents(writes[0].document.project_id, rewrites)
            # files the store has never seen (a first index) are appended: same result,
            # without a merge that joins against the whole table
            # (``maybe_new``: the caller knows no document of them; checked, as a crash can
            # leave chunks behind; edits of known files skip the check and merge)
            fresh = (
                maybe_new
                and not self._any_rows(CHUNKS, "file_id", file_ids)
                and not self._any_rows(DOCUMENTS, "id", file_ids)
            )
            self._merge_chunks(writes, stamp, append=fresh)
            self._merge_symbols(writes, append=fresh)
            self._merge_documents(writes, stamp, append=fresh)
            if rewrites:
                self._forget_intents(rewrites)
            self._cache.clear()
            added = sum(len(w.chunks) for w in writes) + len(writes)
            self._rows_written += added
            self._rows_added += added

    def _any_rows(self, table: str, column: str, values: Sequence[str]) -> bool:
        return any(self._t(table).count_rows(in_list(column, part)) for part in _chunked(list(values)))

    def _merge_chunks(self, writes: Sequence[FileWrite], stamp: Any, append: bool = False) -> None:
        self._record_words(_words(writes))
        cols: dict[str, list[Any]] = defaultdict(list)
        for write in writes:
            for name, values in chunk_columns(write, stamp, self.placeholder).items():
                cols[name].extend(values)
        vectors = cols.pop("vectors", [])
        schema = chunks_schema(self.dimension)
        no_vec = schema.remove(schema.get_field_index("embedding"))
        table = table_from_columns(dict(cols), no_vec)
        matrix = np.stack(vectors) if vectors else np.zeros((0, self.dimension), dtype=np.float32)
        table = table.add_column(schema.get_field_index("embedding"), "embedding", self._vector_array(matrix))
        if append:
            self._t(CHUNKS).add(table)
            return
        file_ids = sorted({w.document.id for w in writes})
        (
            self._t(CHUNKS)
            .merge_insert("id")
            .when_not_matched_insert_all()
            .when_not_matched_by_source_delete(in_list("file_id", file_ids))
            .execute(table)
        )

    def _merge_documents(self, writes: Sequence[FileWrite], stamp: Any, append: bool = False) -> None:
        records = []
        vectors = []
        for write in writes:
            doc = write.document
            chunk_vectors = [c.vector for c in write.chunks if c.vector is not None]
            complete = bool(write.chunks) and len(chunk_vectors) == len(write.chunks)
            vectors.append(unit_mean(chunk_vectors) if complete else self.placeholder)
            records.append(
                {
                    "id": doc.id,
                    "project_id": doc.project_id,
                    "file_path": doc.file_path,
                    "content": write.content,
                    "search_text": document_search_text(doc.file_path, write.content),
                    "content_hash": doc.content_hash,
                    "embedded": complete or not write.chunks,
                    "file_size": doc.file_size,
                    "last_modified": doc.last_modified,
                    "indexed_at": stamp,
                    "languages": list(doc.languages),
                    "primary_language": doc.primary_language,
                    "chunk_count": len(write.chunks),
                    "keywords": list(doc.keywords),
                    "summary": doc.summary,
                    "role": doc.role,
                    "chunker_version": write.chunker_version,
                }
            )
        schema = documents_schema(self.dimension)
        cols = {name: [r[name] for r in records] for name in records[0]}
        no_vec = schema.remove(schema.get_field_index("content_embedding"))
        table = table_from_columns(cols, no_vec)
        table = table.add_column(
            schema.get_field_index("content_embedding"),
            "content_embedding",
            self._vector_array(np.stack(vectors)),
        )
        if append:
            self._t(DOCUMENTS).add(table)
            return
        self._t(DOCUMENTS).merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(
            table
        )

    def delete_files(self, file_ids: Sequence[str]) -> None:
        """Remove files' chunks, then their symbols, then their documents (a crash between
        leaves a document without its chunks, which ``repair`` re-queues)."""
        if not file_ids:
            return
        with self.write_unit(), self._write_lock:
            for part in _chunked(list(file_ids)):
                self._t(CHUNKS).delete(in_list("file_id", part))
                self._t(SYMBOLS).delete(in_list("file_id", part))
                self._t(DOCUMENTS).delete(in_list("id", part))
            self._cache.clear()
            self._rows_written += len(file_ids)

    def update_file_stats(self, stats: Sequence[tuple[str, int, float]]) -> None:
        """Record a new size/mtime for files whose content did not change."""
        if not stats:
            return
        table = pa.table(
            {
                "id": [s[0] for s in stats],
                "file_size": pa.array([s[1] for s in stats], pa.int64()),
                "last_modified": pa.array([s[2] for s in stats], pa.float64()),
            }
        )
        with self._write_lock:
            self._t(DOCUMENTS).merge_insert("id").when_matched_update_all().execute(table)

    # ---- reads ------------------------------------------------------------------------
    def get_documents(self, ids: Sequence[str]) -> list[Document]:
        """Documents by id (unknown ids are left out)."""
        out: list[Document] = []
        for part in _chunked(list(ids)):
            table = self._arrow(DOCUMENTS, _select_where(in_list("id", part), _DOC_META))
            out.extend(to_document(r) for r in rows(table))
        return out

    def find_document(self, project_id: str, file_path: str) -> Document | None:
        """The document of ``file_path`` in a project, if indexed."""
        where = f"project_id = {quote(project_id)} AND file_path = {quote(file_path)}"
        found = rows(self._t(DOCUMENTS).search().where(where).select(_DOC_META).limit(1).to_arrow())
        return to_document(found[0]) if found else None

    def content_at(self, project_ids: Sequence[str], file_path: str) -> tuple[str, str] | None:
        """(project id, full text) of ``file_path`` in the first of these projects that has it
        (one query: what reading a file near a symbol costs)."""
        where = and_all([in_list("project_id", project_ids), f"file_path = {quote(file_path)}"])
        table = self._arrow(DOCUMENTS, _select_where(where or "false", ["project_id", "content"]))
        found = {r["project_id"]: r["content"] or "" for r in rows(table)}
        first = next((p for p in project_ids if p in found), None)
        return (first, found[first]) if first is not None else None

    def document_content(self, document_id: str) -> str | None:
        """The full text of a document as indexed."""
        found = rows(
            self._t(DOCUMENTS)
            .search()
            .where(in_list("id", [document_id]))
            .select(["content"])
            .limit(None)
            .to_arrow()
        )
        return found[0]["content"] if found else None

    def list_documents(
        self, project_id: str, offset: int = 0, limit: int = 100
    ) -> tuple[list[Document], int]:
        """A page of a project's documents by path, and the total count."""
        where = f"project_id = {quote(project_id)}"
        table = self._t(DOCUMENTS).search().where(where).select(["file_path", "id"]).limit(None).to_arrow()
        ordered = sorted(zip(table["file_path"].to_pylist(), table["id"].to_pylist(), strict=True))
        page = [doc_id for _, doc_id in ordered[offset : offset + limit]]
        by_id = {d.id: d for d in self.get_documents(page)}
        return [by_id[i] for i in page if i in by_id], len(ordered)

    def get_chunks(self, ids: Sequence[str]) -> list[StoredChunk]:
        """Chunks by id, in the order asked (unknown ids are left out)."""
        found: dict[str, StoredChunk] = {}
        for part in _chunked(list(ids)):
            table = (
                self._t(CHUNKS)
                .search()
                .where(in_list("id", part))
                .select(CHUNK_COLUMNS)
                .limit(None)
                .to_arrow()
            )
            found.update((r["id"], to_stored_chunk(r)) for r in rows(table))
        return [found[i] for i in ids if i in found]

    def get_chunks_at(self, refs: Sequence[tuple[str, int]], version: int | None = None) -> list[ChunkView]:
        """Views of chunks by (id, row id) as search candidates carry them, in the order asked;
        read in ``version`` of the chunk table when given (the version they were found in).

        Reading by row id skips the id lookup; a row id that no longer holds its chunk
        (the table was compacted or rewritten since) falls back to the lookup by id.
        """
        found: dict[str, ChunkView] = {}
        known = [row_id for _, row_id in refs if row_id >= 0]
        if known and version is not None:
            with suppress(OSError, RuntimeError, ValueError):  # that version's files pruned since
                found.update((v.id, v) for v in self.chunks_at_rows(known, version).values())
        elif known:
            try:
                table = self._arrow(CHUNKS, lambda t: t.take_row_ids(known).select(VIEW_COLUMNS).to_arrow())
                found.update((r["id"], to_chunk_view(r)) for r in rows(table))
            except (OSError, RuntimeError, ValueError):  # rows moved by a compaction: by id below
                pass
        missing = [i for i, _ in refs if i not in found]
        if missing:
            found.update((c.id, ChunkView.of(c)) for c in self.get_chunks(missing))
        return [found[i] for i, _ in refs if i in found]

    def chunks_at_rows(self, row_ids: Sequence[int], version: int | None = None) -> dict[int, ChunkView]:
        """Views of chunks by row id in version ``version`` of the chunk table (the version
        the row ids were found in; when None, the newest, and the caller checks that it did
        not change since)."""
        if not row_ids:
            return {}
        dataset = self._dataset(CHUNKS, version)
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

    def chunks_of_files(self, file_ids: Sequence[str]) -> list[StoredChunk]:
        """Every chunk of these files, by file then position."""
        out: list[StoredChunk] = []
        for part in _chunked(list(file_ids)):
            table = self._t(CHUNKS).search().where(in_list("file_id", part)).select(CHUNK_COLUMNS).limit(None)
            out.extend(to_stored_chunk(r) for r in rows(table.to_arrow()))
        out.sort(key=lambda c: (c.file_path, c.chunk.chunk_index))
        return out

    def count_chunks(self, project_id: str | None = None, embedded: bool | None = None) -> int:
        """Number of chunks, optionally of one project and/or by embedded state (True: with a
        vector of their current text; False: phase 2's backlog)."""
        where = and_all(
            [
                f"project_id = {quote(project_id)}" if project_id else None,
                None if embedded is None else (CURRENT if embedded else BACKLOG),
            ]
        )
        return int(self._t(CHUNKS).count_rows(where))

    def outdated_files(self, project_id: str) -> list[str]:
        """Paths of a project's files an older lode chunked (another chunker version):
        their symbols and roles come once they are chunked again."""
        where = and_all([f"project_id = {quote(project_id)}", _outdated()])
        table = self._t(DOCUMENTS).search().where(where).select(["file_path"]).limit(None).to_arrow()
        return sorted(table["file_path"].to_pylist())

    def count_outdated_files(self, project_id: str | None = None) -> int:
        """Number of files an older lode chunked (``outdated_files``); at most a second old."""
        key = f"outdated:{project_id}"
        cached = self._cache.get(key)
        if cached is None:
            where = and_all([f"project_id = {quote(project_id)}" if project_id else None, _outdated()])
            cached = int(self._t(DOCUMENTS).count_rows(where))
            self._cache.put(key, cached)
        return int(cached)

    def count_documents(self, project_id: str | None = None) -> int:
        """Number of documents, optionally of one project."""
        return int(self._t(DOCUMENTS).count_rows(f"project_id = {quote(project_id)}" if project_id else None))

    # ---- consistency ----------------------------------------------------------------
    def _record_intents(self, project_id: str, file_ids: Sequence[str]) -> None:
        table = pa.table(
            {
                "file_id": file_ids,
                "project_id": [project_id] * len(file_ids),
                "at": pa.array([now()] * len(file_ids), pa.timestamp("us", tz="UTC")),
            },
            schema=intents_schema(),
        )
        self._t(INTENTS).add(table)

    def _forget_intents(self, file_ids: Sequence[str]) -> None:
        for part in _chunked(list(file_ids)):
            self._t(INTENTS).delete(in_list("file_id", part))

    # ---- failures as data ---------------------------------------------------------
    def record_file_error(self, project_id: str, file_path: str, stage: str, reason: str) -> None:
        """Remember that a file failed at a stage (chunk/embed); the next run retries it."""
        from indexer.store._schema import file_errors_schema

        row = {
            "id": f"{project_id}:{stage}:{file_path}",
            "project_id": project_id,
            "file_path": file_path,
            "stage": stage,
            "reason": reason[:500],
            "at": now(),
        }
        table = pa.Table.from_pylist([row], schema=file_errors_schema())
        with self._write_lock:
            self._t(FILE_ERRORS).merge_insert(
                "id"
            ).when_matched_update_all().when_not_matched_insert_all().execute(table)

    def clear_file_errors(self, project_id: str, file_paths: Sequence[str], stage: str | None = None) -> None:
        """Forget failures of files that now went through."""
        if not file_paths or self._t(FILE_ERRORS).count_rows() == 0:
            return
        with self._write_lock:
            for part in _chunked(list(file_paths)):
                where = and_all(
                    [
                        f"project_id = {quote(project_id)}",
                        in_list("file_path", part),
                        f"stage = {quote(stage)}" if stage else None,
                    ]
                )
                self._t(FILE_ERRORS).delete(where or "false")

    def file_errors(self, project_id: str | None = None) -> list[dict[str, Any]]:
        """Recorded failures: project_id, file_path, stage, reason, at."""
        query = self._t(FILE_ERRORS).search()
        if project_id:
            query = query.where(f"project_id = {quote(project_id)}")
        return rows(query.select(["project_id", "file_path", "stage", "reason", "at"]).limit(None).to_arrow())
