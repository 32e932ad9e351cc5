"""Verifying the store: every table opens, every data file reads, every index answers, and
the rows agree with each other (``lode check``, ``GET /api/v1/check``).

Row agreement, per project: no duplicate chunk or document, no chunk without its document
(orphan) or document without its project, each document's ``chunk_count`` equals its
chunks (missing) and their ``file_hash`` equals its ``content_hash`` (stale), every chunk's
``chunk_hash`` is the blake3 of its content, every vector marked embedded is finite and
unit-length and made for the chunk's embedding text as it is now (its
``vector_text_hash``), every row has the columns this schema added (a row an older lode
wrote after an upgrade lacks them), and a document is marked embedded exactly when all
its chunks are. Symbol
rows are held to the same rules as chunks (no duplicate id, none without its document,
none of another version of its file) and each names a chunk that exists; a write intent
left behind means a write was interrupted (the next index run repairs it). What an
upgrade left for the writer to do (files to chunk again, vectors to make again) is
reported apart as pending work, not damage. A check reads every row of every table:
seconds per 100k chunks.
"""

from __future__ import annotations

import functools
import math
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
from blake3 import blake3

from indexer.models import StoreCheck, StoreProblem
from indexer.store._lance._db import Db
from indexer.store._lance._jobs import is_vector_index
from indexer.store._rows import CHUNK_COLUMNS, to_chunk, vector_matrix
from indexer.store._schema import (
    CHUNKS,
    DOCUMENTS,
    EMBEDDING_CACHE,
    FILE_ERRORS,
    INTENTS,
    META,
    PROJECTS,
    SYMBOLS,
    TASKS,
    VOCABULARY,
)

__all__ = ["Checker"]

_TABLES = (PROJECTS, DOCUMENTS, CHUNKS, SYMBOLS, EMBEDDING_CACHE, TASKS, FILE_ERRORS, VOCABULARY, INTENTS)
#: A stored unit vector's norm may differ from 1 by float32 rounding, not more.
_NORM_TOLERANCE = 1e-3
_BATCH_ROWS = 8192
_CHUNK_COLUMNS = sorted({*CHUNK_COLUMNS, "file_hash", "vector_text_hash"})
_DOCUMENT_COLUMNS = [
    "id", "project_id", "file_path", "content_hash", "chunk_count", "embedded", "chunker_version", "role",
]  # fmt: skip
_SYMBOL_COLUMNS = ["id", "file_id", "file_path", "file_hash", "chunk_id"]
#: Kinds of finding that are work left for the writer, not damage.
_PENDING = frozenset({"rechunk", "reembed"})
#: Storage-library panics (pyo3's PanicException) derive from BaseException, not Exception.
_NOT_FAILURES = (KeyboardInterrupt, SystemExit, GeneratorExit)
_T = TypeVar("_T")


@dataclass(slots=True)
class _Found:
    """Problems collected while reading, one entry per (kind, table, what)."""

    counts: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    examples: dict[tuple[str, str, str], str] = field(default_factory=dict)

    def add(self, kind: str, table: str, what: str, example: str, count: int = 1) -> None:
        key = (kind, table, what)
        self.counts[key] += count
        self.examples.setdefault(key, example)

    def problems(self, pending: bool = False) -> tuple[StoreProblem, ...]:
        """What was found: the damage, or (``pending``) the work left for the writer."""
        return tuple(
            StoreProblem(kind, table, f"{what} (e.g. {self.examples[(kind, table, what)]})", count)
            for (kind, table, what), count in sorted(self.counts.items())
            if (kind in _PENDING) == pending
        )


@dataclass(slots=True)
class _FileFacts:
    """What the chunk table says of one document."""

    path: str = ""
    chunks: int = 0
    hashes: set[str] = field(default_factory=set)
    embedded: int = 0


