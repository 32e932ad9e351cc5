"""A Python client generated from the served OpenAPI document registers a project,
waits for its task and searches — the way users call lode."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from conftest import make_repo
from live import serve_in_thread

from indexer.config import load_config
from indexer.embed import FakeEmbedder

pytestmark = pytest.mark.slow


def test_generated_client_round_trip(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False})
    with serve_in_thread(config, FakeEmbedder()) as base:
        spec = tmp_path / "openapi.json"
        spec.write_text(httpx.get(f"{base}/api/openapi.json").text)
        out = tmp_path / "client"
        generator = Path(sys.executable).with_name("openapi-python-client")
        result = subprocess.run(
            [str(generator), "generate", "--path", str(spec), "--output-path", str(out), "--meta", "none",
             "--fail-on-warning"],
            check=False,
            capture_output=True,
            text=True,
            env={**os.environ, "PATH": f"{generator.parent}{os.pathsep}{os.environ.get('PATH', '')}"},
        )  # fmt: skip
        assert result.returncode == 0, result.stdout + result.stderr
        sys.path.insert(0, str(tmp_path))
        try:
            _use_client(base, repo)
        finally:
            sys.path.remove(str(tmp_path))
            for name in [m for m in sys.modules if m == "client" or m.startswith("client.")]:
                del sys.modules[name]


def _use_client(base: str, repo: Path) -> None:
    client_mod = importlib.import_module("client")
    projects_api = importlib.import_module("client.api.projects.create_project")
    tasks_api = importlib.import_module("client.api.tasks.get_task")
    search_api = importlib.import_module("client.api.search.search")
    models = importlib.import_module("client.models")

    with client_mod.Client(base_url=base) as api:
        created = projects_api.sync(client=api, body=models.ProjectCreate(path=str(repo), name="shop"))
        assert isinstance(created, models.ProjectCreated), created
        deadline = time.monotonic() + 60
        task = tasks_api.sync(task_id=created.task_id, client=api)
        while task.status in ("queued", "running") and time.monotonic() < deadline:
            time.sleep(0.1)
            task = tasks_api.sync(task_id=created.task_id, client=api)
        assert task.status == "done"
        body = models.SearchRequest(
            query="apply discount percentage",
            granularity=models.SearchRequestGranularity.CHUNK,
            limit=3,
            languages=["python"],
        )
        result = search_api.sync(client=api, body=body)
        assert isinstance(result, models.ChunkSearchOut), result  # the shape of chunk granularity
        top = max((c for g in result.groups for c in g.chunks), key=lambda c: c.relevance_score)
        assert (top.file_path, top.node_name) == ("src/shop/pricing.py", "apply_discount")
        bad = search_api.sync_detailed(client=api, body=models.SearchRequest(query="x", limit=0))
        assert bad.status_code == 400
