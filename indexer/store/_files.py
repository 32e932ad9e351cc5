"""A file's rows across tables: the atomic replace and delete of its chunks, symbols and
document, the repair of what an interrupted write left half-done (rows of another version
of their file, rows of no document, documents missing chunks, re-chunks stopped midway:
write intents), and the files that failed (``file_errors``)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from indexer.store._chunks import Chunks
from indexer.store._documents import Documents
from indexer.store._lance._db import Db
from indexer.store._rows import FileWrite, now, parts, rows
from indexer.store._schema import (
    CHUNKS,
    DOCUMENTS,
    FILE_ERRORS,
    INTENTS,
    SYMBOLS,
    file_errors_schema,
    intents_schema,
)
from indexer.store._sql import and_all, equals, in_list, quote
from indexer.store._symbols import Symbols
from indexer.store._vocabulary import Vocabulary, words_of

__all__ = ["Files"]


def _words(writes: Sequence[FileWrite]) -> set[str]:
    """The vocabulary words of the chunks of ``writes`` (computed ahead where they were)."""
    out = words_of(item.chunk.content for write in writes if write.words is None for item in write.chunks)
    for write in writes:
        if write.words:
            out.update(write.words.split("\n"))
    return out


class Files:
    """Writes of whole files across ``code_chunks``, ``code_symbols`` and ``code_documents``."""

    def __init__(
        self, db: Db, documents: Documents, chunks: Chunks, symbols: Symbols, vocabulary: Vocabulary
    ) -> None:
        self._db = db
        self._documents = documents
        self._chunks = chunks
        self._symbols = symbols
        self._vocabulary = vocabulary

    def replace(self, writes: Sequence[FileWrite], *, maybe_new: bool = False) -> None:
        """Swap in new versions of files: all their chunks, then their symbols, then their
        documents.

        One commit per table (``replace_rows``): readers see either a file's old chunks or
        its new ones, never both or neither. Lance has no transaction across tables: a
        crash between the commits leaves chunks (and maybe symbols) whose ``file_hash``
        differs from their document's ``content_hash``, or of no document at all, which
        ``repair`` finds and the file is indexed again whole. A file whose content the store
        holds already (a full re-chunk) would not show that way: such files are first
        recorded as being written (``write_intents``) and forgotten after the documents'
        commit.
        """
        if not writes:
            return
        db = self._db
        stamp = now()
        file_ids = sorted({w.document.id for w in writes})
        rewrites = sorted({w.document.id for w in writes if w.rewrite})
        with db.write_unit(), db.write_lock:
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
            self._vocabulary.record(_words(writes))  # before the chunks that hold them
            self._chunks.merge(writes, stamp, append=fresh)
            self._symbols.merge(writes, append=fresh)
            self._documents.merge(writes, stamp, append=fresh)
            if rewrites:
                self._forget_intents(rewrites)
            db.cache.clear()
            added = sum(len(w.chunks) for w in writes) + len(writes)
            db.changes.written += added
            db.changes.added += added

    def _any_rows(self, table: str, column: str, values: Sequence[str]) -> bool:
        return any(self._db.table(table).count_rows(in_list(column, part)) for part in parts(list(values)))

    def delete(self, file_ids: Sequence[str]) -> None:
        """Remove files' chunks, then their symbols, then their documents (a crash between
        leaves a document without its chunks, which ``repair`` re-queues)."""
        if not file_ids:
            return
        db = self._db
        with db.write_unit(), db.write_lock:
            for part in parts(list(file_ids)):
                db.table(CHUNKS).delete(in_list("file_id", part))
                db.table(SYMBOLS).delete(in_list("file_id", part))
                db.table(DOCUMENTS).delete(in_list("id", part))
            db.cache.clear()
            db.changes.written += len(file_ids)

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
        self._db.table(INTENTS).add(table)

    def _forget_intents(self, file_ids: Sequence[str]) -> None:
        for part in parts(list(file_ids)):
            self._db.table(INTENTS).delete(in_list("file_id", part))

    def _intents(self, project_id: str) -> set[str]:
        table = self._db.select(INTENTS, f"project_id = {quote(project_id)}", ["file_id"])
        return set(table["file_id"].to_pylist())

    def _file_hashes(self, table: str, project_id: str) -> tuple[dict[str, set[str]], dict[str, int]]:
        """file id → the ``file_hash`` values of its rows in ``table``, and its row count."""
        where = f"project_id = {quote(project_id)}"
        # through pylance: several times faster than lancedb's query builder
        found = self._db.dataset(table).to_table(columns=["file_id", "file_hash"], filter=where)
        grouped = found.group_by(["file_id", "file_hash"]).aggregate([("file_id", "count")])
        hashes: dict[str, set[str]] = defaultdict(set)
        counts: dict[str, int] = defaultdict(int)
        for file_id, file_hash, count in zip(
            grouped["file_id"].to_pylist(),
            grouped["file_hash"].to_pylist(),
            grouped["file_id_count"].to_pylist(),
            strict=True,
        ):
            hashes[file_id].add(file_hash)
            counts[file_id] += count
        return hashes, counts

    def repair(self, project_id: str) -> set[str]:
        """Undo what an interrupted run left half-done; return file paths to re-index.

        Rows of files a re-chunk was interrupted on (an intent left behind) are dropped.
        Orphan chunks and symbols (no document) are deleted. A document whose chunks or
        symbols carry another file hash, or that has fewer chunks than it records, is
        dropped so the file is indexed again from scratch.
        """
        seen, counts = self._file_hashes(CHUNKS, project_id)
        symbol_hashes, _ = self._file_hashes(SYMBOLS, project_id)
        interrupted = self._intents(project_id)
        states = self._documents.states(project_id)
        by_id = {s.id: s for s in states.values()}
        orphans = sorted({fid for fid in (*seen, *symbol_hashes, *interrupted) if fid not in by_id})
        dirty = [
            s
            for s in states.values()
            if s.id in interrupted
            or seen.get(s.id, {s.content_hash}) != {s.content_hash}
            or symbol_hashes.get(s.id, {s.content_hash}) != {s.content_hash}
            or counts.get(s.id, 0) != s.chunk_count
        ]
        db = self._db
        with db.write_unit(), db.write_lock:
            for part in parts(orphans):
                db.table(CHUNKS).delete(in_list("file_id", part))
                db.table(SYMBOLS).delete(in_list("file_id", part))
            self.delete([s.id for s in dirty])
            if interrupted:
                self._forget_intents(sorted(interrupted))
        return {s.file_path for s in dirty}

    # ---- failures as data ---------------------------------------------------------
    def record_error(self, project_id: str, file_path: str, stage: str, reason: str) -> None:
        """Remember that a file failed at a stage (chunk/embed); the next run retries it."""
        row = {
            "id": f"{project_id}:{stage}:{file_path}",
            "project_id": project_id,
            "file_path": file_path,
            "stage": stage,
            "reason": reason[:500],
            "at": now(),
        }
        table = pa.Table.from_pylist([row], schema=file_errors_schema())
        with self._db.write_lock:
            merge = self._db.table(FILE_ERRORS).merge_insert("id")
            merge.when_matched_update_all().when_not_matched_insert_all().execute(table)

    def clear_errors(self, project_id: str, file_paths: Sequence[str], stage: str | None = None) -> None:
        """Forget failures of files that now went through."""
        if not file_paths or self._db.table(FILE_ERRORS).count_rows() == 0:
            return
        with self._db.write_lock:
            for part in parts(list(file_paths)):
                where = and_all(
                    [f"project_id = {quote(project_id)}", in_list("file_path", part), equals("stage", stage)]
                )
                self._db.table(FILE_ERRORS).delete(where or "false")

    def errors(self, project_id: str | None = None) -> list[dict[str, Any]]:
        """Recorded failures: project_id, file_path, stage, reason, at."""
        where = equals("project_id", project_id)
        return rows(self._db.select(FILE_ERRORS, where, ["project_id", "file_path", "stage", "reason", "at"]))