def _guarded(
    found: _Found, table: str, what: str, read: Callable[[], _T], failed: _T, kind: str = "unreadable"
) -> _T:
    """``read()``, or ``failed`` when it fails (what failed recorded as a problem)."""
    try:
        return read()
    except BaseException as exc:
        if isinstance(exc, _NOT_FAILURES):
            raise
        found.add(kind, table, what, _short(exc))
        return failed


class Checker:
    """``check``: read everything and report what is damaged or out of step."""

    def __init__(self, db: Db) -> None:
        self._db = db

    def check(self) -> StoreCheck:
        """Verify tables, data files, indexes and row agreement; never raises for damage."""
        started = time.perf_counter()
        found = _Found()
        meta = self._db.conn.open_table
        counts = {
            META: _guarded(
                found, META, "the table cannot be read", lambda: int(meta(META).to_arrow().num_rows), -1
            )
        }
        for name in _TABLES:
            read = functools.partial(self._read_all, name)
            counts[name] = _guarded(found, name, "the table cannot be read whole", read, -1)
        files: dict[str, _FileFacts] = defaultdict(_FileFacts)
        ids = functools.partial(self._ids, PROJECTS)
        projects = _guarded(found, PROJECTS, "ids cannot be read", ids, set[str]())
        chunk_ids: set[str] = set()
        if counts.get(CHUNKS, -1) >= 0:
            chunk_ids = self._check_chunks(files, found)
        if counts.get(DOCUMENTS, -1) >= 0:
            hashes = self._check_documents(files, projects, found)
            if counts.get(SYMBOLS, -1) >= 0 and counts.get(CHUNKS, -1) >= 0:
                self._check_symbols(hashes, chunk_ids, found)
        if counts.get(INTENTS, 0) > 0:
            found.add(
                "interrupted",
                INTENTS,
                "a write stopped between its commits (index again)",
                f"{counts[INTENTS]} file(s)",
                counts[INTENTS],
            )
        self._check_cache(found)
        indexes = self._check_indexes(found)
        return StoreCheck(
            problems=found.problems(),
            rows=counts,
            indexes=indexes,
            seconds=round(time.perf_counter() - started, 3),
            pending=found.problems(pending=True),
        )

    # ---- reading ------------------------------------------------------------------
    def _batches(self, name: str, columns: list[str] | None = None) -> Iterator[Any]:
        dataset = self._db.own_dataset(name)
        yield from dataset.to_batches(columns=columns, batch_size=_BATCH_ROWS)

    def _read_all(self, name: str) -> int:
        """Every column of every row (each data file is read): the row count."""
        return sum(batch.num_rows for batch in self._batches(name))

    def _ids(self, name: str) -> set[str]:
        return {i for b in self._batches(name, ["id"]) for i in b.column("id").to_pylist()}

    def _indexes(self, name: str) -> tuple[Any, list[Any]]:
        dataset = self._db.own_dataset(name)
        return dataset, list(dataset.describe_indices())

    # ---- rows ---------------------------------------------------------------------
    def _check_chunks(self, files: dict[str, _FileFacts], found: _Found) -> set[str]:
        seen: set[str] = set()
        for batch in self._batches(CHUNKS, [*_CHUNK_COLUMNS, "embedding"]):
            cols = {c: batch.column(c).to_pylist() for c in _CHUNK_COLUMNS}
            vectors = vector_matrix(batch.column("embedding"), self._db.dimension)
            for i, chunk_id in enumerate(cols["id"]):
                path = cols["file_path"][i]
                if chunk_id in seen:
                    found.add("duplicate", CHUNKS, "chunk id stored twice", path)
                seen.add(chunk_id)
                facts = files[cols["file_id"][i]]
                facts.path = path
                facts.chunks += 1
                facts.hashes.add(cols["file_hash"][i])
                content = cols["content"][i] or ""
                if blake3(content.encode("utf-8")).hexdigest() != cols["chunk_hash"][i]:
                    found.add("hash", CHUNKS, "content does not match chunk_hash", path)
                if cols["role"][i] is None:
                    found.add("columns", CHUNKS, "chunk without a role (an older lode wrote it)", path)
                if cols["embedded"][i]:
                    facts.embedded += 1
                    _check_vector(vectors[i], found, CHUNKS, path)
                    _check_vector_text(cols, i, found)
        return seen

    def _check_symbols(self, hashes: dict[str, str], chunk_ids: set[str], found: _Found) -> None:
        """Symbol rows against the documents (file id → content hash) and the chunk ids."""
        seen: set[str] = set()
        for batch in self._batches(SYMBOLS, _SYMBOL_COLUMNS):
            cols = {c: batch.column(c).to_pylist() for c in _SYMBOL_COLUMNS}
            for i, symbol_id in enumerate(cols["id"]):
                path = cols["file_path"][i]
                if symbol_id in seen:
                    found.add("duplicate", SYMBOLS, "symbol id stored twice", path)
                seen.add(symbol_id)
                expected = hashes.get(cols["file_id"][i])
                if expected is None:
                    found.add("orphan", SYMBOLS, "symbols of no document", path)
                elif cols["file_hash"][i] != expected:
                    found.add("stale", SYMBOLS, "symbols of another version of their file", path)
                elif cols["chunk_id"][i] not in chunk_ids:
                    found.add("missing", SYMBOLS, "symbol naming a chunk that is not stored", path)

    def _check_documents(
        self, files: dict[str, _FileFacts], projects: set[str], found: _Found
    ) -> dict[str, str]:
        """Documents against their projects and chunks; returns document id → content hash."""
        doc_ids: dict[str, str] = {}
        paths: set[tuple[str, str]] = set()
        for batch in self._batches(DOCUMENTS, [*_DOCUMENT_COLUMNS, "content_embedding"]):
            cols = {c: batch.column(c).to_pylist() for c in _DOCUMENT_COLUMNS}
            vectors = vector_matrix(batch.column("content_embedding"), self._db.dimension)
            for i, doc_id in enumerate(cols["id"]):
                path, project = cols["file_path"][i], cols["project_id"][i]
                if doc_id in doc_ids or (project, path) in paths:
                    found.add("duplicate", DOCUMENTS, "document stored twice", path)
                doc_ids[doc_id] = cols["content_hash"][i]
                paths.add((project, path))
                if project not in projects:
                    found.add("orphan", DOCUMENTS, "document of no registered project", path)
                facts = files.get(doc_id, _FileFacts(path=path))
                self._check_agreement(facts, cols, i, found)
                if cols["embedded"][i] and cols["chunk_count"][i]:
                    _check_vector(vectors[i], found, DOCUMENTS, path)
        for file_id, facts in files.items():
            if file_id not in doc_ids:
                found.add("orphan", CHUNKS, "chunks of no document", facts.path, facts.chunks)
        return doc_ids

    @staticmethod
    def _check_agreement(facts: _FileFacts, cols: dict[str, list[Any]], i: int, found: _Found) -> None:
        from indexer.chunker import CHUNKER_VERSION  # (the chunker's grammars: not on a store's start)

        path, expected = cols["file_path"][i], cols["chunk_count"][i] or 0
        if cols["role"][i] is None:
            found.add("columns", DOCUMENTS, "document without a role (an older lode wrote it)", path)
        if cols["chunker_version"][i] != CHUNKER_VERSION:
            found.add(
                "rechunk",
                DOCUMENTS,
                "file chunked by an older lode: its symbols and roles come with the next "
                "`lode index` or `lode upgrade`",
                path,
            )
        if facts.chunks != expected:
            found.add("missing", DOCUMENTS, "chunk_count differs from the chunks stored", path)
        if facts.hashes - {cols["content_hash"][i]}:
            found.add("stale", CHUNKS, "chunks of another version of their file", path)
        all_embedded = facts.chunks > 0 and facts.embedded == facts.chunks
        if expected and bool(cols["embedded"][i]) != all_embedded:
            what = (
                "embedded before its chunks"
                if cols["embedded"][i]
                else "every chunk embedded, not the document"
            )
            found.add("unembedded", DOCUMENTS, what, path)

    def _check_cache(self, found: _Found) -> None:
        def read() -> None:
            for batch in self._batches(EMBEDDING_CACHE, ["text_hash", "vector"]):
                vectors = vector_matrix(batch.column("vector"), self._db.dimension)
                hashes = batch.column("text_hash").to_pylist()
                for i, vector in enumerate(vectors):
                    _check_vector(vector, found, EMBEDDING_CACHE, hashes[i])

        _guarded(found, EMBEDDING_CACHE, "vectors cannot be read", read, None)

    # ---- indexes --------------------------------------------------------------------
    def _check_indexes(self, found: _Found) -> dict[str, str]:
        """Ask every index of the searched tables one question it must answer."""
        answers: dict[str, str] = {}
        probe = np.zeros(self._db.dimension, dtype=np.float32)
        probe[0] = 1.0
        for name in (CHUNKS, DOCUMENTS, SYMBOLS):
            listed = functools.partial(self._indexes, name)
            dataset, described = _guarded(
                found, name, "indexes cannot be listed", listed, (None, list[Any]()), "index"
            )
            for index in described:
                column = index.field_names[0]
                query = functools.partial(_ask, dataset, column, str(index.index_type), probe)
                answers[f"{name}.{index.name}"] = _answer(query, found, name, index.name)
        return answers


