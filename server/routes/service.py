"""``GET /health`` and ``GET /api/v1/status``."""

from __future__ import annotations

from collections import Counter

from litestar import get
from litestar.di import Provide

from indexer import __version__
from server import examples
from server.convert import to_project
from server.routes._common import Ctx, blocking, get_ctx, ok
from server.schemas import HealthOut, StatusOut

__all__ = ["service_routes"]

_deps = {"ctx": Provide(get_ctx, sync_to_thread=False)}


@get(
    "/health",
    dependencies=_deps,
    sync_to_thread=False,
    tags=["service"],
    summary="Liveness and readiness",
    operation_id="health",
    responses=ok(HealthOut, "Ready", examples.HEALTH),
)
def health(ctx: Ctx) -> HealthOut:
    """Is the server up, the store open, the model loaded and the writer alive?"""
    loaded = ctx.model_loaded
    alive = ctx.worker.alive
    status = "ok" if loaded and alive else ("degraded" if not alive or ctx.model_error else "starting")
    pool = ctx.search_pool
    return HealthOut(
        status=status,
        store_open=True,
        model_loaded=loaded,
        worker_alive=alive,
        version=__version__,
        search_processes=pool.ready if pool is not None else 0,
    )


@get(
    "/api/v1/status",
    dependencies=_deps,
    tags=["service"],
    summary="Index, queue and projects",
    operation_id="status",
    responses=ok(StatusOut, "A busy index", examples.STATUS),
)
@blocking
def status(ctx: Ctx) -> StatusOut:
    """Projects with their sizes and watcher state, the task queue, index sizes and the model."""
    store = ctx.lode.store
    stats = store.stats()
    queue = Counter(t.status for t in ctx.worker.list(limit=1000))
    return StatusOut(
        version=__version__,
        db=str(ctx.config.db),
        model_id=store.model_id,
        dimension=store.dimension,
        documents=stats["documents"],
        chunks=stats["chunks"],
        chunks_embedded=stats["chunks_embedded"],
        embedding_cache=stats["embedding_cache"],
        file_errors=stats["file_errors"],
        queue=dict(queue),
        projects=[to_project(ctx, p) for p in store.list_projects()],
        worker_error=ctx.worker.last_error,
    )


service_routes = [health, status]
