"""The one place where errors become HTTP responses: ``{"status_code", "detail", "extra"}``."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from typing import Any

from litestar import MediaType, Request, Response
from litestar.exceptions import HTTPException

from indexer.errors import (
    ConflictError,
    EmbedError,
    LodeError,
    NotFoundError,
    PayloadTooLargeError,
    SearchCancelledError,
    StorageError,
    StoreError,
    UnauthorizedError,
    ValidationError,
)
from indexer.health import describe_storage_failure, is_storage_failure
from indexer.limits import MAX_FIELD_ERRORS, MAX_MESSAGE_CHARS, QUOTE_CHARS, clip

__all__ = ["EXCEPTION_HANDLERS", "error_body", "note_storage_failure", "send_error", "status_for"]

log = logging.getLogger(__name__)

#: ``extra`` of a storage failure's 503: the index, not the request, is at fault.
_STORAGE_EXTRA = [
    {"key": "index", "message": "the index's storage failed or the index is damaged", "source": "server"}
]

_STATUS: list[tuple[type[LodeError], int]] = [
    (ValidationError, 400),
    (UnauthorizedError, 401),
    (NotFoundError, 404),
    (ConflictError, 409),
    (PayloadTooLargeError, 413),
    (StoreError, 503),
    (EmbedError, 503),
    (SearchCancelledError, 499),  # nginx's "client closed request": its client is gone
]


def status_for(exc: LodeError) -> int:
    """The HTTP status of one of lode's errors."""
    for cls, status in _STATUS:
        if isinstance(exc, cls):
            return status
    return 400


def _body(status: int, detail: str, extra: Any = None) -> dict[str, Any]:
    return {"status_code": status, "detail": detail, "extra": extra}


def _json(status: int, body: dict[str, Any]) -> Response[dict[str, Any]]:
    return Response(body, status_code=status, media_type=MediaType.JSON)


def _response(status: int, detail: str, extra: Any = None) -> Response[dict[str, Any]]:
    return _json(status, _body(status, detail, extra))


async def send_error(
    send: Any, status: int, detail: str, key: str, source: str, headers: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    """Answer a raw ASGI request in lode's error shape, ``extra`` naming ``key`` (for the
    middleware and mounts that answer before Litestar's handlers and exception handlers),
    with ``headers`` added (a refusal's CORS headers)."""
    body = json.dumps(_body(status, detail, [{"key": key, "message": detail, "source": source}])).encode()
    sent = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers]
    await send({"type": "http.response.start", "status": status, "headers": sent})
    await send({"type": "http.response.body", "body": body})


def error_body(exc: BaseException) -> tuple[int, dict[str, Any]]:
    """The HTTP status and JSON body of an error: lode's own by their class, a storage
    failure (a damaged or unwritable index) a 503 saying so, any other a 500 that says
    nothing of it (also what a search process answers, so its errors look like the
    server's own)."""
    if not isinstance(exc, LodeError):
        if is_storage_failure(exc):
            return 503, _body(503, describe_storage_failure(exc), _STORAGE_EXTRA)
        return 500, _body(500, "Internal Server Error")
    status = status_for(exc)
    extra = None
    if isinstance(exc, ValidationError):
        extra = [
            {"key": e.field, "message": e.message, "source": "body"} for e in exc.errors[:MAX_FIELD_ERRORS]
        ]
    elif isinstance(exc, ConflictError | NotFoundError) and exc.field is not None:
        extra = [{"key": exc.field, "message": exc.message, "source": "body"}]
    elif isinstance(exc, StorageError):
        extra = _STORAGE_EXTRA
    return status, _body(status, str(exc), extra)


def _lode_error(request: Request[Any, Any, Any], exc: LodeError) -> Response[dict[str, Any]]:
    if isinstance(exc, StorageError):  # /health says degraded until the storage is back
        note_storage_failure(request, f"{request.method} {request.url.path}", exc)
    return _json(*error_body(exc))


_FIELD_IN_MESSAGE = re.compile(r"field `([^`]+)`")
#: A value quoted in a message, longer than an error quotes (msgspec's "Invalid enum value 'x'").
_LONG_QUOTE = re.compile(f"'([^']{{{QUOTE_CHARS + 1},}})'")


def _short(item: Any) -> dict[str, str]:
    """An ``extra`` item as ``ErrorFieldOut``: key, message and source, as text (Litestar
    leaves out the key or the source of some), the key and message cut short (they can
    quote what was sent: msgspec names an unknown field as sent)."""
    given = item if isinstance(item, dict) else {"message": item}
    key = str(given.get("key") or "body")
    message = _LONG_QUOTE.sub(lambda m: f"'{clip(m.group(1), QUOTE_CHARS)}'", str(given.get("message", "")))
    source = getattr(given.get("source"), "value", given.get("source"))  # Litestar's ParamType too
    source = str(source or ("body" if key == "body" else "query"))
    return {"key": clip(key, QUOTE_CHARS), "message": clip(message, MAX_MESSAGE_CHARS), "source": source}


def _name_fields(extra: Any) -> Any:
    """Litestar reports a missing or unknown body field under key ``data``; name the field.
    (A mapping becomes items, one per key: ``extra`` is a list or null.)"""
    if isinstance(extra, dict):
        extra = [{"key": str(k), "message": str(v)} for k, v in extra.items()]
    if not isinstance(extra, list):
        return extra
    named = []
    for item in extra[:MAX_FIELD_ERRORS]:
        match = None
        if isinstance(item, dict) and item.get("key") == "data":
            match = _FIELD_IN_MESSAGE.search(str(item.get("message", "")))
        named.append(_short({**item, "key": match.group(1)} if match else item))
    return named


def _http_error(_: Request[Any, Any, Any], exc: HTTPException) -> Response[dict[str, Any]]:
    extra = _name_fields(exc.extra) if isinstance(exc.extra, list | dict) else None
    detail = clip(exc.detail, MAX_MESSAGE_CHARS)
    if exc.status_code == 400 and not extra:  # the body could not be decoded at all
        extra = [{"key": "body", "message": detail, "source": "body"}]
    headers = getattr(exc, "headers", None)
    response = _response(exc.status_code, detail, extra)
    if headers:
        response.headers.update(headers)
    return response


def _unexpected(request: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, Any]]:
    log.exception("unhandled error on %s %s", request.method, clip(request.url.path), exc_info=exc)
    status, body = error_body(exc)
    if status == 503:  # a storage failure: /health says degraded until the store proves sound
        note_storage_failure(request, f"{request.method} {request.url.path}", exc)
    return _json(status, body)


def note_storage_failure(request: Request[Any, Any, Any], where: str, exc: BaseException) -> None:
    """Tell the server's storage health about a storage failure met answering ``request``."""
    ctx = getattr(request.app.state, "ctx", None)
    if ctx is not None:
        ctx.storage.failed(where, exc)


EXCEPTION_HANDLERS: dict[int | type[Exception], Any] = {
    LodeError: _lode_error,
    HTTPException: _http_error,
    Exception: _unexpected,
}
