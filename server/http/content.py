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

from litestar import Controller, Request, get, post
from litestar.params import Body, FromPath, QueryParameter

from indexer.errors import NotFoundError
from indexer.search import ContentRequest, FindDocumentsRequest
from server.convert import from_wire, to_wire
from server.http._common import Ctx, blocking, example, ok
from server.http.examples.content import CONTENT as EXAMPLES
from server.http.schemas.content import (
    DocumentDataOut,
    DocumentTextOut,
    FindDocumentsIn,
    FindDocumentsOut,
    SearchContentIn,
    SearchContentOut,
)

__all__ = ["ContentController"]

_TEXT = "/text"
_RAW_DOCUMENT = re.compile(r"^/api/v1/projects/[^/]+/documents/(.*)$")


class ContentController(Controller):
    """Passages and files for agents, and documents by path."""

    path = "/api/v1"
    tags = ("agents",)
    # Litestar registers handlers by name, and a component shared by two responses takes
    # the description of the first: ``content`` (search_content) comes before ``documents``

    @post(
        "/search_content",
        status_code=200,
        summary="Retrieve passages by concepts and exact terms",
        operation_id="search_content",
        responses=ok(
            SearchContentOut, "Hybrid retrieval", EXAMPLES["search_content"], errors=(400, 404, 409, 413, 503)
        ),
    )
    @blocking
    def content(
        self,
        ctx: Ctx,
        data: Annotated[
            SearchContentIn,
            Body(examples=example("Concepts and an exact identifier", EXAMPLES["search_content_request"])),
        ],
    ) -> SearchContentOut:
        """Chunks with full text, ranked by ``semantic × 1.5^(exact terms present)`` over the whole
        candidate pool; page on with ``continuation_token`` (400 if altered or for another query,
        409 if the index changed under it)."""
        answer = ctx.lode.search_content(from_wire(data, ContentRequest))
        return to_wire(answer, SearchContentOut)

    @post(
        "/find_documents",
        status_code=200,
        summary="Discover the files that matter",
        operation_id="find_documents",
        responses=ok(
            FindDocumentsOut,
            "Files with summaries",
            EXAMPLES["find_documents"],
            errors=(400, 404, 409, 413, 503),
        ),
    )
    @blocking
    def documents(
        self,
        ctx: Ctx,
        data: Annotated[
            FindDocumentsIn, Body(examples=example("Files about a topic", EXAMPLES["find_documents_request"]))
        ],
    ) -> FindDocumentsOut:
        """Files ranked by relevance, each with a summary, key phrases, languages and chunk count."""
        answer = ctx.lode.find_documents(from_wire(data, FindDocumentsRequest))
        return to_wire(answer, FindDocumentsOut)

    @get(
        "/projects/{project_id:str}/documents/{document_id:path}",
        summary="A document by path: metadata and chunks, or (…/text) its lines",
        operation_id="get_project_document",
        responses=ok(DocumentDataOut, "Metadata and chunks", EXAMPLES["document"], errors=(400, 404, 503)),
    )
    @blocking
    def document_by_path(
        self,
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
        if not path.endswith(_TEXT):
            return to_wire(ctx.lode.document_data(project_id, path), DocumentDataOut)
        try:  # (``a/text`` is a file only where ``a`` is a folder: never both)
            text = ctx.lode.document_text(project_id, path.removesuffix(_TEXT), start_line, end_line)
        except NotFoundError:
            return to_wire(ctx.lode.document_data(project_id, path), DocumentDataOut)
        return DocumentDataOut(
            document_id=text.document_id,
            project=text.project,
            project_id=text.project_id,
            text=to_wire(text, DocumentTextOut),
        )


def _raw_document_id(request: Request[Any, Any, Any]) -> str | None:
    """The document id exactly as the client sent it (routing collapses ``//`` and ``..``)."""
    raw = request.scope.get("raw_path")
    match = _RAW_DOCUMENT.match(raw.decode("latin-1")) if isinstance(raw, bytes) else None
    return unquote(match.group(1)) if match else None
