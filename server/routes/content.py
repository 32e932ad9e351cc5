"""Agent endpoints: ``POST /api/v1/search_content``, ``POST /api/v1/find_documents``,
``GET /api/v1/projects/{id}/documents/{document_id}`` and ``…/{document_id}/text``.

``document_id`` is a path with slashes, so one route takes every path under
``documents/``: a path naming an indexed document answers its metadata and chunks; a path
ending in ``/text`` whose prefix names one answers that document's lines. (A file cannot
be both ``a`` and ``a/text``, so the two never collide.)
"""

from __future__ import annotations

import re
from typing import Annotated, Any
from urllib.parse import unquote

from litestar import Request, get, post
from litestar.di import Provide
from litestar.params import Body, FromPath, QueryParameter

from indexer.errors import NotFoundError
from indexer.search import ContentRequest, FindDocumentsRequest
from server.routes._common import Ctx, blocking, example, get_ctx, ok
from server.schemas_content import (
    DocumentDataOut,
    DocumentTextOut,
    FindDocumentsIn,
    FindDocumentsOut,
    SearchContentIn,
    SearchContentOut,
    to_out,
)

__all__ = ["EXAMPLES", "content_routes"]

_deps = {"ctx": Provide(get_ctx, sync_to_thread=False)}
_TEXT = "/text"
_RAW_DOCUMENT = re.compile(r"^/api/v1/projects/[^/]+/documents/(.*)$")

_RESULT: dict[str, Any] = {
    "chunk_id": "01a2007c-d35a-73f7-abb6-264c29371921",
    "document_id": "src/auth/login_form.py",
    "project": "shop",
    "project_id": "6a1f3c52-1b7e-4f0e-9d7a-2f3e4c5b6a70",
    "content": "def login(user: str, password: str) -> Session:\n    session = Session(user)\n    ...",
    "relevance_score": 0.8421,
    "chunk_index": 5,
    "start_line": 40,
    "end_line": 61,
    "language": "python",
    "node_type": "function",
    "node_name": "login",
    "matched_terms": ["Session"],
    "document_keywords": ["login", "session token", "password hash", "form validation", "rate limit"],
}
_HINTS: dict[str, Any] = {
    "next_actions": [
        "Read the whole file: get_document_data(project='shop', document_id='src/auth/login_form.py')",
        "More results: call search_content again with continuation_token=next_token",
    ],
    "related_queries": ["session token", "password hash", "rate limit"],
}
EXAMPLES: dict[str, Any] = {
    "search_content": {
        "data": {
            "results": [_RESULT],
            "statistics": {
                "total_results": 47,
                "files_covered": ["src/auth/login_form.py", "src/auth/session.py"],
                "total_files": 2,
                "avg_relevance": 0.61,
                "search_interpretation": "Chunks about 'authentication' (by meaning); boosted ×1.5 for each "
                "exact term present: 'Session' (exact case) in shop; relevance ≥ 0.35.",
                "took_ms": 23.5,
            },
        },
        "status": {
            "success": True,
            "code": 200,
            "message": "Found 47 result(s) in 2 file(s)",
            "warnings": [],
        },
        "continuation": {"has_more": True, "next_token": "eyJkIjoiNGMxZ…"},
        "navigation_hints": _HINTS,
    },
    "find_documents": {
        "data": {
            "documents": [
                {
                    "document_id": "src/auth/session.py",
                    "project": "shop",
                    "project_id": _RESULT["project_id"],
                    "relevance_score": 0.97,
                    "summary": "Sessions: creation, refresh and expiry of login tokens.",
                    "document_keywords": ["session", "refresh token", "expiry", "login", "cookie"],
                    "languages": ["python"],
                    "primary_language": "python",
                    "chunk_count": 9,
                    "file_size": 4210,
                }
            ],
            "statistics": {
                "total_results": 31,
                "avg_relevance": 0.42,
                "search_interpretation": "Files about 'authentication' in every project, by best chunks, "
                "vectors, words.",
                "took_ms": 31.0,
            },
        },
        "status": {"success": True, "code": 200, "message": "Found 31 file(s)", "warnings": []},
        "continuation": {"has_more": True, "next_token": "eyJkIjoiYTE5…"},
        "navigation_hints": _HINTS,
    },
    "document": {
        "document_id": "src/auth/session.py",
        "project": "shop",
        "project_id": _RESULT["project_id"],
        "languages": ["python"],
        "primary_language": "python",
        "chunk_count": 1,
        "file_size": 4210,
        "last_modified": 1795300000.0,
        "indexed_at": "2026-11-21T10:00:03Z",
        "keywords": ["session", "refresh token", "expiry", "login", "cookie"],
        "summary": "Sessions: creation, refresh and expiry of login tokens.",
        "chunks": [
            {
                "chunk_id": _RESULT["chunk_id"],
                "chunk_index": 0,
                "start_line": 1,
                "end_line": 3,
                "node_type": "block",
                "node_name": "",
                "content": '"""Sessions: creation, refresh and expiry of login tokens."""',
            }
        ],
        "text": None,
    },
}


@post(
    "/api/v1/search_content",
    dependencies=_deps,
    tags=["agents"],
    status_code=200,
    summary="Retrieve passages by concepts and exact terms",
    operation_id="search_content",
    responses=ok(SearchContentOut, "Hybrid retrieval", EXAMPLES["search_content"]),
)
@blocking
def search_content(
    ctx: Ctx,
    data: Annotated[
        SearchContentIn,
        Body(
            examples=example(
                "Concepts and an exact identifier",
                {"semantic_concepts": ["authentication"], "exact_terms": ["Session"], "limit": 5},
            )
        ),
    ],
) -> SearchContentOut:
    """Chunks with full text, ranked by ``semantic × 1.5^(exact terms present)`` over the whole
    candidate pool; page on with ``continuation_token`` (400 if altered or for another query,
    409 if the index changed under it)."""
    request = ContentRequest(
        semantic_concepts=tuple(data.semantic_concepts),
        exact_terms=tuple(data.exact_terms),
        project=data.project,
        min_score=data.min_score,
        limit=data.limit,
        continuation_token=data.continuation_token,
    )
    return to_out(ctx.lode.search_content(request), SearchContentOut)


@post(
    "/api/v1/find_documents",
    dependencies=_deps,
    tags=["agents"],
    status_code=200,
    summary="Discover the files that matter",
    operation_id="find_documents",
    responses=ok(FindDocumentsOut, "Files with summaries", EXAMPLES["find_documents"]),
)
@blocking
def find_documents(
    ctx: Ctx,
    data: Annotated[
        FindDocumentsIn,
        Body(examples=example("Files about a topic", {"query": "authentication", "limit": 5})),
    ],
) -> FindDocumentsOut:
    """Files ranked by relevance, each with a summary, key phrases, languages and chunk count."""
    request = FindDocumentsRequest(
        query=data.query, project=data.project, limit=data.limit, continuation_token=data.continuation_token
    )
    return to_out(ctx.lode.find_documents(request), FindDocumentsOut)


@get(
    "/api/v1/projects/{project_id:str}/documents/{document_id:path}",
    dependencies=_deps,
    tags=["agents"],
    summary="A document by path: metadata and chunks, or (…/text) its lines",
    operation_id="get_project_document",
    responses=ok(DocumentDataOut, "Metadata and chunks", EXAMPLES["document"]),
)
@blocking
def get_project_document(
    ctx: Ctx,
    request: Request[Any, Any, Any],
    project_id: FromPath[str],
    document_id: FromPath[str],
    start_line: Annotated[
        int | None, QueryParameter(ge=1, description="First line, 1-based (…/text only)")
    ] = None,
    end_line: Annotated[
        int | None, QueryParameter(ge=1, description="Last line, inclusive (…/text only)")
    ] = None,
) -> DocumentDataOut:
    """``document_id`` is the path relative to the project root (as search results give it);
    append ``/text`` for its lines. ``..``, absolute paths and symlinks leaving the root are a 400."""
    path = _raw_document_id(request) or document_id.removeprefix("/")
    try:
        return to_out(ctx.lode.document_data(project_id, path), DocumentDataOut)
    except NotFoundError:
        if not path.endswith(_TEXT):
            raise
    text = ctx.lode.document_text(project_id, path.removesuffix(_TEXT), start_line, end_line)
    return DocumentDataOut(
        document_id=text.document_id,
        project=text.project,
        project_id=text.project_id,
        text=to_out(text, DocumentTextOut),
    )


def _raw_document_id(request: Request[Any, Any, Any]) -> str | None:
    """The document id exactly as the client sent it (routing collapses ``//`` and ``..``)."""
    raw = request.scope.get("raw_path")
    match = _RAW_DOCUMENT.match(raw.decode("latin-1")) if isinstance(raw, bytes) else None
    return unquote(match.group(1)) if match else None


content_routes = [search_content, find_documents, get_project_document]
