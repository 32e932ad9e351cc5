"""The request body limit for ASGI apps mounted beside Litestar's routes (the MCP endpoint),
which Litestar's ``request_max_body_size`` does not reach."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from server.errors import send_error

__all__ = ["limit_body"]

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Any, Any], Awaitable[None]]


def limit_body(app: ASGIApp, limit: int) -> ASGIApp:
    """``app`` behind a ``limit``-byte request body cap: a larger body (declared by
    Content-Length or streamed) is answered 413 in lode's error shape before ``app`` sees
    it; a smaller one is read first and handed to ``app`` whole."""

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
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()  # after the body: the disconnect, whenever it comes

        await app(scope, replay, send)

    return limited
