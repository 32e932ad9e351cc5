"""``POST /api/v1/search``."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable
from typing import Annotated, Any, TypeVar

import anyio.to_thread
from litestar import Controller, MediaType, Request, Response, post
from litestar.params import Body

from indexer.search import SearchOptions, cancellable
from server.convert import from_wire, to_search_response
from server.http._common import Ctx, example, ok
from server.http.examples import core as examples
from server.http.schemas.search import SearchRequest, SearchResponseOut

__all__ = ["SearchController", "until_disconnected"]

T = TypeVar("T")
#: The status of an answer no one reads: the client went away (nginx's "client closed request").
CLIENT_GONE = 499


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
        request: Request[Any, Any, Any],
        data: Annotated[
            SearchRequest,
            Body(examples=example("Python methods about HTTP parsing", examples.SEARCH_REQUEST)),
        ],
    ) -> Response[SearchResponseOut]:
        """Search documents or chunks; filters are data, never SQL; a bad option is a 400 naming
        it. A search whose client disconnects stops, freeing its search process for the next."""
        options = from_wire(data, SearchOptions)
        cancel = threading.Event()
        answer = await until_disconnected(request, _answer(ctx, options, cancel), cancel)
        if answer is None:  # no one is there to read it
            return Response(None, status_code=CLIENT_GONE)  # type: ignore[arg-type]
        return answer


async def _answer(ctx: Ctx, options: SearchOptions, cancel: threading.Event) -> Response[SearchResponseOut]:
    """The search by a search process (its JSON as encoded there) or in this process."""
    pooled = await ctx.pooled_search(options)
    if pooled is not None:  # JSON the search process encoded (a result or an error)
        body: Any = pooled.body  # sent as it is; the documented shape is SearchResponseOut's
        return Response(body, status_code=pooled.status, media_type=MediaType.JSON)

    def run() -> SearchResponseOut:
        with cancellable(cancel):
            return to_search_response(ctx.lode.search(options))

    # abandoned when the client goes: the search stops at its next stage (``cancel``)
    return Response(await anyio.to_thread.run_sync(run, abandon_on_cancel=True))


async def until_disconnected(
    request: Request[Any, Any, Any], work: Awaitable[T], cancel: threading.Event | None = None
) -> T | None:
    """``work``'s result, or None when the client disconnects first: ``work`` is then
    cancelled (and ``cancel`` set, for work in a thread that checks it)."""
    task = asyncio.ensure_future(work)
    gone = asyncio.ensure_future(_disconnect(request))
    try:
        await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            return task.result()
        if gone.exception() is not None:  # could not listen: the work goes on
            return await task
        if cancel is not None:
            cancel.set()
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        return None
    finally:
        gone.cancel()
        task.cancel()


async def _disconnect(request: Request[Any, Any, Any]) -> None:
    """Return once the client has disconnected (the body was read already)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass
