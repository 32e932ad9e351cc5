"""``search_content`` and ``find_documents``: the agent endpoints, run by the search engine.

``search_content`` is a chunk-granularity search (``Searcher.search``): the concepts and
the exact terms are its query text (hybrid; lexical with exact terms alone, as grep needs
no model), the exact terms its filter too (``SearchOptions.exact_terms``) and
``min_score`` its threshold; each result carries its full text, the exact terms it holds
and its file's key phrases.

``find_documents`` is a document-granularity search; each file carries its summary and
key phrases.

Both page with continuation tokens (``_tokens``) over a fixed candidate pool
(``SearchOptions.candidates``), so every page of a query ranks the same pool: the total,
the statistics and every score are the same on every page, and no page repeats or skips
a result.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from indexer.errors import TokenExpiredError, ValidationError
from indexer.search._content_io import (
    DEFAULT_MIN_SCORE,
    ContentData,
    ContentRequest,
    ContentResponse,
    ContentResult,
    ContentStatistics,
    Continuation,
    DocumentResult,
    DocumentsData,
    DocumentsStatistics,
    FindDocumentsRequest,
    FindDocumentsResponse,
    NavigationHints,
    ResponseStatus,
    clean_list,
    validate_content_request,
    validate_find_request,
)
from indexer.search._engine import Searcher, resolve_projects
from indexer.search._hints import content_actions, content_interpretation, documents_actions, related_queries
from indexer.search._options import MAX_LIMIT, SearchOptions
from indexer.search._results import ChunkHit, SearchResponse
from indexer.search._terms import contains_term
from indexer.search._tokens import PageToken, decode_token, encode_token, head_digest, token_key

__all__ = ["CONTENT_CANDIDATES", "DOCUMENT_CANDIDATES", "find_documents", "search_content"]

_CONTENT, _DOCUMENTS = "search_content", "find_documents"
#: Candidates each chunk list gives a search_content query (its fixed pool).
CONTENT_CANDIDATES: Final = 200
#: Candidates each chunk list gives a find_documents query (its fixed pool of files).
DOCUMENT_CANDIDATES: Final = 400
_FILES_SHOWN = 20
_TOKEN = "continuation_token"


@dataclass(frozen=True, slots=True)
class _Content:
    """A validated search_content query: what its continuation token carries."""

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

    def options(self, offset: int, limit: int) -> SearchOptions:
        """The engine's options for results ``offset`` .. ``offset + limit``."""
        return SearchOptions(
            query=", ".join((*self.concepts, *self.terms)),
            projects=self.project_ids,
            granularity="chunk",
            mode="hybrid" if self.concepts else "lexical",
            exact_terms=self.terms,
            min_score=self.min_score,
            candidates=CONTENT_CANDIDATES,
            limit=limit,
            offset=offset,
        )


def _project_ids(searcher: Searcher, project: str | None) -> tuple[str, ...]:
    if project is None:
        return ()
    return tuple(p.id for p in resolve_projects(searcher.store, [project], "project"))


def _differ(given: Mapping[str, tuple[Any, Any] | None]) -> None:
    """A ValidationError on the token when a field given next to it differs from its own."""
    differ = [name for name, pair in given.items() if pair is not None and pair[0] != pair[1]]
    if differ:
        raise ValidationError(_TOKEN, f"was made for another query ({', '.join(differ)} differ)")


def _key(searcher: Searcher) -> bytes:
    return token_key(str(searcher.store.path), searcher.store.model_id)


def _content_query(searcher: Searcher, request: ContentRequest) -> tuple[_Content, PageToken | None]:
    concepts, terms = clean_list(request.semantic_concepts), clean_list(request.exact_terms)
    project_ids = _project_ids(searcher, request.project)
    if request.continuation_token is None:
        # exact terms alone keep every chunk holding one unless a threshold is given
        default = DEFAULT_MIN_SCORE if concepts else 0.0
        min_score = default if request.min_score is None else request.min_score
        return _Content(project_ids, concepts, terms, min_score), None
    token = decode_token(request.continuation_token, _key(searcher), _CONTENT)
    data = token.query
    query = _Content(tuple(data["p"]), tuple(data["c"]), tuple(data["t"]), float(data["m"]))
    lists = concepts or terms
    _differ(
        {
            "semantic_concepts": (concepts, query.concepts) if lists else None,
            "exact_terms": (terms, query.terms) if lists else None,
            "project": (project_ids, query.project_ids) if request.project is not None else None,
            "min_score": (request.min_score, query.min_score) if request.min_score is not None else None,
        }
    )
    return query, token


Search = Callable[[int, int], SearchResponse]
"""A search for the results ``offset`` .. ``offset + limit`` of one query."""


def _page(
    searcher: Searcher,
    kind: str,
    query: dict[str, Any],
    token: PageToken | None,
    limit: int,
    search: Search,
    pairs: Callable[[SearchResponse], list[tuple[str, float]]],
) -> tuple[SearchResponse, str | None]:
    """The page a token (or none: the first) points at, and the token of the next page.

    When the index changed since the token was made, the results before the page are
    searched again: unless they are those handed out (``head_digest``), a TokenExpiredError.
    """
    offset = token.offset if token is not None else 0
    version = searcher.store.index_version()
    response = search(offset, limit)
    if token is not None and token.index_version != version:
        digest = ""
        for at in range(0, offset, MAX_LIMIT):
            digest = head_digest(digest, pairs(search(at, min(MAX_LIMIT, offset - at))))
        if digest != token.digest:
            raise TokenExpiredError(
                "continuation_token expired: the index changed and the results already returned "
                "are no longer the head of the ranking; run the query again",
                _TOKEN,
            )
    if not response.has_more:
        return response, None
    digest = head_digest(token.digest if token is not None else "", pairs(response))
    return response, encode_token(PageToken(kind, query, offset + limit, version, digest), _key(searcher))


