"""What the controllers share: the context dependency, the thread hop, documented responses."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar

import anyio.to_thread
from litestar.datastructures import State
from litestar.di import NamedDependency, Provide
from litestar.openapi import ResponseSpec
from litestar.openapi.spec import Example

from server.context import ServerContext
from server.http.schemas.service import ErrorOut

__all__ = ["DEPENDENCIES", "ERRORS", "Ctx", "blocking", "example", "get_ctx", "ok"]

#: The service context as a route parameter.
Ctx = NamedDependency[ServerContext]

P = ParamSpec("P")
R = TypeVar("R")


def blocking(fn: Callable[P, R]) -> Callable[P, Awaitable[R]]:
    """Run a blocking handler (LanceDB, the model) in a worker thread, keeping its signature.

    Used instead of ``sync_to_thread=True``, which in Litestar 2.25 breaks the GET handler
    of a path that also has PATCH and DELETE handlers (it returns an un-awaited coroutine).
    """

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))

    return wrapper


def get_ctx(state: State) -> ServerContext:
    """The service context opened in the lifespan."""
    ctx: ServerContext = state.ctx
    return ctx


#: What every handler may take, declared once on the app.
DEPENDENCIES = {"ctx": Provide(get_ctx, sync_to_thread=False)}


def example(summary: str, value: Any) -> list[Example]:
    """A one-item examples list for a request body or response."""
    return [Example(summary=summary, value=value)]


def ok(model: Any, summary: str, value: Any, status: int = 200) -> dict[int, ResponseSpec]:
    """Documented success response with an example, plus the shared error responses."""
    return {
        status: ResponseSpec(data_container=model, examples=example(summary, value), generate_examples=False),
        **ERRORS,
    }


_ERROR_EXAMPLE = {
    "status_code": 400,
    "detail": "limit: must be between 1 and 100 (got 0)",
    "extra": [{"key": "limit", "message": "must be between 1 and 100 (got 0)", "source": "body"}],
}

ERRORS: dict[int, ResponseSpec] = {
    code: ResponseSpec(
        data_container=ErrorOut,
        description=text,
        generate_examples=False,
        examples=example(
            text,
            {**_ERROR_EXAMPLE, "status_code": code}
            if code == 400
            else {"status_code": code, "detail": text, "extra": None},
        ),
    )
    for code, text in (
        (400, "Invalid request: extra names the offending fields"),
        (404, "Unknown id"),
        (409, "Conflicts with the current state"),
        (413, "Request body too large"),
    )
}
