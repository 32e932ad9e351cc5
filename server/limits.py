"""Request bodies: the size limit for ASGI apps mounted beside Litestar's routes (the MCP
endpoint), which Litestar's ``request_max_body_size`` does not reach, and a JSON check in
front of every route: a body that is not UTF-8, or nests deeper than the JSON decoder
goes, is a 400 in lode's error shape (the JSON decoder raised a
``UnicodeDecodeError`` or ``RecursionError`` for them: a 500)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import msgspec

from server.errors import send_error

__all__ = ["json_body_middleware", "json_problem", "limit_body"]

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

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
