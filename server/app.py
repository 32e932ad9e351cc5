"""``create_app(config)``: the Litestar application (its lifespan opens store, model, writer)."""

from __future__ import annotations

import hmac
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from litestar import Litestar, Router, asgi
from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException
from litestar.handlers.base import BaseRouteHandler
from litestar.logging.config import LoggingConfig
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin
from litestar.openapi.spec import License
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp

from indexer import __version__
from indexer.config import LodeConfig
from indexer.embed import Embedder
from server.conformance import strict_body
from server.context import ServerContext, open_context
from server.errors import EXCEPTION_HANDLERS
from server.http._common import DEPENDENCIES
from server.http.content import ContentController
from server.http.discover import DiscoverController
from server.http.documents import DocumentController
from server.http.editor import EditorController
from server.http.events import EventController
from server.http.outline import OutlineController
from server.http.projects import ProjectController
from server.http.search import SearchController
from server.http.service import ServiceController
from server.http.symbols import SymbolController
from server.http.tasks import TaskController
from server.limits import json_body_middleware, limit_body, limit_url
from server.mcp import build_mcp
from server.metrics import metrics_middleware
from server.openapi import openapi_document, security_components
from server.search_pool import SearchPool
from server.security import browser_guard_middleware
from server.web import web_routes

__all__ = ["create_app", "server_url"]

log = logging.getLogger(__name__)
#: The HTTP API, one controller per resource (in this order: a component two responses
#: share takes the description of the first registered).
ROUTES: list[Any] = [
    ServiceController,
    ProjectController,
    TaskController,
    SearchController,
    DocumentController,
    OutlineController,
    SymbolController,
    ContentController,
    DiscoverController,
    EventController,
    EditorController,
]
#: At shutdown, how long search processes may take to end on their own.
_POOL_CLOSE_SECONDS = 1.0

_DESCRIPTION = """lode: local-first code search for people and LLM agents.

Register a folder (`POST /api/v1/projects`), follow its task (`GET /api/v1/tasks/{id}`),
then search (`POST /api/v1/search`). Every error has the shape
`{"status_code", "detail", "extra"}`; `extra` names the offending fields."""


def _url_host(host: str) -> str:
    """A bind address as a URL host (``[::1]``; the wildcard as loopback)."""
    if host in ("0.0.0.0", "::", ""):
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


def server_url(config: LodeConfig) -> str:
    """Where the server of ``config`` answers (what its writer's claim records)."""
    return f"http://{_url_host(config.server.host)}:{config.server.port}"


def _auth_guard(api_key: str | None) -> Any:
    def guard(connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler) -> None:
        # Public: /health and handlers with opt={"public": True} (the data-free shells of the
        # web page and the docs page, and the OpenAPI document).
        if api_key is None or connection.url.path == "/health" or handler.opt.get("public"):
            return
        header = connection.headers.get("authorization", "")
        scheme, _sep, token = header.partition(" ")
        # bytes: compare_digest refuses text that is not ASCII (headers arrive as latin-1)
        sent = token.strip().encode("latin-1", "replace")
        if scheme.lower() != "bearer" or not hmac.compare_digest(sent, api_key.encode("utf-8")):
            # RFC 6750: the scheme to use, and why a key that was sent failed
            wrong = scheme.lower() == "bearer" and token.strip()
            challenge = 'Bearer realm="lode"' + (', error="invalid_token"' if wrong else "")
            raise NotAuthorizedException(
                "missing or wrong API key (send Authorization: Bearer <key>)",
                headers={"WWW-Authenticate": challenge},
            )

    return guard


def create_app(
    config: LodeConfig,
    *,
    embedder: Embedder | None = None,
    context: ServerContext | None = None,
    on_ready: Any = None,
    extra_routes: list[Any] | None = None,
    search_processes: int | None = None,
    close_context: bool = False,
) -> Litestar:
    """The lode HTTP app; the store, the model and the writer open in its lifespan, unless
    a ``context`` opened already is handed in (``lode serve`` opens it before it listens),
    which the caller closes, or the app's shutdown with ``close_context``.
    ``search_processes``: how many to start (default: the config's, none with a model or
    a context handed in, whose model they would not load)."""

    state: dict[str, ServerContext] = {}
    mcp = build_mcp(lambda: state["ctx"])
    mcp.streamable_http_app(host=config.server.host)  # creates the session manager

    processes = search_processes
    if processes is None:
        processes = config.server.search_processes if embedder is None and context is None else 0

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        ctx = context or open_context(config, embedder=embedder, url=server_url(config))
        app.state.ctx = state["ctx"] = ctx
        # the document every /api/openapi.json and docs page serves, finished once
        openapi_document(app)
        try:  # a failed start closes what it opened too
            if on_ready is not None:
                on_ready(ctx)
            if processes:
                ctx.search_pool = SearchPool(config, processes, ctx.query_graph, ctx.lode.activity)
                ctx.search_pool.start()
            async with mcp.session_manager.run():
                yield
        finally:
            if ctx.search_pool is not None:
                # they only read: a moment to end their searches, then they are ended
                await ctx.search_pool.close(timeout=min(ctx.stop_wait, _POOL_CLOSE_SECONDS))
                ctx.search_pool = None
            if context is None or close_context:
                ctx.close()

    # Litestar's body limit stops at a mount: the MCP endpoint gets the same one here
    mcp_app = limit_body(StreamableHTTPASGIApp(mcp.session_manager), config.server.max_body_bytes)

    @asgi("/mcp", is_mount=True, copy_scope=True)
    async def mcp_endpoint(scope: Any, receive: Any, send: Any) -> None:
        """MCP over streamable HTTP (the same tools as ``lode mcp``)."""
        await mcp_app(scope, receive, send)

    app = Litestar(
        route_handlers=[*ROUTES, *web_routes, mcp_endpoint, *(extra_routes or [])],
        dependencies=DEPENDENCIES,
        lifespan=[lifespan],
        exception_handlers=EXCEPTION_HANDLERS,
        before_request=strict_body,
        middleware=[
            metrics_middleware,
            browser_guard_middleware(config),
            json_body_middleware(config.server.max_body_bytes),
        ],
        # no guard without a key: Litestar copies the route handler for every guard call
        guards=[_auth_guard(config.server.api_key)] if config.server.api_key is not None else [],
        # CORS is the browser guard's (server/security.py): refusals carry its headers too
        # the root logger stays the command's (``lode serve``: a line at once on stderr);
        # Litestar's would queue records for a thread, and lose them at an ``os._exit``
        # (a writer that lost its lease)
        logging_config=LoggingConfig(configure_root_logger=False),
        request_max_body_size=config.server.max_body_bytes,
        openapi_config=OpenAPIConfig(
            title="lode",
            version=__version__,
            description=_DESCRIPTION,
            license=License(name="MIT", identifier="MIT"),
            path="/api",
            # /api/docs is lode's own page (server/web/_docs.py): Swagger UI served from this origin
            render_plugins=[JsonRenderPlugin(path="/openapi.json")],
            # the document holds no data: readable without the API key
            openapi_router=Router("/api", route_handlers=[], include_in_schema=False, opt={"public": True}),
            components=security_components(),
            use_handler_docstrings=True,
        ),
        debug=False,
    )
    # in front of everything (routes, mounts, the router's own 404): a URL over the limit is a 414
    app.asgi_handler = limit_url(app.asgi_handler)
    return app
