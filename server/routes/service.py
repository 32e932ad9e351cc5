"""``GET /health`` and ``GET /api/v1/status``."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from litestar import Response, get
from litestar.di import Provide
from litestar.openapi import ResponseSpec

from indexer import __version__
from server import examples
from server.convert import to_project
from server.routes._common import Ctx, blocking, example, get_ctx, ok
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
    description=(
        "200 while the server works (`status` ok, or starting while the model loads); 503 when "
        "it is degraded: the index writer stopped, the model failed to load or the index "
        "folder is gone. Never needs the API key."
    ),
    responses={
        **ok(HealthOut, "Ready", examples.HEALTH),
        503: ResponseSpec(
            data_container=HealthOut,
            description="Degraded: the same fields, saying what is wrong",
            examples=example(
                "Writer stopped", {**examples.HEALTH, "status": "degraded", "worker_alive": False}
            ),
            generate_examples=False,
        ),
    },
)
def health(ctx: Ctx) -> Response[HealthOut]:
    """Is the server up, the store open, the model loaded and the writer alive?"""
    loaded = ctx.model_loaded
    alive = ctx.worker.alive
    store_open = Path(ctx.config.db).is_dir()
    faulty = not alive or not store_open or ctx.model_error
    status = "degraded" if faulty else ("ok" if loaded else "starting")
    pool = ctx.search_pool
    body = HealthOut(
        status=status,
        store_open=store_open,
        model_loaded=loaded,
        worker_alive=alive,
        version=__version__,
        search_processes=pool.ready if pool is not None else 0,
    )
    return Response(body, status_code=503 if status == "degraded" else 200)


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
