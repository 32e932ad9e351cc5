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

Either refusal is a 403 in lode's error shape that names the header.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from indexer.config import LodeConfig
from server.errors import send_error

__all__ = ["browser_guard_middleware", "host_name", "is_loopback_address", "is_loopback_host"]

Scope = MutableMapping[str, Any]


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


def browser_guard_middleware(config: LodeConfig) -> Callable[[Any], Any]:
    """ASGI middleware refusing rebinding hosts (when bound to loopback) and cross-site
    requests of any method (unless the origin is configured in ``cors_origins``)."""
    check_host = is_loopback_host(config.server.host.strip("[]").lower())
    allowed_origins = {o.rstrip("/").lower() for o in config.server.cors_origins}
    any_origin = "*" in allowed_origins  # CORS for every origin: requests from any too

    def refusal_of(scope: Scope) -> tuple[str, str] | None:
        """(the header, why) when the request is refused."""
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host_header = headers.get("host", "")
        if check_host and not is_loopback_host(host_name(host_header)):
            why = f"Host {host_header!r} is not this machine: lode on loopback answers only to localhost"
            return "Host", why
        if any_origin:
            return None
        if "origin" in headers:
            origin = headers["origin"].rstrip("/").lower()
            scheme = scope.get("scheme", "http")
            if origin not in allowed_origins and _foreign_origin(origin, host_header, scheme, check_host):
                return "Origin", f"cross-site request from {headers['origin']!r} refused (see cors_origins)"
        elif headers.get("sec-fetch-site", "").strip().lower() == "cross-site":
            return "Sec-Fetch-Site", "cross-site request refused (a page of another site sent it)"
        return None

    def wrap(app: Any) -> Any:  # an ASGI app (Litestar's middleware protocol)
        async def middleware(scope: Scope, receive: Any, send: Any) -> None:
            refusal = refusal_of(scope) if scope["type"] == "http" else None
            if refusal is None:
                await app(scope, receive, send)
                return
            header, message = refusal
            await send_error(send, 403, message, header, "header")

        return middleware

    return wrap
