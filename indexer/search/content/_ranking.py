"""The ranked result set of one ``search_content`` query: candidates from the vector index
(each concept's nearest chunks) and from every exact term (every chunk holding it), scored
``semantic × 1.5^terms``, filtered by ``min_score``, sorted once. Pages are slices of it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from indexer.models import ChunkFilter
from indexer.search.content._scoring import (
    EXACT_ONLY_SEMANTIC,
    boosted_score,
    combine_concepts,
    to_relevance,
)
from indexer.search.content._terms import contains_term, fts_runs, is_case_sensitive, needs_scan
from indexer.store import ContentRow, Store

__all__ = ["CONCEPT_CANDIDATES", "TERM_CANDIDATES", "ContentQuery", "Ranked", "Ranking", "rank_content"]

#: Nearest chunks taken per concept; fixed, so the pool (and every page) never depends on the offset.
CONCEPT_CANDIDATES = 200
#: Full-text candidates read per exact term before falling back to a scan of every chunk's text.
TERM_CANDIDATES = 20_000


@dataclass(frozen=True, slots=True)
class ContentQuery:
    """A validated query: what a continuation token carries."""

    project_ids: tuple[str, ...]
    concepts: tuple[str, ...]
    terms: tuple[str, ...]
    min_score: float

    def to_dict(self) -> dict[str, Any]:
        """Compact form for a token."""
        return {
            "p": list(self.project_ids),
            "c": list(self.concepts),
            "t": list(self.terms),
            "m": self.min_score,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ContentQuery:
        """The query a token carries."""
        return cls(tuple(data["p"]), tuple(data["c"]), tuple(data["t"]), float(data["m"]))


@dataclass(frozen=True, slots=True)
class Ranked:
    """One result: its chunk, its boosted score, its relevance in [0, 1], the terms it holds."""

    row: ContentRow
    boosted: float
    relevance: float
    matched_terms: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Ranking:
    """Every result of a query above ``min_score``, best first, and notes on how it was built."""

    items: tuple[Ranked, ...]
    warnings: tuple[str, ...] = ()
    scanned_terms: tuple[str, ...] = field(default=())


Gather = Callable[[dict[str, Callable[[], Any]]], dict[str, Any]]


def term_rows(store: Store, term: str, flt: ChunkFilter, with_vectors: bool) -> tuple[list[ContentRow], bool]:
    """Every chunk holding ``term`` (full-text candidates checked one by one, or a scan of
    every chunk's text when the index cannot answer); also whether a scan was needed."""
    rows = None
    if not needs_scan(term):
        rows = store.term_rows(fts_runs(term), flt, TERM_CANDIDATES, with_vectors=with_vectors)
    scanned = rows is None or len(rows) >= TERM_CANDIDATES
    if rows is None or scanned:
        rows = store.scan_rows(term, is_case_sensitive(term), flt, with_vectors=with_vectors)
    return [r for r in rows if contains_term(r.content, term)], scanned


def rank_content(
    store: Store, query: ContentQuery, concept_vectors: np.ndarray | None, gather: Gather
) -> Ranking:
    """Gather every candidate of ``query`` at once, score them, keep those above min_score, sort."""
    flt = ChunkFilter(project_ids=query.project_ids)
    several = concept_vectors is not None and len(concept_vectors) > 1
    calls: dict[str, Callable[[], Any]] = {}
    if concept_vectors is not None:
        for i, vector in enumerate(concept_vectors):
            calls[f"c{i}"] = partial(
                store.concept_rows, vector, flt, CONCEPT_CANDIDATES, with_vectors=several
            )
    for j, term in enumerate(query.terms):
        calls[f"t{j}"] = partial(term_rows, store, term, flt, concept_vectors is not None)
    found = gather(calls)
    concept_lists = [
        found[f"c{i}"] for i in range(len(concept_vectors) if concept_vectors is not None else 0)
    ]
    term_lists = {term: found[f"t{j}"] for j, term in enumerate(query.terms)}
    return _score(query, concept_vectors, concept_lists, term_lists)


def _score(
    query: ContentQuery,
    concept_vectors: np.ndarray | None,
    concept_lists: Sequence[list[ContentRow]],
    term_lists: Mapping[str, tuple[list[ContentRow], bool]],
) -> Ranking:
    pool: dict[str, ContentRow] = {}
    for rows in concept_lists:
        pool.update((row.id, row) for row in rows if row.id not in pool)
    matched: dict[str, list[str]] = {}
    for term, (rows, _) in term_lists.items():
        for row in rows:
            pool.setdefault(row.id, row)
            matched.setdefault(row.id, []).append(term)
    single = {row.id: row.score for row in concept_lists[0]} if len(concept_lists) == 1 else {}
    unknown = 0
    items = []
    for row_id, row in pool.items():
        score = single.get(row_id)
        if score is None and concept_vectors is not None and row.vector is not None:
            score = combine_concepts(concept_vectors @ row.vector)
        if score is None:  # exact terms only, or a chunk whose vector is pending
            unknown += 1 if concept_vectors is not None else 0
            score = EXACT_ONLY_SEMANTIC
        terms = tuple(matched.get(row_id, ()))
        boosted = boosted_score(score, len(terms))
        if to_relevance(boosted) >= query.min_score:
            items.append(Ranked(row, boosted, to_relevance(boosted), terms))
    items.sort(key=lambda r: (-r.boosted, r.row.file_path, r.row.chunk_index, r.row.id))
    scanned = tuple(t for t, (_, was_scanned) in term_lists.items() if was_scanned)
    return Ranking(tuple(items), _warnings(unknown, scanned), scanned)


def _warnings(unknown: int, scanned: tuple[str, ...]) -> tuple[str, ...]:
    out = []
    if unknown:
        out.append(
            f"semantic index incomplete: {unknown} chunk(s) matching exact terms have no vector yet "
            "and are ranked by their terms alone"
        )
    if scanned:
        out.append(f"exact term(s) {list(scanned)} searched by scanning every chunk's text (slower)")
    return tuple(out)
