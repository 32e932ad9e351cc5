"""The page's two static files, read once from the package and served under a content hash."""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from importlib import resources

from litestar import Response
from litestar.exceptions import NotFoundException

from server.web._highlight import token_css

__all__ = ["Asset", "asset_response", "load_assets"]


@dataclass(frozen=True, slots=True)
class Asset:
    """A static file: its bytes, media type and a short hash for cache-busting URLs."""

    body: bytes
    media_type: str
    version: str


def _asset(text: str, media_type: str) -> Asset:
    body = text.encode()
    return Asset(body, media_type, hashlib.blake2b(body, digest_size=6).hexdigest())


@functools.cache
def load_assets() -> dict[str, Asset]:
    """``app.css`` (with the highlighting colours) and ``app.js``, by name."""
    static = resources.files("server.web") / "static"
    css = (static / "app.css").read_text(encoding="utf-8") + token_css()
    js = (static / "app.js").read_text(encoding="utf-8")
    return {
        "app.css": _asset(css, "text/css; charset=utf-8"),
        "app.js": _asset(js, "text/javascript; charset=utf-8"),
    }


def asset_response(assets: dict[str, Asset], name: str) -> Response[bytes]:
    """The file ``name`` of ``assets``; URLs carry a content hash, so it is cached for good."""
    asset = assets.get(name)
    if asset is None:
        raise NotFoundException(f"no static file {name!r}")
    headers = {"Cache-Control": "public, max-age=31536000, immutable", "X-Content-Type-Options": "nosniff"}
    return Response(asset.body, media_type=asset.media_type, headers=headers)
