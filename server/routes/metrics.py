"""``GET /metrics``: Prometheus text exposition (``server.metrics`` keeps the registry)."""

from __future__ import annotations

from litestar import Response, get
from litestar.di import Provide

from server.metrics import CONTENT_TYPE, render_metrics
from server.routes._common import Ctx, blocking, get_ctx

__all__ = ["metrics_routes"]


@get(
    "/metrics",
    dependencies={"ctx": Provide(get_ctx, sync_to_thread=False)},
    include_in_schema=False,
    media_type=CONTENT_TYPE,
)
@blocking
def metrics(ctx: Ctx) -> Response[str]:
    """Prometheus metrics: request counts and latencies, discovery stage durations, index sizes."""
    return Response(render_metrics(ctx), media_type=CONTENT_TYPE)


metrics_routes = [metrics]
