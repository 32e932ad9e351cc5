"""The ranked result set of one ``search_content`` query: candidates from the vector index
(each concept's nearest chunks) and from every exact term (every chunk holding it), scored
``semantic × 1.5^terms``, filtered by ``min_score``, sorted once. Pages are slices of it."""

from __future__ import annotations

import threading
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
from indexer.search.content._terms import fts_runs, is_case_sensitive, needs_scan
from indexer.store import ContentRow, Store

__all__ = ["CONCEPT_CANDIDATES", "ContentQuery", "Ranked", "Ranking", "rank_content", "term_rows"]

#: Nearest chunks taken per concept; fixed, so the pool (and every page) never depends on the offset.
CONCEPT_CANDIDATES = 200


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
    """Every chunk holding ``term`` as a substring (with the case rule, tested by the store's
    query): through the full-text index, or by a scan of every chunk's text when the index
    cannot answer. Also whether a scan was needed."""
    sensitive = is_case_sensitive(term)
    rows = None
    if not needs_scan(term):
        rows = store.content.term_rows(term, fts_runs(term), sensitive, flt, with_vectors=with_vectors)
    scanned = rows is None
    if rows is None:
        rows = store.content.scan_rows(term, sensitive, flt, with_vectors=with_vectors)
    return rows, scanned


def rank_content(
    store: Store, query: ContentQuery, embed: Callable[[], np.ndarray], gather: Gather
) -> Ranking:
    """Gather every candidate of ``query`` at once, score them, keep those above min_score, sort.

    ``embed`` gives the concepts' vectors (one row each); it is called inside the query
    threads, so embedding the concepts overlaps the full-text queries of the terms.
    """
    flt = ChunkFilter(project_ids=query.project_ids)
    several = len(query.concepts) > 1
    vectors = _Once(embed)

    def nearest(i: int) -> list[ContentRow]:
        return store.content.concept_rows(vectors()[i], flt, CONCEPT_CANDIDATES, with_vectors=several)

    calls: dict[str, Callable[[], Any]] = {f"c{i}": partial(nearest, i) for i in range(len(query.concepts))}
    for j, term in enumerate(query.terms):
        calls[f"t{j}"] = partial(term_rows, store, term, flt, bool(query.concepts))
    found = gather(calls)
    concept_lists = [found[f"c{i}"] for i in range(len(query.concepts))]
    term_lists = {term: found[f"t{j}"] for j, term in enumerate(query.terms)}
    return _score(query, vectors() if query.concepts else None, concept_lists, term_lists)


class _Once:
    """A value computed by the first caller; callers meanwhile wait for it."""

    def __init__(self, compute: Callable[[], np.ndarray]) -> None:
        self._compute = compute
        self._lock = threading.Lock()
        self._value: np.ndarray | None = None

    def __call__(self) -> np.ndarray:
        with self._lock:
            if self._value is None:
                self._value = self._compute()
            return self._value


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
