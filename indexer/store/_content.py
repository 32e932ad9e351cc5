"""Queries behind ``search_content``: chunk rows with their text (and vectors when asked),
found by nearest vectors, by a full-text query for the vocabulary words that can hold an
exact term, or by scanning chunk text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from indexer.models import ChunkFilter
from indexer.store._filters import chunk_where
from indexer.store._lance._db import Db
from indexer.store._schema import CHUNKS
from indexer.store._search import NPROBES
from indexer.store._sql import and_all, in_list, literal_regex, quote
from indexer.store._vocabulary import TermRun, Vocabulary

__all__ = ["Content", "ContentRow"]

#: What ranking and a result need, read with the candidates. The text is not: a page
#: reads the text of its own rows (``chunk_contents``), so a term held by thousands of
#: chunks does not carry thousands of texts into Python.
_ROW_COLUMNS = [
    "id", "file_id", "project_id", "file_path", "chunk_index", "start_line", "end_line",
    "language", "node_type", "node_name",
]  # fmt: skip
_FIELD = "search_text"


@dataclass(frozen=True, slots=True)
class ContentRow:
    """A chunk as ``search_content`` ranks and shows it: where it is, its text, and what
    scoring needs."""

    id: str
    file_id: str
    project_id: str
    file_path: str
    chunk_index: int
    start_line: int
    end_line: int
    language: str
    node_type: str
    node_name: str
    score: float = 0.0
    """Cosine similarity for nearest-vector rows; 0 otherwise."""
    vector: np.ndarray | None = None
    """The chunk's vector when asked for and computed (None while phase 2 is pending)."""
    row_id: int = -1
    """Where the row was when read (for ``chunk_contents``; -1 when unknown)."""


def _substring(term: str, case_sensitive: bool) -> str:
    """SQL that holds where the text contains ``term`` (exact case, or any case)."""
    if case_sensitive:
        return f"strpos(content, {quote(term)}) > 0"
    return f"regexp_like(content, {quote('(?i)' + literal_regex(term))})"


def _to_rows(table: pa.Table) -> list[ContentRow]:
    """Rows from an Arrow result; vectors are sliced from one matrix, not built per row."""
    n = table.num_rows
    cols = {name: table[name].to_pylist() for name in _ROW_COLUMNS}
    if "_distance" in table.column_names:
        scores = [1.0 - float(d) for d in table["_distance"].to_pylist()]
    else:
        scores = [0.0] * n
    row_ids = table["_rowid"].to_pylist() if "_rowid" in table.column_names else [-1] * n
    vectors: list[np.ndarray | None] = [None] * n
    if "embedding" in table.column_names and n:
        flat = table["embedding"].combine_chunks().flatten().to_numpy(zero_copy_only=False)
        matrix = np.asarray(flat, dtype=np.float32).reshape(n, -1)
        embedded = table["embedded"].to_pylist() if "embedded" in table.column_names else [True] * n
        vectors = [matrix[i] if embedded[i] else None for i in range(n)]
    return [
        ContentRow(
            id=cols["id"][i],
            file_id=cols["file_id"][i],
            project_id=cols["project_id"][i],
            file_path=cols["file_path"][i],
            chunk_index=int(cols["chunk_index"][i]),
            start_line=int(cols["start_line"][i]),
            end_line=int(cols["end_line"][i]),
            language=cols["language"][i] or "",
            node_type=cols["node_type"][i] or "",
            node_name=cols["node_name"][i] or "",
            score=scores[i],
            vector=vectors[i],
            row_id=int(row_ids[i]),
        )
        for i in range(n)
    ]


