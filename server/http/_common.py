"""What the controllers share: the context dependency, the thread hop, documented responses."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, ParamSpec, TypeVar

import anyio.to_thread
from litestar.datastructures import State
from litestar.di import NamedDependency, Provide
from litestar.openapi import ResponseSpec
from litestar.openapi.spec import Example

from server.context import ServerContext
from server.http.schemas.service import ErrorOut

__all__ = ["DEPENDENCIES", "ERROR_TEXT", "Ctx", "blocking", "error_responses", "example", "get_ctx", "ok"]

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


#: Every error a route may answer, in words (the 401, 403 and 413 of middleware and
#: guards too: a route lists those it can meet).
ERROR_TEXT: dict[int, str] = {
    400: "Invalid request: extra names the offending fields",
    401: (
        "Missing or wrong API key (only on a server started with --api-key or LODE_API_KEY); "
        "the answer carries WWW-Authenticate: Bearer"
    ),
    403: (
        "A browser request refused: a cross-site Origin or Sec-Fetch-Site header, or a Host that is "
        "not this machine; extra names the header"
    ),
    404: "Not found: an unknown project, task, document, chunk, symbol or outline node",
    409: (
        "Conflicts with the current state: a write sent to a read-only server, a name or folder "
        "already registered, a finished task, or a continuation token the index outdated"
    ),
    413: "Request body over the server's limit (LODE_MAX_BODY_BYTES)",
    503: (
        "The index cannot be used: its storage failed (a damaged file, a full disk, a read-only "
        "folder) or the embedding model failed; GET /health says which"
    ),
}
_ERROR_EXAMPLES: dict[int, dict[str, Any]] = {
    400: {
        "status_code": 400,
        "detail": "limit: must be between 1 and 100 (got 0)",
        "extra": [{"key": "limit", "message": "must be between 1 and 100 (got 0)", "source": "body"}],
    },
    401: {
        "status_code": 401,
        "detail": "missing or wrong API key (send Authorization: Bearer <key>)",
        "extra": None,
    },
    403: {
        "status_code": 403,
        "detail": "cross-site request from 'https://example.com' refused (see cors_origins)",
        "extra": [
            {
                "key": "Origin",
                "message": "cross-site request from 'https://example.com' refused (see cors_origins)",
                "source": "header",
            }
        ],
    },
    404: {"status_code": 404, "detail": "no project 'shopp'", "extra": None},
    409: {
        "status_code": 409,
        "detail": "a project named 'shop' already exists",
        "extra": [{"key": "name", "message": "a project named 'shop' already exists", "source": "body"}],
    },
    413: {
        "status_code": 413,
        "detail": "request body over 1048576 bytes",
        "extra": [{"key": "body", "message": "request body over 1048576 bytes", "source": "body"}],
    },
    503: {
        "status_code": 503,
        "detail": "storage failure: No space left on device",
        "extra": [
            {
                "key": "index",
                "message": "the index's storage failed or the index is damaged",
                "source": "server",
            }
        ],
    },
}


def error_responses(*codes: int, public: bool = False) -> dict[int, ResponseSpec]:
    """The documented error responses of a route: ``codes``, and 401 and 403, which every
    route but a ``public`` one (no API key asked) can answer."""
    every = {*codes, 403} | (set() if public else {401})
    return {
        code: ResponseSpec(
            data_container=ErrorOut,
            description=ERROR_TEXT[code],
            generate_examples=False,
            examples=example(ERROR_TEXT[code].split(":")[0].split(" (")[0], _ERROR_EXAMPLES[code]),
        )
        for code in sorted(every)
    }


def ok(
    model: Any,
    summary: str,
    value: Any,
    status: int = 200,
    *,
    errors: Iterable[int] = (),
    description: str | None = None,
    more: Iterable[tuple[str, Any]] = (),
    public: bool = False,
) -> dict[int, ResponseSpec]:
    """The documented success response (``description``, by default the first line of the
    model's docstring; an example, and ``more``), and the route's errors (see ``error_responses``)."""
    text = description or next(iter((getattr(model, "__doc__", None) or "").strip().splitlines()), "")
    if not text:
        raise ValueError(f"a success response of {model!r} needs a description")
    examples = [*example(summary, value), *(Example(summary=s, value=v) for s, v in more)]
    return {
        status: ResponseSpec(
            data_container=model, description=text, examples=examples, generate_examples=False
        ),
        **error_responses(*errors, public=public),
    }
