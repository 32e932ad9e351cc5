"""Documents (``code_documents``): one row per indexed file, its text, hash and vector."""

from __future__ import annotations

import threading
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from indexer.models import Document
from indexer.store._lance._db import Db
from indexer.store._lance._replace import replace_rows
from indexer.store._rows import (
    DocState,
    FileWrite,
    document_search_text,
    parts,
    rows,
    table_from_columns,
    to_document,
    unit_mean,
)
from indexer.store._schema import DOCUMENTS, documents_schema
from indexer.store._sql import and_all, equals, in_list, quote

__all__ = ["Documents", "IndexedText", "select_where"]

#: Texts ``Documents.text_at`` keeps (an editor reads the same few files again and again)…
_TEXTS_KEPT = 64
#: …up to this many characters in all.
_TEXT_CHARS_KEPT = 16_000_000

_DOC_META = [
    "id", "project_id", "file_path", "content_hash", "file_size", "last_modified", "indexed_at",
    "languages", "primary_language", "chunk_count", "keywords", "summary", "embedded", "role",
]  # fmt: skip


def select_where(where: str, columns: list[str]) -> Callable[[Any], Any]:
    """An async query (for ``Db.arrow``): the ``columns`` of every row matching ``where``."""
    return lambda table: table.query().where(where).select(columns).to_arrow()


def _outdated() -> str:
    """Documents another chunker than this lode's cut (null: before versions were kept)."""
    from indexer.chunker import CHUNKER_VERSION  # (the chunker's grammars: not on a store's start)

    return f"(chunker_version IS NULL OR chunker_version != {int(CHUNKER_VERSION)})"


@dataclass(frozen=True, slots=True)
class IndexedText:
    """A document's text as indexed, split at ``\\n`` (``Documents.text_at``)."""

    document_id: str
    project_id: str
    file_path: str
    content_hash: str
    """blake3 of the file's bytes as indexed (hex)."""
    lines: tuple[str, ...]
    """The text split at ``\\n`` (a text ending with one ends with an empty item)."""


