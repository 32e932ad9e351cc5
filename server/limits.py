"""Request sizes: the body limit for ASGI apps mounted beside Litestar's routes (the MCP
endpoint), which Litestar's ``request_max_body_size`` does not reach; a JSON check in
front of every route (a body that is not UTF-8, or nests deeper than the JSON decoder
goes, is a 400 in lode's error shape: the JSON decoder raised a ``UnicodeDecodeError`` or
``RecursionError`` for them, a 500); and the URL limit, a 414 in lode's error shape.

A URL longer than ``MAX_URL_BYTES`` is refused by ``limit_url`` in front of the whole app.
For it to get there, uvicorn must take in a request head that long: its h11 parser stops
at 16 KiB by default and answers a plain-text 400 (or, when the client is still sending a
long URL, the connection is reset); ``UVICORN_LIMITS`` raises that to
``MAX_REQUEST_HEAD_BYTES``, and every server lode starts passes it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import msgspec

from server.errors import send_error

__all__ = [
    "MAX_REQUEST_HEAD_BYTES",
    "MAX_URL_BYTES",
    "UVICORN_LIMITS",
    "json_body_middleware",
    "json_problem",
    "limit_body",
    "limit_url",
]

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: Longest URL (path and query string, as sent) lode answers; a longer one is a 414.
MAX_URL_BYTES = 64 * 1024
#: Longest request head (request line and headers) uvicorn takes in before the app sees it.
MAX_REQUEST_HEAD_BYTES = 1024 * 1024
#: uvicorn's settings for the limits above (``uvicorn.run(app, **UVICORN_LIMITS)``).
UVICORN_LIMITS: dict[str, Any] = {"h11_max_incomplete_event_size": MAX_REQUEST_HEAD_BYTES}

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Any, Any], Awaitable[None]]


def json_problem(body: bytes) -> str | None:
    """Why ``body`` cannot be a JSON request of lode (None when it may be: whether it is
    well-formed JSON of the right shape is the route's to say)."""
    try:
        msgspec.json.decode(body)
    except UnicodeDecodeError as exc:
        return f"the body is not UTF-8 ({exc.reason})"
    except RecursionError:
        return "the JSON body nests too deep"
    except msgspec.DecodeError:
        return None  # malformed JSON: the route's decoder says where
    return None


def _is_json(scope: Scope) -> bool:
    content_type = dict(scope.get("headers") or []).get(b"content-type", b"application/json")
    return b"json" in content_type.lower() or b"text/plain" in content_type.lower()


def json_body_middleware(limit: int) -> Callable[[Any], Any]:
    """Litestar middleware: JSON bodies that are not UTF-8 or nest too deep get a 400 naming
    ``body`` before any route decodes them."""

    def wrap(app: Any) -> Any:
        checked = limit_body(app, limit, check=json_problem)

        async def middleware(scope: Scope, receive: Any, send: Any) -> None:
            if scope["type"] == "http" and scope["method"] in _BODY_METHODS and _is_json(scope):
                await checked(scope, receive, send)
            else:
                await app(scope, receive, send)

        return middleware

    return wrap


def limit_body(app: ASGIApp, limit: int, check: Callable[[bytes], str | None] | None = None) -> ASGIApp:
    """``app`` behind a ``limit``-byte request body cap: a larger body (declared by
    Content-Length or streamed) is answered 413 in lode's error shape before ``app`` sees
    it; a smaller one is read first (and, given ``check``, a body it finds a problem with
    is answered 400) and handed to ``app`` whole."""

    async def limited(scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await send_error(send, 413, f"request body over {limit} bytes", "body", "body")
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client left
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await send_error(send, 413, f"request body over {limit} bytes", "body", "body")
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        problem = check(b"".join(chunks)) if check is not None else None
        if problem is not None:
            await send_error(send, 400, problem, "body", "body")
            return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()  # after the body: the disconnect, whenever it comes

        await app(scope, replay, send)

    return limited


def limit_url(app: Any, limit: int = MAX_URL_BYTES) -> Any:
    """``app`` behind a ``limit``-byte URL cap: a longer path and query string is answered
    414 in lode's error shape (naming ``url``) before any route or mount sees it."""

    async def limited(scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            path = scope.get("raw_path") or scope.get("path", "").encode()
            query = scope.get("query_string", b"")
            size = len(path) + (1 + len(query) if query else 0)  # as sent: path?query
            if size > limit:
                if scope["type"] == "http":
                    await send_error(send, 414, f"the URL is over {limit} bytes", "url", "url")
                return
        await app(scope, receive, send)

    return limited
