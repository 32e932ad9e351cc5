"""Browser attacks on a local server: DNS rebinding and cross-site requests.

A server on 127.0.0.1 without an API key is still reachable from any web page the user
opens: a page can POST a "simple" request (``text/plain``, no preflight) to
``http://127.0.0.1:7370/api/v1/projects`` and have lode index the home folder, and a page
on a domain that re-resolves to 127.0.0.1 (DNS rebinding) can read the index. So:

- bound to loopback, a request must name a loopback host (``Host: localhost:7370``,
  ``127.0.0.1``, ``[::1]``): a rebinding page's Host is its own domain;
- a request from a browser, whatever its method, must come from this server's own origin
  or one of ``cors_origins``: browsers send ``Origin`` on every cross-origin POST, PATCH,
  DELETE and ``fetch``, and ``Sec-Fetch-Site: cross-site`` on the rest (an ``<img>`` or a
  link to ``/api/v1/projects/x/outline/grep?pattern=…`` does work before any CORS check).
  Clients that are not browsers send neither header.

Either refusal is a 403 in lode's error shape that names the header. This middleware is
also lode's CORS: ``cors_origins`` holds exact origins, patterns (``vscode-webview://*``:
an editor's webviews, each with an origin of its own) or ``*``; an allowed origin's
answers carry ``Access-Control-Allow-Origin``, and so does a refusal (the page then sees
the 403 and its reason, not "Failed to fetch"). Every preflight is answered (the request
that follows is refused here if its origin is not allowed, before any handler runs).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from indexer.config import LodeConfig
from server.errors import send_error

__all__ = [
    "AllowedOrigins",
    "browser_guard_middleware",
    "host_name",
    "is_loopback_address",
    "is_loopback_host",
]

Scope = MutableMapping[str, Any]
Headers = list[tuple[bytes, bytes]]
#: What ``*`` stands for in an origin pattern: one name, port or id (no dot, no colon).
_PART = "[a-z0-9-]+"
#: Headers a page may read from lode's answers besides the simple ones.
_EXPOSED = b"WWW-Authenticate, Retry-After"
_METHODS = b"DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT"
#: How long a browser may keep a preflight's answer (seconds).
_PREFLIGHT_MAX_AGE = b"600"


class AllowedOrigins:
    """The origins of ``cors_origins``: exact ones, patterns where ``*`` stands for one
    name, port or id (``vscode-webview://*``, ``http://localhost:*``), or ``*`` for any."""

    def __init__(self, entries: Iterable[str]) -> None:
        normal = {e.strip().rstrip("/").lower() for e in entries if e.strip()}
        #: True when ``*`` is one of them: every origin is allowed.
        self.any = "*" in normal
        self._exact = frozenset(e for e in normal if "*" not in e)
        patterns = [re.escape(e).replace(r"\*", _PART) for e in sorted(normal) if "*" in e and e != "*"]
        self._pattern = re.compile("|".join(f"(?:{p})" for p in patterns)) if patterns else None

    def allows(self, origin: str) -> bool:
        """True when ``origin`` (an ``Origin`` header) is one of these, or matches one."""
        origin = origin.strip().rstrip("/").lower()
        if self.any or origin in self._exact:
            return True
        return self._pattern is not None and self._pattern.fullmatch(origin) is not None


def host_name(host_header: str) -> str:
    """The host of a ``Host`` header without its port (``[::1]:7370`` → ``::1``), lower case."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host[1:]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def is_loopback_address(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.x, ::1): what ``serve`` may bind
    without an API key; a name that merely starts like one (``127.evil.example``) is not."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_loopback_host(host: str) -> bool:
    """A loopback address, or a name under ``.localhost`` (which resolves to loopback)."""
    return host.endswith(".localhost") or is_loopback_address(host)


def _host_port(url: str) -> tuple[str | None, int | None] | None:
    """The host and port of a URL; None when it cannot be read (a port that is not a
    number, a broken IPv6 literal)."""
    try:
        parts = urlsplit(url)
        return parts.hostname, parts.port
    except ValueError:
        return None


def _origin_of(host_header: str, scheme: str) -> str:
    return f"{scheme}://{host_header.strip().lower()}"


def _foreign_origin(origin: str, host_header: str, scheme: str, check_host: bool) -> bool:
    """True when ``origin`` is not this server (the same port of another loopback name,
    ``localhost`` for ``127.0.0.1``, is this server)."""
    own = _origin_of(host_header, scheme)
    if origin == own:
        return False
    theirs, ours = _host_port(origin), _host_port(own)
    same_loopback = (
        check_host
        and theirs is not None
        and ours is not None
        and theirs[0] is not None
        and is_loopback_host(theirs[0])
        and theirs[1] == ours[1]
    )
    return not same_loopback


def _cors_headers(origin: str) -> Headers:
    """What lets the page of ``origin`` read an answer (a refusal too)."""
    return [
        (b"access-control-allow-origin", origin.encode("latin-1")),
        (b"access-control-expose-headers", _EXPOSED),
        (b"vary", b"Origin"),
    ]


def _with_headers(send: Any, extra: Headers) -> Any:
    """``send`` adding ``extra`` to the response's headers (a ``Vary`` merged with its own)."""

    async def wrapped(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"vary"]
            vary = [v for k, v in message.get("headers", []) if k.lower() == b"vary"]
            added = [(k, b", ".join([*vary, v]) if k == b"vary" else v) for k, v in extra]
            message = {**message, "headers": [*headers, *added]}
        await send(message)

    return wrapped


async def _answer_preflight(send: Any, origin: str, headers: dict[str, str]) -> None:
    """A preflight's answer: the method and headers asked for are allowed from ``origin``
    (the request itself passes the guard or is refused, with headers the page can read)."""
    asked = headers.get("access-control-request-headers", "").encode("latin-1")
    answer = [
        *_cors_headers(origin),
        (b"access-control-allow-methods", _METHODS),
        (b"access-control-max-age", _PREFLIGHT_MAX_AGE),
        *([(b"access-control-allow-headers", asked)] if asked else []),
        (b"content-length", b"0"),
    ]
    await send({"type": "http.response.start", "status": 204, "headers": answer})
    await send({"type": "http.response.body", "body": b""})


async def _answer(
    app: Any, scope: Scope, receive: Any, send: Any, headers: dict[str, str], refusal: tuple[str, str] | None
) -> None:
    """Pass the request on (with CORS headers when it has an ``Origin``), answer its
    preflight, or refuse it (with CORS headers, so the page sees why)."""
    origin = headers.get("origin")
    cors = _cors_headers(origin) if origin is not None else []
    preflight = (
        origin is not None and scope["method"] == "OPTIONS" and "access-control-request-method" in headers
    )
    if preflight and (refusal is None or refusal[0] == "Origin"):
        await _answer_preflight(send, origin or "", headers)
    elif refusal is None:
        await app(scope, receive, _with_headers(send, cors) if cors else send)
    else:
        await send_error(send, 403, refusal[1], refusal[0], "header", cors)


def browser_guard_middleware(config: LodeConfig) -> Callable[[Any], Any]:
    """ASGI middleware refusing rebinding hosts (when bound to loopback) and cross-site
    requests of any method (unless the origin is allowed by ``cors_origins``), answering
    preflights, and adding CORS headers for the requests that carry an ``Origin``."""
    check_host = is_loopback_host(config.server.host.strip("[]").lower())
    allowed = AllowedOrigins(config.server.cors_origins)

    def refusal_of(scope: Scope, headers: dict[str, str]) -> tuple[str, str] | None:
        """(the header, why) when the request is refused."""
        host_header = headers.get("host", "")
        if check_host and not is_loopback_host(host_name(host_header)):
            why = f"Host {host_header!r} is not this machine: lode on loopback answers only to localhost"
            return "Host", why
        if allowed.any:
            return None
        if "origin" in headers:
            origin = headers["origin"].rstrip("/").lower()
            scheme = scope.get("scheme", "http")
            if not allowed.allows(origin) and _foreign_origin(origin, host_header, scheme, check_host):
                return "Origin", f"cross-site request from {headers['origin']!r} refused (see cors_origins)"
        elif headers.get("sec-fetch-site", "").strip().lower() == "cross-site":
            return "Sec-Fetch-Site", "cross-site request refused (a page of another site sent it)"
        return None

    def wrap(app: Any) -> Any:  # an ASGI app (Litestar's middleware protocol)
        async def middleware(scope: Scope, receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            await _answer(app, scope, receive, send, headers, refusal_of(scope, headers))

        return middleware

    return wrap