class Documents:
    """Writes and reads of ``code_documents``."""

    def __init__(self, db: Db) -> None:
        self._db = db
        #: (table version, project id, path) → its text, most recently read last
        self._texts: OrderedDict[tuple[int, str, str], IndexedText] = OrderedDict()
        self._texts_lock = threading.Lock()

    # ---- the incremental diff -------------------------------------------------------
    def states(self, project_id: str) -> dict[str, DocState]:
        """file_path → what the diff needs, for every document of a project."""
        cols = [
            "id", "file_path", "content_hash", "file_size", "last_modified", "chunk_count", "embedded",
            "chunker_version",
        ]  # fmt: skip
        table = self._db.select(DOCUMENTS, f"project_id = {quote(project_id)}", cols)
        states = {}
        for r in rows(table):
            r["chunker_version"] = r["chunker_version"] or 0  # null: cut before versions were kept
            states[r["file_path"]] = DocState(**{c: r[c] for c in cols})
        return states

    # ---- writes -----------------------------------------------------------------------
    def merge(self, writes: Sequence[FileWrite], stamp: Any, append: bool = False) -> None:
        """Swap in the document rows of these files (one commit; inside ``Files.replace``)."""
        cols: dict[str, list[Any]] = defaultdict(list)
        for write in writes:
            doc = write.document
            chunk_vectors = [c.vector for c in write.chunks if c.vector is not None]
            complete = bool(write.chunks) and len(chunk_vectors) == len(write.chunks)
            cols["content_embedding"].append(unit_mean(chunk_vectors) if complete else self._db.placeholder)
            row = {
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
            for name, value in row.items():
                cols[name].append(value)
        vectors = self._db.vector_array(np.stack(cols.pop("content_embedding")))
        table = table_from_columns(
            {**cols, "content_embedding": vectors}, documents_schema(self._db.dimension)
        )
        if append:
            self._db.table(DOCUMENTS).add(table)
            return
        replace_rows(self._db, DOCUMENTS, in_list("id", sorted({w.document.id for w in writes})), table)

    def update_stats(self, stats: Sequence[tuple[str, int, float]]) -> None:
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
        with self._db.write_lock:
            self._db.table(DOCUMENTS).merge_insert("id").when_matched_update_all().execute(table)

    # ---- reads ------------------------------------------------------------------------
    def get(self, ids: Sequence[str]) -> list[Document]:
        """Documents by id (unknown ids are left out)."""
        out: list[Document] = []
        for part in parts(list(ids)):
            table = self._db.arrow(DOCUMENTS, select_where(in_list("id", part), _DOC_META))
            out.extend(to_document(r) for r in rows(table))
        return out

    def find(self, project_id: str, file_path: str) -> Document | None:
        """The document of ``file_path`` in a project, if indexed."""
        where = f"project_id = {quote(project_id)} AND file_path = {quote(file_path)}"
        found = rows(self._db.select(DOCUMENTS, where, _DOC_META, limit=1))
        return to_document(found[0]) if found else None

    def content_at(self, project_ids: Sequence[str], file_path: str) -> tuple[str, str] | None:
        """(project id, full text) of ``file_path`` in the first of these projects that has it
        (one query: what reading a file near a symbol costs)."""
        where = and_all([in_list("project_id", project_ids), f"file_path = {quote(file_path)}"])
        table = self._db.arrow(DOCUMENTS, select_where(where or "false", ["project_id", "content"]))
        found = {r["project_id"]: r["content"] or "" for r in rows(table)}
        first = next((p for p in project_ids if p in found), None)
        return (first, found[first]) if first is not None else None

    def text_at(self, project_id: str, file_path: str) -> IndexedText | None:
        """The text of ``file_path`` in a project as indexed (None when it is not indexed):
        one read through the path's index in the newest version of the table, and the last
        few texts read are kept until the table changes (what an editor reading ranges of
        the files it has open costs)."""
        version = self._db.reader(DOCUMENTS).latest_version()
        key = (version, project_id, file_path)
        with self._texts_lock:
            known = self._texts.get(key)
            if known is not None:
                self._texts.move_to_end(key)
                return known
        where = f"file_path = {quote(file_path)} AND project_id = {quote(project_id)}"
        table = self._db.dataset(DOCUMENTS, version).to_table(
            columns=["id", "content", "content_hash"], filter=where, limit=1
        )
        if not table.num_rows:
            return None
        found = IndexedText(
            document_id=table["id"][0].as_py(),
            project_id=project_id,
            file_path=file_path,
            content_hash=table["content_hash"][0].as_py() or "",
            lines=tuple((table["content"][0].as_py() or "").split("\n")),
        )
        with self._texts_lock:
            self._texts[key] = found
            for old in [k for k in self._texts if k[0] != version]:
                del self._texts[old]
            chars = sum(len(line) for t in self._texts.values() for line in t.lines)
            while len(self._texts) > _TEXTS_KEPT or (len(self._texts) > 1 and chars > _TEXT_CHARS_KEPT):
                _, dropped = self._texts.popitem(last=False)
                chars -= sum(len(line) for line in dropped.lines)
        return found

    def projects_with(self, file_path: str, project_ids: Sequence[str] = ()) -> list[str]:
        """The ids of the projects (of ``project_ids``; all when empty) that index ``file_path``."""
        where = and_all(
            [f"file_path = {quote(file_path)}", in_list("project_id", project_ids) if project_ids else None]
        )
        table = self._db.dataset(DOCUMENTS).to_table(columns=["project_id"], filter=where or "false")
        return sorted(set(table["project_id"].to_pylist()))

    def content(self, document_id: str) -> str | None:
        """The full text of a document as indexed (None when unknown)."""
        return self.contents([document_id]).get(document_id)

    def contents(self, ids: Sequence[str]) -> dict[str, str]:
        """Full texts of documents by id, as indexed (unknown ids are left out; read column
        by column, for the outline's ``cat`` and ``grep``)."""
        found = self._db.select_in(DOCUMENTS, "id", ids, ["id", "content"])
        texts = zip(found["id"].to_pylist(), found["content"].to_pylist(), strict=True)
        return {doc_id: text or "" for doc_id, text in texts}

    def page(self, project_id: str, offset: int = 0, limit: int = 100) -> tuple[list[Document], int]:
        """A page of a project's documents by path, and the total count."""
        where = f"project_id = {quote(project_id)}"
        table = self._db.select(DOCUMENTS, where, ["file_path", "id"])
        ordered = sorted(zip(table["file_path"].to_pylist(), table["id"].to_pylist(), strict=True))
        page = [doc_id for _, doc_id in ordered[offset : offset + limit]]
        by_id = {d.id: d for d in self.get(page)}
        return [by_id[i] for i in page if i in by_id], len(ordered)

    def keywords(self) -> dict[str, tuple[str, ...]]:
        """Document id → key phrases, for every document with any (one read of the table)."""
        table = self._db.select(DOCUMENTS, None, ["id", "keywords"])
        ids, keywords = table["id"].to_pylist(), table["keywords"].to_pylist()
        return {i: tuple(k) for i, k in zip(ids, keywords, strict=True) if k}

    def count(self, project_id: str | None = None) -> int:
        """Number of documents, optionally of one project."""
        return int(self._db.table(DOCUMENTS).count_rows(equals("project_id", project_id)))

    def outdated(self, project_id: str) -> list[str]:
        """Paths of a project's files an older lode chunked (another chunker version):
        their symbols and roles come once they are chunked again."""
        where = and_all([f"project_id = {quote(project_id)}", _outdated()])
        table = self._db.select(DOCUMENTS, where, ["file_path"])
        return sorted(table["file_path"].to_pylist())

    def count_outdated(self, project_id: str | None = None) -> int:
        """Number of files an older lode chunked (``outdated``); at most a second old."""
        key = f"outdated:{project_id}"
        cached = self._db.cache.get(key)
        if cached is None:
            where = and_all([equals("project_id", project_id), _outdated()])
            cached = int(self._db.table(DOCUMENTS).count_rows(where))
            self._db.cache.put(key, cached)
        return int(cached)
