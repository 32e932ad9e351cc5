"""``POST /api/v1/search``."""

from __future__ import annotations

from typing import Annotated

from litestar import post
from litestar.di import Provide
from litestar.params import Body

from server import examples
from server.convert import to_options, to_search_response
from server.routes._common import Ctx, blocking, example, get_ctx, ok
from server.schemas import SearchRequest, SearchResponseOut

__all__ = ["search_routes"]

_deps = {"ctx": Provide(get_ctx, sync_to_thread=False)}


@post(
    "/api/v1/search",
    dependencies=_deps,
    tags=["search"],
    status_code=200,
    summary="Hybrid search with metadata filters",
    operation_id="search",
    responses=ok(SearchResponseOut, "Chunk results", examples.SEARCH),
)
@blocking
def search(
    ctx: Ctx,
    data: Annotated[
        SearchRequest,
        Body(
            examples=example(
                "Python methods about HTTP parsing",
                {
                    "query": "parse http request",
                    "granularity": "chunk",
                    "languages": ["python"],
                    "node_types": ["method"],
                    "limit": 5,
                },
            )
        ),
    ],
) -> SearchResponseOut:
    """Search documents or chunks; filters are data, never SQL; a bad option is a 400 naming it."""
    return to_search_response(ctx.lode.search(to_options(data)))


search_routes = [search]