class Content:
    """Candidate rows for exact terms and concepts (``search_content``)."""

    def __init__(self, db: Db, vocabulary: Vocabulary) -> None:
        self._db = db
        self._vocabulary = vocabulary

    def _tokens(self, text: str) -> list[str] | None:
        """``text`` as the chunk full-text index analyzes it (None when there is no index yet)."""
        try:
            return [token.text for token in self._db.table(CHUNKS).tokenize(text, column=_FIELD)]
        except (ValueError, RuntimeError):
            return None

    def concept_rows(
        self, vector: np.ndarray, flt: ChunkFilter, k: int, *, with_vectors: bool = False
    ) -> list[ContentRow]:
        """The ``k`` nearest embedded chunks (score: cosine similarity), optionally with vectors."""
        columns = [*_ROW_COLUMNS, "embedding"] if with_vectors else _ROW_COLUMNS
        where = chunk_where(flt, embedded_only=True)

        def build(table: Any) -> Any:
            query = (
                table.query()
                .nearest_to(np.asarray(vector, dtype=np.float32))
                .column("embedding")
                .distance_type("cosine")
                .nprobes(NPROBES)
                .select([*columns, "_distance"])
                .with_row_id()
                .limit(k)
            )
            return (query.where(where) if where else query).to_arrow()  # filters before the search

        return _to_rows(self._db.arrow(CHUNKS, build))

    def term_rows(
        self,
        term: str,
        runs: Sequence[TermRun],
        case_sensitive: bool,
        flt: ChunkFilter,
        *,
        with_vectors: bool = False,
    ) -> list[ContentRow] | None:
        """Every chunk whose text holds ``term`` as a substring, with its text, found through
        the words that can hold each of its ``runs``; None when the full-text index cannot
        answer (no index yet, too many candidate words, or a word it does not index)."""
        words = self._vocabulary.term_words(runs, self._tokens)
        if words is None:
            return None
        if not words:
            return []
        columns = [*_ROW_COLUMNS, "embedded", *(["embedding"] if with_vectors else [])]
        where = and_all([chunk_where(flt), _substring(term, case_sensitive)])

        async def build(table: Any) -> Any:
            every = max(1, int(await table.count_rows()))  # no cut: the filter runs after the limit
            query = table.query().nearest_to_text(_words_query(words)).select(columns).with_row_id()
            return await query.where(where).postfilter().limit(every).to_arrow()

        return _to_rows(self._db.arrow(CHUNKS, build))

    def scan_rows(
        self, term: str, case_sensitive: bool, flt: ChunkFilter, *, with_vectors: bool = False
    ) -> list[ContentRow]:
        """Every chunk whose text holds ``term`` as a substring (reads every chunk's text: slow)."""
        match = _substring(term, case_sensitive)
        columns = [*_ROW_COLUMNS, "embedded", *(["embedding"] if with_vectors else [])]
        where = and_all([chunk_where(flt), match]) or match
        return _to_rows(
            self._db.arrow(CHUNKS, lambda t: t.query().where(where).select(columns).with_row_id().to_arrow())
        )

    def chunk_contents(self, refs: Sequence[tuple[str, int]]) -> dict[str, str]:
        """Chunk id → text for (id, row id) pairs as candidates carry them; a row id that no
        longer holds its chunk (the table was compacted since) falls back to the id lookup."""
        found: dict[str, str] = {}
        known = [row_id for _, row_id in refs if row_id >= 0]
        if known:
            try:
                table = self._db.arrow(
                    CHUNKS, lambda t: t.take_row_ids(known).select(["id", "content"]).to_arrow()
                )
            except (OSError, RuntimeError, ValueError):  # rows moved by a compaction: by id below
                table = pa.table({"id": pa.array([], pa.string()), "content": pa.array([], pa.string())})
            found.update(zip(table["id"].to_pylist(), table["content"].to_pylist(), strict=True))
        missing = [i for i, _ in refs if i not in found]
        if missing:
            table = self._db.select(CHUNKS, in_list("id", missing), ["id", "content"])
            found.update(zip(table["id"].to_pylist(), table["content"].to_pylist(), strict=True))
        return {i: found[i] or "" for i, _ in refs if i in found}


def _words_query(words: Sequence[Sequence[str]]) -> Any:
    """A chunk with any word of every group (one group per term run)."""
    from lancedb.query import BooleanQuery, MatchQuery, Occur

    clauses = [MatchQuery(" ".join(group), _FIELD) for group in words]
    return clauses[0] if len(clauses) == 1 else BooleanQuery([(Occur.MUST, c) for c in clauses])
