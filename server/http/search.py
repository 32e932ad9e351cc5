"""``POST /api/v1/search``."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, MediaType, Response, post
from litestar.params import Body

from indexer.search import SearchOptions
from server.convert import from_wire, to_search_response
from server.http._common import Ctx, blocking, example, ok
from server.http.examples import core as examples
from server.http.schemas.search import SearchRequest, SearchResponseOut

__all__ = ["SearchController"]


class SearchController(Controller):
    """Hybrid search."""

    path = "/api/v1/search"
    tags = ("search",)

    @post(
        status_code=200,
        summary="Hybrid search with metadata filters",
        operation_id="search",
        responses=ok(
            SearchResponseOut,
            "Chunk results",
            examples.SEARCH,
            errors=(400, 404, 413, 503),
            description="Search results: documents (document granularity) or groups (chunk granularity)",
            more=[("Document results", examples.SEARCH_DOCUMENTS)],
        ),
    )
    async def search(
        self,
        ctx: Ctx,
        data: Annotated[
            SearchRequest,
            Body(examples=example("Python methods about HTTP parsing", examples.SEARCH_REQUEST)),
        ],
    ) -> Response[SearchResponseOut]:
        """Search documents or chunks; filters are data, never SQL; a bad option is a 400 naming it."""
        options = from_wire(data, SearchOptions)
        answer = await ctx.pooled_search(options)
        if answer is not None:  # JSON the search process encoded (a result or an error)
            body: Any = answer.body  # sent as it is; the documented shape is SearchResponseOut's
            return Response(body, status_code=answer.status, media_type=MediaType.JSON)
        return Response(await _search_here(ctx, options))


@blocking
def _search_here(ctx: Ctx, options: SearchOptions) -> SearchResponseOut:
    """The search run in this process (no search process, or none ready)."""
    return to_search_response(ctx.lode.search(options))
