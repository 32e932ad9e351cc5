"""A real lode server for tests: uvicorn on 127.0.0.1 in a thread, or a subprocess."""

from __future__ import annotations

import dataclasses
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from indexer.config import LodeConfig
from indexer.embed import Embedder
from server import create_app
from server.limits import UVICORN_LIMITS


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve_in_thread(config: LodeConfig, embedder: Embedder | None = None, **app_kwargs: Any) -> Iterator[str]:
    """Run the app with uvicorn in a thread; yields the base URL."""
    port = free_port()
    config = dataclasses.replace(config, server=dataclasses.replace(config.server, port=port))
    app = create_app(config, embedder=embedder, **app_kwargs)
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on", **UVICORN_LIMITS)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    wait_healthy(base, require_model=False)
    try:
        yield base
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def wait_healthy(
    base: str, timeout: float = 120, require_model: bool = True, processes: int = 0
) -> dict[str, Any]:
    """Poll /health until the server answers (and, if asked, its model is loaded and
    ``processes`` search processes answer searches)."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = httpx.get(base + "/health", timeout=2).json()
            ready = last.get("model_loaded") and last.get("search_processes", 0) >= processes
            if not require_model or ready:
                return dict(last)
        except httpx.HTTPError as exc:
            last = exc
        time.sleep(0.1)
    raise TimeoutError(f"server at {base} not healthy: {last}")


def wait_task(
    base: str, task_id: str, timeout: float = 120, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    """Poll a task until it ends."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        task = httpx.get(f"{base}/api/v1/tasks/{task_id}", timeout=10, headers=headers).json()
        if task["status"] not in ("queued", "running"):
            return dict(task)
        time.sleep(0.1)
    raise TimeoutError(f"task {task_id} still {task['status']}")


def spawn_server(db: Path, port: int, *args: str, log: Path | None = None) -> subprocess.Popen[bytes]:
    """``lode serve`` as a real subprocess (real model)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "LODE_DB": str(db), "LODE_PORT": str(port)}
    out = log.open("ab") if log else subprocess.DEVNULL
    proc = subprocess.Popen([sys.executable, "-m", "server", "serve", *args], env=env, stdout=out, stderr=out)
    if log:
        out.close()  # type: ignore[union-attr]
    return proc
