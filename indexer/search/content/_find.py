"""``find_documents``: discovery of the files that matter, with summaries instead of text.

Files are ranked by reciprocal-rank fusion of three fixed-size candidate lists, as the
document granularity of ``search`` does: the file of each of the best chunks (hybrid
chunk ranking, weight 1), the nearest document vectors and document BM25 (weight 0.5
each). The pool never depends on the page, so pages never repeat or skip a file;
continuation tokens work as in ``search_content``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from indexer.errors import TokenExpiredError, ValidationError
from indexer.models import ChunkFilter
from indexer.search._engine import Scope, Searcher
from indexer.search._fusion import Ranked, fuse
from indexer.search._options import SearchOptions
from indexer.search._ranking import fuse_chunks
from indexer.search.content._hints import documents_actions, related_queries
from indexer.search.content._request import FindDocumentsRequest, validate_find_request
from indexer.search.content._results import (
    Continuation,
    DocumentResult,
    DocumentsData,
    DocumentsStatistics,
    FindDocumentsResponse,
    NavigationHints,
    ResponseStatus,
)
from indexer.search.content._tokens import PageToken, decode_token, encode_token, ranking_digest

__all__ = ["DOCUMENT_CANDIDATES", "find_documents", "rank_documents"]

_KIND = "find_documents"
#: Documents taken from each document-level list; chunks from each chunk-level list are 4x this.
DOCUMENT_CANDIDATES = 100


def rank_documents(searcher: Searcher, query: str, project_ids: tuple[str, ...]) -> list[tuple[str, float]]:
    """Every candidate file of ``query``: (document id, score in [0, 1]), best first."""
    flt = ChunkFilter(project_ids=project_ids)
    config = searcher.ranking
    calls = {
        f"chunk_{n}": c
        for n, c in searcher.candidate_calls("chunks", "hybrid", query, flt, DOCUMENT_CANDIDATES * 4).items()
    }
    if config.document_signal_weight > 0:
        doc_calls = searcher.candidate_calls("documents", "hybrid", query, flt, DOCUMENT_CANDIDATES)
        calls.update({f"document_{n}": c for n, c in doc_calls.items()})
    found = searcher.gather(calls)
    chunk_lists = {n[6:]: v for n, v in found.items() if n.startswith("chunk_")}
    fused = fuse_chunks(query, chunk_lists, config.weights_for(query))
    scope = Scope(SearchOptions(query=query), flt, {})
    chunk_ranked = searcher.prioritize(scope, fused).ranked  # the search's role prior
    lists = {"chunks": Ranked(list(dict.fromkeys(c.file_id for c, _ in chunk_ranked)))}
    for name in ("document_semantic", "document_lexical"):
        if name in found:
            lists[name] = Ranked([c.id for c in found[name]], config.document_signal_weight)
    return fuse(lists)


def _query_of(
    searcher: Searcher, request: FindDocumentsRequest, key: bytes
) -> tuple[dict[str, Any], int, PageToken | None]:
    project_ids: list[str] = []
    if request.project is not None:
        project_ids = [p.id for p in searcher.resolve_projects([request.project], field="project")]
    if request.continuation_token is None:
        return {"q": request.query.strip(), "p": project_ids}, 0, None
    token = decode_token(request.continuation_token, key, _KIND)
    differ = []
    if request.query.strip() and request.query.strip() != token.query["q"]:
        differ.append("query")
    if request.project is not None and project_ids != token.query["p"]:
        differ.append("project")
    if differ:
        raise ValidationError(
            "continuation_token", f"was made for another query ({', '.join(differ)} differ)"
        )
    return token.query, token.offset, token


def find_documents(searcher: Searcher, request: FindDocumentsRequest, key: bytes) -> FindDocumentsResponse:
    """One page of files ranked for ``request.query``, with summaries and key phrases."""
    started = time.perf_counter()
    validate_find_request(request)
    query, offset, token = _query_of(searcher, request, key)
    version = searcher.store.index_version()
    ranked = rank_documents(searcher, query["q"], tuple(query["p"]))
    if (
        token is not None
        and token.index_version != version
        and ranking_digest(ranked[:offset]) != token.digest
    ):
        raise TokenExpiredError(
            "continuation_token expired: the index changed; run the query again", "continuation_token"
        )
    end = offset + request.limit
    results = _results(searcher, ranked[offset:end])
    next_token = None
    if len(ranked) > end:
        next_token = encode_token(PageToken(_KIND, query, end, version, ranking_digest(ranked[:end])), key)
    where = "the given project" if query["p"] else "every project"
    stats = DocumentsStatistics(
        total_results=len(ranked),
        avg_relevance=round(sum(s for _, s in ranked) / len(ranked), 4) if ranked else 0.0,
        search_interpretation=f"Files about {query['q']!r} in {where}, by best chunks, vectors, words.",
        took_ms=round((time.perf_counter() - started) * 1000, 2),
    )
    message = f"Found {len(ranked)} file(s)" if ranked else "No files"
    return FindDocumentsResponse(
        DocumentsData(tuple(results), stats),
        ResponseStatus(True, 200, message),
        Continuation(next_token is not None, next_token),
        _hints(results, query["q"], next_token is not None),
    )


def _hints(results: list[DocumentResult], query: str, has_more: bool) -> NavigationHints:
    top = results[0] if results else None
    actions = documents_actions(top.project if top else "", top.document_id if top else None, has_more)
    related = related_queries(
        [r.document_keywords for r in results], [query], [_stem(r.document_id) for r in results]
    )
    return NavigationHints(actions, related)


def _results(searcher: Searcher, page: list[tuple[str, float]]) -> list[DocumentResult]:
    docs = {d.id: d for d in searcher.store.get_documents([i for i, _ in page])}
    names: Mapping[str, str] = {p.id: p.name for p in searcher.store.list_projects()}
    return [
        DocumentResult(
            document_id=d.file_path, project=names.get(d.project_id, ""), project_id=d.project_id,
            relevance_score=round(score, 4), summary=d.summary, document_keywords=d.keywords,
            languages=d.languages, primary_language=d.primary_language, chunk_count=d.chunk_count,
            file_size=d.file_size,
        )
        for doc_id, score in page
        if (d := docs.get(doc_id)) is not None
    ]  # fmt: skip


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].split(".", 1)[0]
