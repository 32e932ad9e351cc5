"""``search_content``: retrieval of exact passages for agents, paged by continuation tokens.

A query's result set is ranked whole (``_ranking``), remembered for a few queries per
index version (so continuation pages are a slice, not a new search), and paged; each
page's token fingerprints the results handed out so far (``_tokens``).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from indexer.errors import TokenExpiredError, ValidationError
from indexer.search._engine import Searcher
from indexer.search.content._find import find_documents
from indexer.search.content._hints import content_actions, content_interpretation, related_queries
from indexer.search.content._ranking import ContentQuery, Ranked, Ranking, rank_content
from indexer.search.content._request import (
    ContentRequest,
    FindDocumentsRequest,
    clean_list,
    validate_content_request,
)
from indexer.search.content._results import (
    ContentData,
    ContentResponse,
    ContentResult,
    ContentStatistics,
    Continuation,
    FindDocumentsResponse,
    NavigationHints,
    ResponseStatus,
)
from indexer.search.content._scoring import DEFAULT_MIN_SCORE
from indexer.search.content._tokens import PageToken, decode_token, encode_token, ranking_digest, token_key

__all__ = ["ContentSearcher"]

_KIND = "search_content"
_CACHED_RANKINGS = 32
#: Rankings are dropped, oldest first, while they hold more rows (with their text) than this.
_CACHED_ROWS = 50_000
_FILES_SHOWN = 20


@dataclass(frozen=True, slots=True)
class _Page:
    query: ContentQuery
    offset: int
    token: PageToken | None


class ContentSearcher:
    """search_content and find_documents over one store and model; safe to share between threads."""

    def __init__(self, searcher: Searcher) -> None:
        self.searcher = searcher
        self.store = searcher.store
        self.key = token_key(str(self.store.path), self.store.model_id)
        self._rankings: OrderedDict[tuple[int, ContentQuery], Ranking] = OrderedDict()
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._keywords_cache: dict[str, tuple[str, ...]] = {}
        self._keywords_version = -1
        self._lock = threading.Lock()
        self._keywords_lock = threading.Lock()

    # ---- search_content -----------------------------------------------------------------
    def search_content(self, request: ContentRequest) -> ContentResponse:
        """One page of chunks for concepts and/or exact terms; a bad field is a ValidationError,
        a token outlived by an index change a TokenExpiredError."""
        started = time.perf_counter()
        validate_content_request(request)
        page = self._page(request)
        version = self.store.index_version()
        ranking = self.ranking(page.query, version)
        if page.token is not None and page.token.index_version != version:
            seen = ranking.items[: page.offset]
            if len(seen) < page.offset or ranking_digest(_pairs(seen)) != page.token.digest:
                raise TokenExpiredError(
                    "continuation_token expired: the index changed and the results already returned "
                    "are no longer the head of the ranking; run the query again",
                    "continuation_token",
                )
        end = page.offset + request.limit
        names = {p.id: p.name for p in self.store.projects.all()}
        results = self._results(ranking.items[page.offset : end], names, version)
        has_more = len(ranking.items) > end
        token = None
        if has_more:
            digest = ranking_digest(_pairs(ranking.items[:end]))
            token = encode_token(PageToken(_KIND, page.query.to_dict(), end, version, digest), self.key)
        shown = [names[p] for p in page.query.project_ids if p in names]
        return self._response(page.query, shown, ranking, results, Continuation(has_more, token), started)

    def find_documents(self, request: FindDocumentsRequest) -> FindDocumentsResponse:
        """One page of files ranked for a query, with summaries and key phrases."""
        return find_documents(self.searcher, request, self.key)

    def ranking(self, query: ContentQuery, version: int) -> Ranking:
        """The whole ranked result set of ``query`` at index ``version`` (remembered)."""
        key = (version, query)
        with self._lock:
            cached = self._rankings.get(key)
            if cached is not None:
                self._rankings.move_to_end(key)
                return cached
        ranking = rank_content(
            self.store, query, lambda: self.concept_vectors(query.concepts), self.searcher.gather
        )
        with self._lock:
            self._rankings[key] = ranking
            while len(self._rankings) > 1 and (
                len(self._rankings) > _CACHED_RANKINGS
                or sum(len(r.items) for r in self._rankings.values()) > _CACHED_ROWS
            ):
                self._rankings.popitem(last=False)
        return ranking

    def concept_vectors(self, concepts: tuple[str, ...]) -> np.ndarray:
        """One query vector per concept; the ones not seen recently are embedded in one batch."""
        with self._lock:
            known = {c: self._vectors[c] for c in concepts if c in self._vectors}
        missing = [c for c in concepts if c not in known]
        if missing:
            for concept, vector in zip(missing, self.searcher.embedder.embed_queries(missing), strict=True):
                known[concept] = np.asarray(vector, dtype=np.float32)
            with self._lock:
                self._vectors.update((c, known[c]) for c in missing)
                while len(self._vectors) > 256:
                    self._vectors.popitem(last=False)
        return np.stack([known[c] for c in concepts])

    def _page(self, request: ContentRequest) -> _Page:
        concepts, terms = clean_list(request.semantic_concepts), clean_list(request.exact_terms)
        project_ids = self._project_ids(request.project)
        if request.continuation_token is None:
            min_score = DEFAULT_MIN_SCORE if request.min_score is None else request.min_score
            return _Page(ContentQuery(project_ids, concepts, terms, min_score), 0, None)
        token = decode_token(request.continuation_token, self.key, _KIND)
        query = ContentQuery.from_dict(token.query)
        given = {
            "semantic_concepts": (concepts, query.concepts) if concepts or terms else None,
            "exact_terms": (terms, query.terms) if concepts or terms else None,
            "project": (project_ids, query.project_ids) if request.project is not None else None,
            "min_score": (request.min_score, query.min_score) if request.min_score is not None else None,
        }
        differ = [name for name, pair in given.items() if pair is not None and pair[0] != pair[1]]
        if differ:
            raise ValidationError(
                "continuation_token", f"was made for another query ({', '.join(differ)} differ)"
            )
        return _Page(query, token.offset, token)

    def _project_ids(self, project: str | None) -> tuple[str, ...]:
        if project is None:
            return ()
        return tuple(p.id for p in self.searcher.resolve_projects([project], field="project"))

    def _keywords(self, version: int) -> dict[str, tuple[str, ...]]:
        """Every document's key phrases, read once per index version."""
        with self._keywords_lock:
            if self._keywords_version != version:
                self._keywords_cache = self.store.documents.keywords()
                self._keywords_version = version
            return self._keywords_cache

    def _results(self, items: tuple[Ranked, ...], names: dict[str, str], version: int) -> list[ContentResult]:
        keywords = self._keywords(version)
        texts = self.store.content.chunk_contents([(item.row.id, item.row.row_id) for item in items])
        return [
            ContentResult(
                chunk_id=row.id,
                document_id=row.file_path,
                project=names.get(row.project_id, ""),
                project_id=row.project_id,
                content=texts.get(row.id, ""),
                relevance_score=round(item.relevance, 4),
                chunk_index=row.chunk_index,
                start_line=row.start_line,
                end_line=row.end_line,
                language=row.language,
                node_type=row.node_type,
                node_name=row.node_name,
                matched_terms=item.matched_terms,
                document_keywords=keywords.get(row.file_id, ()),
            )
            for item in items
            for row in (item.row,)
        ]

    def _response(
        self,
        query: ContentQuery,
        projects: list[str],
        ranking: Ranking,
        results: list[ContentResult],
        continuation: Continuation,
        started: float,
    ) -> ContentResponse:
        items = ranking.items
        files = list(dict.fromkeys(r.row.file_path for r in items))
        avg = round(sum(r.relevance for r in items) / len(items), 4) if items else 0.0
        stats = ContentStatistics(
            total_results=len(items),
            files_covered=tuple(files[:_FILES_SHOWN]),
            total_files=len(files),
            avg_relevance=avg,
            search_interpretation=content_interpretation(
                query.concepts, query.terms, query.min_score, projects
            ),
            took_ms=round((time.perf_counter() - started) * 1000, 2),
        )
        top = (results[0].document_id, results[0].start_line, results[0].end_line) if results else None
        actions = content_actions(
            results[0].project if results else "", top, continuation.has_more, len(items),
            not query.concepts, query.min_score,
        )  # fmt: skip
        related = related_queries(
            [r.document_keywords for r in results], [*query.concepts, *query.terms],
            [r.node_name for r in results if r.node_name],
        )  # fmt: skip
        message = f"Found {len(items)} result(s) in {len(files)} file(s)" if items else "No results"
        return ContentResponse(
            data=ContentData(tuple(results), stats),
            status=ResponseStatus(True, 200, message, ranking.warnings),
            continuation=continuation,
            navigation_hints=NavigationHints(actions, related),
        )


def _pairs(items: tuple[Ranked, ...]) -> list[tuple[str, float]]:
    return [(r.row.id, r.boosted) for r in items]
