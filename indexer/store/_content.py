"""Exact-term queries: the chunks whose text holds a term, found by a full-text query for
the vocabulary words that can hold it (narrowed by a substring test), or by scanning
chunk text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from indexer.models import ChunkFilter
from indexer.store._filters import chunk_where
from indexer.store._lance._db import Db
from indexer.store._schema import CHUNKS
from indexer.store._sql import and_all, literal_regex, quote
from indexer.store._vocabulary import TermRun, Vocabulary

__all__ = ["Content", "TermRun"]

_FIELD = "search_text"


def _substring(term: str, case_sensitive: bool) -> str:
    """SQL that holds where the text contains ``term`` (exact case, or any case)."""
    if case_sensitive:
        return f"strpos(content, {quote(term)}) > 0"
    return f"regexp_like(content, {quote('(?i)' + literal_regex(term))})"


class Content:
    """The chunks holding an exact term."""

    def __init__(self, db: Db, vocabulary: Vocabulary) -> None:
        self._db = db
        self._vocabulary = vocabulary

    def fts_tokens(self, text: str) -> list[str] | None:
        """``text`` as the chunk full-text index analyzes it (None when there is no index yet)."""
        try:
            return [token.text for token in self._db.table(CHUNKS).tokenize(text, column=_FIELD)]
        except (ValueError, RuntimeError):
            return None

    def term_chunk_ids(
        self, term: str, runs: Sequence[TermRun], case_sensitive: bool, flt: ChunkFilter
    ) -> set[str] | None:
        """The ids of the chunks ``flt`` admits whose text holds ``term`` as a substring,
        found through the words that can hold each of its ``runs``; None when the full-text
        index cannot answer (no index yet, too many candidate words, or a word it does not
        index)."""
        words = self._vocabulary.term_words(runs, self.fts_tokens)
        if words is None:
            return None
        if not words:
            return set()
        where = and_all([chunk_where(flt), _substring(term, case_sensitive)])

        async def build(table: Any) -> Any:
            every = max(1, int(await table.count_rows()))  # no cut: the filter runs after the limit
            query = table.query().nearest_to_text(_words_query(words)).select(["id"])
            return await query.where(where).postfilter().limit(every).to_arrow()

        return set(self._db.arrow(CHUNKS, build)["id"].to_pylist())

    def scan_chunk_ids(self, term: str, case_sensitive: bool, flt: ChunkFilter) -> set[str]:
        """The ids of the chunks ``flt`` admits whose text holds ``term`` as a substring
        (reads every chunk's text: slow)."""
        match = _substring(term, case_sensitive)
        where = and_all([chunk_where(flt), match]) or match
        table = self._db.arrow(CHUNKS, lambda t: t.query().where(where).select(["id"]).to_arrow())
        return set(table["id"].to_pylist())


def _words_query(words: Sequence[Sequence[str]]) -> Any:
    """A chunk with any word of every group (one group per term run)."""
    from lancedb.query import BooleanQuery, MatchQuery, Occur

    clauses = [MatchQuery(" ".join(group), _FIELD) for group in words]
    return clauses[0] if len(clauses) == 1 else BooleanQuery([(Occur.MUST, c) for c in clauses])
