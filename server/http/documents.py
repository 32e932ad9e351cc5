"""``GET /api/v1/documents/{id}`` and ``GET /api/v1/chunks/{id}``."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, get
from litestar.params import FromPath, QueryParameter

from indexer.errors import NotFoundError
from indexer.limits import quote
from server.convert import to_chunk, to_document
from server.http._common import Ctx, blocking, ok
from server.http.examples import core as examples
from server.http.schemas.search import ChunkOut, DocumentOut

__all__ = ["DocumentController"]


class DocumentController(Controller):
    """A document or a chunk by id."""

    path = "/api/v1"
    tags = ("documents",)

    @get(
        "/documents/{document_id:str}",
        summary="One document",
        operation_id="get_document",
        responses=ok(DocumentOut, "A document", examples.DOCUMENT, errors=(400, 404, 503)),
    )
    @blocking
    def get_document(
        self,
        ctx: Ctx,
        document_id: FromPath[str],
        content: Annotated[bool, QueryParameter(description="Include the full text")] = False,
        chunks: Annotated[bool, QueryParameter(description="Include every chunk")] = False,
    ) -> DocumentOut:
        """A document's metadata by id, optionally with its text and chunks."""
        store = ctx.lode.store
        found = store.documents.get([document_id])
        if not found:
            raise NotFoundError(f"no document {quote(document_id)}")
        doc = found[0]
        text = store.documents.content(doc.id) if content else None
        parts = store.chunks.of_files([doc.id]) if chunks else None
        return to_document(doc, text, parts)

    @get(
        "/chunks/{chunk_id:str}",
        summary="One chunk",
        operation_id="get_chunk",
        responses=ok(ChunkOut, "A chunk", examples.CHUNK, errors=(404, 503)),
    )
    @blocking
    def get_chunk(self, ctx: Ctx, chunk_id: FromPath[str]) -> ChunkOut:
        """A chunk by id with all its metadata."""
        found = ctx.lode.store.chunks.get([chunk_id])
        if not found:
            raise NotFoundError(f"no chunk {quote(chunk_id)}")
        return to_chunk(found[0])
