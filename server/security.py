"""Browser attacks on a local server: DNS rebinding and cross-site requests.

A server on 127.0.0.1 without an API key is still reachable from any web page the user
opens: a page can POST a "simple" request (``text/plain``, no preflight) to
``http://127.0.0.1:7370/api/v1/projects`` and have lode index the home folder, and a page
on a domain that re-resolves to 127.0.0.1 (DNS rebinding) can read the index. So:

- bound to loopback, a request must name a loopback host (``Host: localhost:7370``,
  ``127.0.0.1``, ``[::1]``): a rebinding page's Host is its own domain;
- a request that changes something (not GET/HEAD/OPTIONS) from a browser must come from
  this server's own origin or one of ``cors_origins``: browsers send ``Origin`` on every
  cross-origin POST, PATCH and DELETE. Clients that are not browsers send no ``Origin``.

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

_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

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


def browser_guard_middleware(config: LodeConfig) -> Callable[[Any], Any]:
    """ASGI middleware refusing rebinding hosts (when bound to loopback) and cross-origin
    writes (always, unless the origin is configured in ``cors_origins``)."""
    check_host = is_loopback_host(config.server.host.strip("[]").lower())
    allowed_origins = {o.rstrip("/").lower() for o in config.server.cors_origins}
    any_origin = "*" in allowed_origins  # CORS for every origin: writes from any too

    def wrap(app: Any) -> Any:  # an ASGI app (Litestar's middleware protocol)
        async def middleware(scope: Scope, receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            host_header = headers.get("host", "")
            refusal: tuple[str, str] | None = None  # (the header, why)
            if check_host and not is_loopback_host(host_name(host_header)):
                refusal = (
                    "Host",
                    f"Host {host_header!r} is not this machine: lode on loopback answers only to localhost",
                )
            elif scope["method"] not in _SAFE_METHODS and "origin" in headers and not any_origin:
                origin = headers["origin"].rstrip("/").lower()
                own = _origin_of(host_header, scope.get("scheme", "http"))
                theirs, ours = _host_port(origin), _host_port(own)
                # the same port of another loopback name (localhost for 127.0.0.1) is this server
                same_loopback = (
                    check_host
                    and theirs is not None
                    and ours is not None
                    and theirs[0] is not None
                    and is_loopback_host(theirs[0])
                    and theirs[1] == ours[1]
                )
                if origin != own and origin not in allowed_origins and not same_loopback:
                    refusal = (
                        "Origin",
                        f"cross-site request from {headers['origin']!r} refused (see cors_origins)",
                    )
            if refusal is None:
                await app(scope, receive, send)
                return
            header, message = refusal
            await send_error(send, 403, message, header, "header")

        return middleware

    return wrap