def _ask(dataset: Any, column: str, index_type: str, probe: np.ndarray) -> Any:
    """One query the index on ``column`` answers (nearest row, a word, a filter)."""
    from lance.query import MatchQuery

    if is_vector_index(index_type):
        return dataset.to_table(columns=["id"], nearest={"column": column, "q": probe, "k": 1})
    if "inverted" in index_type.lower() or "fts" in index_type.lower():
        return dataset.to_table(columns=["id", "_score"], full_text_query=MatchQuery("lode", column), limit=1)
    return dataset.to_table(columns=["id"], filter=f"{column} IS NOT NULL", limit=1)


def _answer(query: Callable[[], Any], found: _Found, table: str, index: str) -> str:
    try:
        query()
    except BaseException as exc:
        if isinstance(exc, _NOT_FAILURES):
            raise
        found.add("index", table, f"index {index} does not answer", _short(exc))
        return _short(exc)
    return "ok"


def _check_vector_text(cols: dict[str, list[Any]], i: int, found: _Found) -> None:
    """A chunk's vector against the text it is now embedded as."""
    from indexer.chunker import embedding_input

    path, made_for = cols["file_path"][i], cols["vector_text_hash"][i]
    if made_for is None:
        what = "vector made before an upgrade: phase 2 embeds it again (it answers until then)"
        found.add("reembed", CHUNKS, what, path)
        return
    row = {name: cols[name][i] for name in CHUNK_COLUMNS}
    if embedding_input(path, to_chunk(row))[1] != made_for:
        what = "vector made for another text than the chunk's (the next writer embeds it again)"
        found.add("vector", CHUNKS, what, path)


def _check_vector(vector: np.ndarray, found: _Found, table: str, example: str) -> None:
    if not np.all(np.isfinite(vector)):
        found.add("vector", table, "vector with NaN or infinite values", example)
        return
    norm = float(np.linalg.norm(vector))
    if not math.isclose(norm, 1.0, abs_tol=_NORM_TOLERANCE):
        found.add("vector", table, "vector not of unit length", example)


def _short(exc: BaseException) -> str:
    text = f"{exc.__class__.__name__}: {exc}"
    return text if len(text) <= 300 else text[:300] + "…"
