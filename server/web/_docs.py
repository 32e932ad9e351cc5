"""``/api/docs``: the interactive API docs (Swagger UI), served entirely from lode's own origin.

The viewer's files come from the ``swagger-ui-py`` package (its ``static`` folder, Swagger
UI's own licence beside them); nothing loads from a CDN. The page is a public shell like
the web page: ``docs.js`` asks for the API key when the server has one (the same
session key the web page keeps) and tries it, fetches ``/api/openapi.json`` (public: it
holds no data), and sends the key with every "try it out" request.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
from importlib import resources
from pathlib import Path

from litestar import MediaType, Response, get
from litestar.params import FromPath

from server.http._common import Ctx
from server.web._assets import Asset, asset_response
from server.web._views import render

__all__ = ["docs_routes", "load_docs_assets", "swagger_ui_static"]

#: Swagger UI's files the page uses, with their media types.
_SWAGGER_FILES = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "favicon-32x32.png": "image/png",
}
_OWN_FILES = {"docs.js": "text/javascript; charset=utf-8", "docs.css": "text/css; charset=utf-8"}
_PAGE_HEADERS = {
    # Swagger UI sets style attributes from script (allowed) and inline <style> in SVGs
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
        "script-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
        "frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-cache",
}


def swagger_ui_static() -> Path:
    """The folder of Swagger UI's files inside the installed ``swagger-ui-py`` package
    (found without importing the package, which would load its web-framework glue)."""
    spec = importlib.util.find_spec("swagger_ui")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the swagger-ui-py package is missing: run ./scripts/setup")
    return Path(next(iter(spec.submodule_search_locations))) / "static"


def _asset(body: bytes, media_type: str) -> Asset:
    return Asset(body, media_type, hashlib.blake2b(body, digest_size=6).hexdigest())


@functools.cache
def load_docs_assets() -> dict[str, Asset]:
    """Swagger UI's bundle, stylesheet and icon, and the page's own ``docs.js``/``docs.css``."""
    static = swagger_ui_static()
    assets = {name: _asset((static / name).read_bytes(), kind) for name, kind in _SWAGGER_FILES.items()}
    own = resources.files("server.web") / "static"
    assets.update({name: _asset((own / name).read_bytes(), kind) for name, kind in _OWN_FILES.items()})
    return assets


@get(
    "/api/docs",
    include_in_schema=False,
    opt={"public": True},
    sync_to_thread=False,
)
def docs_page(ctx: Ctx) -> Response[str]:
    """The interactive API docs: a data-free shell; ``docs.js`` loads the OpenAPI document."""
    assets = load_docs_assets()
    html = render(
        "docs.html.j2",
        key_required=ctx.config.server.api_key is not None,
        versions={name: asset.version for name, asset in assets.items()},
    )
    return Response(html, media_type=MediaType.HTML, headers=_PAGE_HEADERS)


@get("/api/docs/static/{name:str}", include_in_schema=False, opt={"public": True}, sync_to_thread=False)
def docs_static(name: FromPath[str]) -> Response[bytes]:
    """One of the docs page's files; URLs carry a content hash, so they are cached for good."""
    return asset_response(load_docs_assets(), name)


docs_routes = [docs_page, docs_static]
