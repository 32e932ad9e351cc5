"""``POST /api/v1/search``."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import MediaType, Response, post
from litestar.di import Provide
from litestar.params import Body

from indexer.search import SearchOptions
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
async def search(
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
) -> Response[SearchResponseOut]:
    """Search documents or chunks; filters are data, never SQL; a bad option is a 400 naming it."""
    options = to_options(data)
    answer = await ctx.pooled_search(options)
    if answer is not None:  # JSON the search process encoded (a result or an error)
        body: Any = answer.body  # sent as it is; the documented shape is SearchResponseOut's
        return Response(body, status_code=answer.status, media_type=MediaType.JSON)
    return Response(await _search_here(ctx, options))


@blocking
def _search_here(ctx: Ctx, options: SearchOptions) -> SearchResponseOut:
    """The search run in this process (no search process, or none ready)."""
    return to_search_response(ctx.lode.search(options))


search_routes = [search]
