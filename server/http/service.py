"""``GET /health``, ``GET /api/v1/check``, ``GET /api/v1/status`` and ``GET /metrics``
(Prometheus text; ``server.metrics`` keeps the registry)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from litestar import Controller, Response, get
from litestar.openapi import ResponseSpec

from indexer import __version__
from server.convert import to_project, to_wire
from server.http._common import Ctx, blocking, example, ok
from server.http.examples import core as examples
from server.http.schemas._choices import HealthStatus
from server.http.schemas.service import HealthOut, StatusOut, StoreCheckOut
from server.metrics import CONTENT_TYPE, render_metrics

__all__ = ["ServiceController"]


class ServiceController(Controller):
    """The service itself: is it up, is the index sound, what does it hold."""

    path = "/"
    tags = ("service",)

    @get(
        "/health",
        sync_to_thread=False,
        summary="Liveness and readiness",
        operation_id="health",
        description=(
            "200 while the server works (`status` ok, or starting while the model loads); 503 when "
            "it is degraded, `reason` saying why: the index writer stopped, the model failed to load, "
            "the index folder is gone, or a read or write of the index failed in the storage layer "
            "(a damaged data file or index, a read-only folder, a full disk; it clears once a task "
            "completes or a check of the store passes). `role` says whether the server writes the "
            "index or only reads it (`lode serve --read-only`, which has no writer to be alive), "
            "`index_version` which version of the chunk table it answers from. Never needs the API key."
        ),
        responses={
            **ok(HealthOut, "Ready", examples.HEALTH, public=True),
            503: ResponseSpec(
                data_container=HealthOut,
                description="Degraded: the same fields, saying what is wrong",
                examples=example(
                    "Writer stopped",
                    {
                        **examples.HEALTH,
                        "status": "degraded",
                        "worker_alive": False,
                        "reason": "the index writer stopped",
                    },
                ),
                generate_examples=False,
            ),
        },
    )
    def health(self, ctx: Ctx) -> Response[HealthOut]:
        """Is the server up, the store sound, the model loaded and the writer alive?"""
        loaded = ctx.model_loaded
        alive = ctx.worker.alive
        local = isinstance(ctx.config.db, Path)
        store_open = Path(ctx.config.db).is_dir() if local else True
        failure = ctx.storage.failure
        reasons = [
            "the index writer stopped" if not alive and not ctx.read_only else None,
            f"the index folder {ctx.config.db} is gone" if not store_open else None,
            f"the embedding model failed to load: {ctx.model_error}" if ctx.model_error else None,
            f"storage failure while {failure.where}: {failure.message}" if failure is not None else None,
        ]
        faults = [r for r in reasons if r]
        status: HealthStatus = "degraded" if faults else ("ok" if loaded else "starting")
        pool = ctx.search_pool
        body = HealthOut(
            status=status,
            store_open=store_open,
            model_loaded=loaded,
            worker_alive=alive,
            version=__version__,
            search_processes=pool.ready if pool is not None else 0,
            role="reader" if ctx.read_only else "writer",
            index_version=ctx.versions.version if ctx.versions is not None else None,
            reason="; ".join(faults)
            if faults
            else ("the embedding model is loading" if not loaded else None),
        )
        return Response(body, status_code=503 if status == "degraded" else 200)

    @get(
        "/api/v1/check",
        summary="Verify the index on disk",
        operation_id="check",
        description=(
            "Reads every row of every table, asks every index one question and checks that rows "
            "agree (no duplicate, orphan, missing, stale or unembedded row; content matches its "
            "hash; vectors finite and unit-length). Seconds per 100k chunks. A check that passes "
            "clears a standing storage failure of /health. The same as `lode check`."
        ),
        responses=ok(StoreCheckOut, "A sound store", examples.CHECK, errors=(503,)),
    )
    @blocking
    def check(self, ctx: Ctx) -> StoreCheckOut:
        """Verify tables, data files, indexes and row agreement."""
        result = ctx.lode.store.check()
        if result.ok:
            ctx.storage.checked()
        return to_wire(result, StoreCheckOut)

    @get(
        "/api/v1/status",
        summary="Index, queue and projects",
        operation_id="status",
        responses=ok(StatusOut, "A busy index", examples.STATUS, errors=(503,)),
    )
    @blocking
    def status(self, ctx: Ctx) -> StatusOut:
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
            projects=[to_project(ctx, p) for p in store.projects.all()],
            worker_error=ctx.worker.last_error,
        )

    @get("/metrics", include_in_schema=False, media_type=CONTENT_TYPE)
    @blocking
    def metrics(self, ctx: Ctx) -> Response[str]:
        """Prometheus metrics: request counts and latencies, discovery stage durations, index sizes."""
        return Response(render_metrics(ctx), media_type=CONTENT_TYPE)
