"""``GET /metrics``: Prometheus text exposition (format 0.0.4) from a small in-process registry.

Series: ``lode_http_requests_total{method,path,status}`` and
``lode_http_request_duration_seconds{method,path}`` (recorded by ``metrics_middleware`` per
route path template), ``lode_discover_stage_duration_seconds{stage}`` (each discovery's
stages), and index sizes per project read at scrape time: ``lode_index_documents``,
``lode_index_chunks``, ``lode_index_chunks_embedded``.
"""

from __future__ import annotations

import bisect
import math
import threading
import time
import weakref
from collections.abc import Iterable, Mapping
from typing import Any

from server.context import ServerContext

__all__ = [
    "CONTENT_TYPE",
    "Counter",
    "Histogram",
    "MetricsRegistry",
    "metrics_for",
    "metrics_middleware",
    "render_metrics",
]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
STAGE_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)

Labels = tuple[str, ...]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _series(name: str, names: Labels, values: Labels, extra: str = "") -> str:
    pairs = [f'{k}="{_escape(v)}"' for k, v in zip(names, values, strict=True)]
    if extra:
        pairs.append(extra)
    return f"{name}{{{','.join(pairs)}}}" if pairs else name


def _header(name: str, help_text: str, kind: str) -> list[str]:
    escaped = help_text.replace("\\", "\\\\").replace("\n", "\\n")
    return [f"# HELP {name} {escaped}", f"# TYPE {name} {kind}"]


class Counter:
    """A monotonically increasing count per label set."""

    def __init__(self, name: str, help_text: str, labels: Labels) -> None:
        self.name, self.help, self.labels = name, help_text, labels
        self._values: dict[Labels, float] = {}

    def inc(self, values: Labels, amount: float = 1.0) -> None:
        """Add ``amount`` to one series (callers hold the registry lock)."""
        self._values[values] = self._values.get(values, 0.0) + amount

    def lines(self) -> list[str]:
        """The exposition lines of this counter."""
        out = _header(self.name, self.help, "counter")
        out += [f"{_series(self.name, self.labels, v)} {_number(n)}" for v, n in sorted(self._values.items())]
        return out


class Histogram:
    """Observations counted into cumulative buckets, with their sum and count, per label set."""

    def __init__(self, name: str, help_text: str, labels: Labels, buckets: Iterable[float]) -> None:
        self.name, self.help, self.labels = name, help_text, labels
        self.buckets = tuple(sorted(buckets))
        self._series: dict[Labels, tuple[list[int], list[float]]] = {}

    def observe(self, values: Labels, value: float) -> None:
        """Record one observation (callers hold the registry lock)."""
        counts, total = self._series.setdefault(values, ([0] * (len(self.buckets) + 1), [0.0]))
        counts[bisect.bisect_left(self.buckets, value)] += 1
        total[0] += value

    def lines(self) -> list[str]:
        """Exposition lines: ``_bucket{le=…}`` (cumulative, ending with ``+Inf``), ``_sum``, ``_count``."""
        out = _header(self.name, self.help, "histogram")
        for values, (counts, total) in sorted(self._series.items()):
            running = 0
            for bound, count in zip((*self.buckets, math.inf), counts, strict=True):
                running += count
                le = f'le="{_number(bound)}"'
                out.append(f"{_series(self.name + '_bucket', self.labels, values, le)} {running}")
            out.append(f"{_series(self.name + '_sum', self.labels, values)} {_number(total[0])}")
            out.append(f"{_series(self.name + '_count', self.labels, values)} {running}")
        return out


class MetricsRegistry:
    """The metrics of one running server."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests = Counter(
            "lode_http_requests_total", "HTTP requests by route and status.", ("method", "path", "status")
        )
        self.latency = Histogram(
            "lode_http_request_duration_seconds",
            "HTTP request latency by route.",
            ("method", "path"),
            REQUEST_BUCKETS,
        )
        self.stages = Histogram(
            "lode_discover_stage_duration_seconds",
            "Duration of each discovery stage.",
            ("stage",),
            STAGE_BUCKETS,
        )

    def record_request(self, method: str, path: str, status: int, seconds: float) -> None:
        """Count one finished request and its latency."""
        with self._lock:
            self.requests.inc((method, path, str(status)))
            self.latency.observe((method, path), seconds)

    def record_stages(self, stage_ms: Mapping[str, float]) -> None:
        """Record one discovery's stage durations (milliseconds)."""
        with self._lock:
            for stage, ms in stage_ms.items():
                self.stages.observe((stage,), ms / 1000)

    def render(self, extra: Iterable[str] = ()) -> str:
        """The whole exposition text (``extra``: lines computed at scrape time)."""
        with self._lock:
            lines = self.requests.lines() + self.latency.lines() + self.stages.lines()
        return "\n".join([*lines, *extra]) + "\n"


_REGISTRIES: weakref.WeakKeyDictionary[Any, MetricsRegistry] = weakref.WeakKeyDictionary()
_REGISTRIES_LOCK = threading.Lock()


def metrics_for(ctx: ServerContext) -> MetricsRegistry:
    """The registry of a running server (one per service context, made on first use)."""
    with _REGISTRIES_LOCK:
        registry = _REGISTRIES.get(ctx.lode)
        if registry is None:
            registry = _REGISTRIES[ctx.lode] = MetricsRegistry()
        return registry


def metrics_middleware(app: Any) -> Any:
    """ASGI middleware counting each HTTP request and its latency per route path template."""

    async def middleware(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        started = time.perf_counter()
        status = [500]

        async def send_status(message: Any) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
            await send(message)

        try:
            await app(scope, receive, send_status)
        finally:
            ctx = getattr(scope["app"].state, "ctx", None)
            if ctx is not None:
                path = scope.get("path_template") or scope["path"]
                metrics_for(ctx).record_request(
                    scope["method"], path, status[0], time.perf_counter() - started
                )

    return middleware


def _index_lines(ctx: ServerContext) -> list[str]:
    store = ctx.lode.store
    projects = store.projects.all()
    gauges = (
        ("lode_index_documents", "Indexed files per project.", store.documents.count),
        ("lode_index_chunks", "Indexed chunks per project.", store.chunks.count),
        (
            "lode_index_chunks_embedded",
            "Chunks with a vector per project.",
            lambda pid: store.chunks.count(pid, embedded=True),
        ),
    )
    out: list[str] = []
    for name, help_text, count in gauges:
        out += _header(name, help_text, "gauge")
        out += [f"{_series(name, ('project',), (p.name,))} {count(p.id)}" for p in projects]
    return out


def render_metrics(ctx: ServerContext) -> str:
    """Prometheus metrics: request counts and latencies, discovery stage durations, index sizes."""
    return metrics_for(ctx).render(_index_lines(ctx))
