"""``GET /api/v1/documents/{id}`` and ``GET /api/v1/chunks/{id}``."""

from __future__ import annotations

from typing import Annotated

from litestar import get
from litestar.di import Provide
from litestar.params import FromPath, QueryParameter

from indexer.errors import NotFoundError
from indexer.limits import quote
from server import examples
from server.convert import to_chunk, to_document
from server.routes._common import Ctx, blocking, get_ctx, ok
from server.schemas import ChunkOut, DocumentOut

__all__ = ["chunk_routes", "document_routes"]

_deps = {"ctx": Provide(get_ctx, sync_to_thread=False)}


@get(
    "/api/v1/documents/{document_id:str}",
    dependencies=_deps,
    tags=["documents"],
    summary="One document",
    operation_id="get_document",
    responses=ok(DocumentOut, "A document", examples.DOCUMENT),
)
@blocking
def get_document(
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
    "/api/v1/chunks/{chunk_id:str}",
    dependencies=_deps,
    tags=["documents"],
    summary="One chunk",
    operation_id="get_chunk",
    responses=ok(ChunkOut, "A chunk", examples.CHUNK),
)
@blocking
def get_chunk(ctx: Ctx, chunk_id: FromPath[str]) -> ChunkOut:
    """A chunk by id with all its metadata."""
    found = ctx.lode.store.chunks.get([chunk_id])
    if not found:
        raise NotFoundError(f"no chunk {quote(chunk_id)}")
    return to_chunk(found[0])


document_routes = [get_document]
chunk_routes = [get_chunk]
