"""The web page's routes: data-free page shells and static files (public, so the page can
ask for the API key), and HTML fragments behind the same key as the JSON API."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import MediaType, Response, get, post
from litestar.params import Body, FromPath
from msgspec import Meta

from indexer.api import known_languages
from indexer.limits import MAX_QUERY_CHARS
from indexer.models import NODE_TYPES
from indexer.roles import ROLES
from indexer.search import SearchOptions
from server.convert import from_wire
from server.http._common import Ctx, blocking
from server.http.schemas.search import SearchRequest
from server.web._assets import asset_response, load_assets
from server.web._views import render, render_chunk, render_projects, render_results

__all__ = ["page_routes"]

_PUBLIC = {"public": True}
_PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-cache",
}
_FRAGMENT_HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
_FILTER_FIELDS = ("projects", "languages", "node_types", "exclude_roles", "path_include", "path_exclude")


def _page(ctx: Ctx, view: str, title: str, chunk_id: str | None = None) -> Response[str]:
    assets = load_assets()
    html = render(
        "page.html.j2",
        view=view,
        title=title,
        chunk_id=chunk_id,
        key_required=ctx.config.server.api_key is not None,
        css=assets["app.css"].version,
        js=assets["app.js"].version,
        languages=sorted(known_languages()),
        node_types=sorted(NODE_TYPES),
        roles=ROLES,
    )
    return Response(html, media_type=MediaType.HTML, headers=_PAGE_HEADERS)


def _fragment(html: str) -> Response[str]:
    return Response(html, media_type=MediaType.HTML, headers=_FRAGMENT_HEADERS)


_page_options: dict[str, Any] = {
    "include_in_schema": False,
    "opt": _PUBLIC,
    "sync_to_thread": False,
}


@get("/", name="web_search", **_page_options)
def search_page(ctx: Ctx) -> Response[str]:
    """The search page (a shell: results come from ``POST /ui/fragments/results``)."""
    return _page(ctx, "search", "Search")


@get("/ui/projects", name="web_projects", **_page_options)
def projects_page(ctx: Ctx) -> Response[str]:
    """The projects page."""
    return _page(ctx, "projects", "Projects")


@get("/ui/chunks/{chunk_id:str}", name="web_chunk", **_page_options)
def chunk_page(ctx: Ctx, chunk_id: FromPath[str]) -> Response[str]:
    """One chunk in its file."""
    return _page(ctx, "chunk", "Chunk", chunk_id=chunk_id)


@get("/ui/static/{name:str}", include_in_schema=False, opt=_PUBLIC, sync_to_thread=False)
def static_file(name: FromPath[str]) -> Response[bytes]:
    """``app.css`` or ``app.js``; URLs carry a content hash, so they are cached for good."""
    return asset_response(load_assets(), name)


class PageSearch(SearchRequest, forbid_unknown_fields=True):
    """The search body of ``POST /api/v1/search``, where the page's empty box is a query too."""

    query: Annotated[str, Meta(max_length=MAX_QUERY_CHARS)] = ""


@post("/ui/fragments/results", include_in_schema=False, status_code=200)
@blocking
def results_fragment(ctx: Ctx, data: Annotated[PageSearch, Body()]) -> Response[str]:
    """Results as HTML (the search body of ``POST /api/v1/search``; an empty query gives a hint)."""
    filters = {f: ", ".join(getattr(data, f)) for f in _FILTER_FIELDS if getattr(data, f)}
    projects = ctx.lode.store.projects.all()
    response = ctx.search(from_wire(data, SearchOptions)) if projects and data.query.strip() else None
    return _fragment(render_results(ctx, projects, response, filters))


@get("/ui/fragments/chunks/{chunk_id:str}", include_in_schema=False)
@blocking
def chunk_fragment(ctx: Ctx, chunk_id: FromPath[str]) -> Response[str]:
    """A chunk's whole file, highlighted, its lines marked, with the editor link."""
    return _fragment(render_chunk(ctx, chunk_id))


@get("/ui/fragments/projects", include_in_schema=False)
@blocking
def projects_fragment(ctx: Ctx) -> Response[str]:
    """Every project with sizes, coverage, watcher state and live task progress."""
    return _fragment(render_projects(ctx))


page_routes = [
    search_page,
    projects_page,
    chunk_page,
    static_file,
    results_fragment,
    chunk_fragment,
    projects_fragment,
]