def search_content(searcher: Searcher, request: ContentRequest) -> ContentResponse:
    """One page of chunks for concepts and/or exact terms; a bad field is a ValidationError,
    a token outlived by an index change a TokenExpiredError."""
    started = time.perf_counter()
    validate_content_request(request)
    query, token = _content_query(searcher, request)
    response, next_token = _page(
        searcher, _CONTENT, query.to_dict(), token, request.limit,
        lambda at, size: searcher.search(query.options(at, size)),
        lambda page: [(h.id, h.relevance_score) for h in page.hits],
    )  # fmt: skip
    hits = response.hits
    shown = response.files[:_FILES_SHOWN]
    docs = {d.id: d for d in searcher.store.documents.get(list({h.file_id for h in hits} | set(shown)))}
    results = [_content_result(h, query.terms, docs) for h in hits]
    names = {p.id: p.name for p in searcher.store.projects.all()}
    stats = ContentStatistics(
        total_results=response.total,
        files_covered=tuple(docs[f].file_path for f in shown if f in docs),
        total_files=len(response.files),
        avg_relevance=round(response.mean_relevance, 4),
        search_interpretation=content_interpretation(
            query.concepts, query.terms, query.min_score, [names[p] for p in query.project_ids if p in names]
        ),
        took_ms=round((time.perf_counter() - started) * 1000, 2),
    )
    found = f"Found {response.total} result(s) in {len(response.files)} file(s)"
    return ContentResponse(
        data=ContentData(tuple(results), stats),
        status=ResponseStatus(True, 200, found if response.total else "No results", response.warnings),
        continuation=Continuation(next_token is not None, next_token),
        navigation_hints=_content_hints(query, results, next_token is not None, response.total),
    )


def _content_result(hit: ChunkHit, terms: Sequence[str], docs: Mapping[str, Any]) -> ContentResult:
    doc = docs.get(hit.file_id)
    return ContentResult(
        chunk_id=hit.id, document_id=hit.file_path, project=hit.project, project_id=hit.project_id,
        content=hit.content, relevance_score=round(hit.relevance_score, 4), chunk_index=hit.chunk_index,
        start_line=hit.start_line, end_line=hit.end_line, language=hit.language, node_type=hit.node_type,
        node_name=hit.node_name, matched_terms=tuple(t for t in terms if contains_term(hit.content, t)),
        document_keywords=doc.keywords if doc is not None else (), uri=hit.uri, matches=hit.matches,
    )  # fmt: skip


def _content_hints(
    query: _Content, results: list[ContentResult], has_more: bool, total: int
) -> NavigationHints:
    top = (results[0].document_id, results[0].start_line, results[0].end_line) if results else None
    actions = content_actions(
        results[0].project if results else "", top, has_more, total, not query.concepts, query.min_score
    )
    related = related_queries(
        [r.document_keywords for r in results],
        [*query.concepts, *query.terms],
        [r.node_name for r in results if r.node_name],
    )
    return NavigationHints(actions, related)


def find_documents(searcher: Searcher, request: FindDocumentsRequest) -> FindDocumentsResponse:
    """One page of files ranked for ``request.query``, with summaries and key phrases."""
    started = time.perf_counter()
    validate_find_request(request)
    text, project_ids = request.query.strip(), list(_project_ids(searcher, request.project))
    token = None
    if request.continuation_token is not None:
        token = decode_token(request.continuation_token, _key(searcher), _DOCUMENTS)
        _differ(
            {
                "query": (text, token.query["q"]) if text else None,
                "project": (project_ids, token.query["p"]) if request.project is not None else None,
            }
        )
        text, project_ids = token.query["q"], token.query["p"]
    response, next_token = _page(
        searcher, _DOCUMENTS, {"q": text, "p": project_ids}, token, request.limit,
        lambda at, size: searcher.search(
            SearchOptions(
                query=text, projects=tuple(project_ids), granularity="document", file_limit=size,
                offset=at, chunks_per_file=1, candidates=DOCUMENT_CANDIDATES,
            )
        ),
        lambda page: [(d.id, d.relevance_score) for d in page.documents],
    )  # fmt: skip
    results = _documents(response)
    where = "the given project" if project_ids else "every project"
    stats = DocumentsStatistics(
        total_results=response.total,
        avg_relevance=round(response.mean_relevance, 4),
        search_interpretation=f"Files about {text!r} in {where}, by their best chunks (meaning and words).",
        took_ms=round((time.perf_counter() - started) * 1000, 2),
    )
    top = results[0] if results else None
    actions = documents_actions(
        top.project if top else "", top.document_id if top else None, bool(next_token)
    )
    related = related_queries(
        [r.document_keywords for r in results], [text], [_stem(r.document_id) for r in results]
    )
    found = f"Found {response.total} file(s)" if response.total else "No files"
    return FindDocumentsResponse(
        DocumentsData(tuple(results), stats),
        ResponseStatus(True, 200, found, response.warnings),
        Continuation(next_token is not None, next_token),
        NavigationHints(actions, related),
    )


def _documents(response: SearchResponse) -> list[DocumentResult]:
    return [
        DocumentResult(
            document_id=d.file_path, project=d.project, project_id=d.project_id,
            relevance_score=round(d.relevance_score, 4), summary=d.summary, document_keywords=d.keywords,
            languages=d.languages, primary_language=d.primary_language, chunk_count=d.chunk_count,
            file_size=d.file_size, uri=d.uri,
        )
        for d in response.documents
    ]  # fmt: skip


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].split(".", 1)[0]
