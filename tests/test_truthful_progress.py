"""Progress that does not mislead (issue 41): a project's ``current_task`` is the task the
writer works on, a task that changed nothing says so, and "done" means embedded, with
"searchable" and "embedded" told apart on every task."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from live import serve_in_thread

from indexer.config import load_config
from indexer.embed import FakeEmbedder

API = "/api/v1"


def make_files(root: Path, count: int) -> Path:
    """``count`` small Python files (six functions each: a phase 2 of some seconds)."""
    root.mkdir(parents=True)
    for i in range(count):
        body = "\n\n".join(f"def step_{i}_{j}(value):\n    return value * {j} + {i}\n" for j in range(6))
        (root / f"mod{i:03d}.py").write_text(body + "\n")
    return root


def until(check: Callable[[], Any], timeout: float = 30.0) -> Any:
    """Poll ``check`` until it answers something truthy."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("timed out")


def test_current_task_is_the_one_embedding_not_a_newer_one_waiting(tmp_path: Path) -> None:
    root = make_files(tmp_path / "proj", 30)
    embedder = FakeEmbedder(delay=0.02)
    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False})
    with serve_in_thread(config, embedder) as base, httpx.Client(base_url=base + API, timeout=30) as http:
        created = http.post("/projects", json={"path": str(root), "name": "proj"}).json()
        first = created["task_id"]
        until(lambda: http.get(f"/tasks/{first}").json()["chunks_embedded"] > 0)
        (root / "fresh.py").write_text("def freshly_saved(value):\n    return value\n")
        edit = http.post("/projects/proj/index", json={"paths": ["fresh.py"]}).json()
        # the edit's phase 1 is over: it waits in phase embed while the first task's
        # phase 2 embeds the project's backlog (its file's vectors first)
        until(lambda: http.get(f"/tasks/{edit['id']}").json()["phase"] == "embed")
        before = http.get(f"/tasks/{first}").json()["chunks_embedded"]
        until(lambda: http.get(f"/tasks/{first}").json()["chunks_embedded"] > before)
        project = http.get("/projects/proj").json()
        current = project["current_task"]
        assert current["id"] == first, "current_task is the task phase 2 runs under"
        waiting = http.get(f"/tasks/{edit['id']}").json()
        # the waiting task shows the project's embedding, not "embed 20 %, chunks 0/0"
        assert waiting["chunks_total"] > 0
        assert waiting["chunks_embedded"] > 0
        assert waiting["percent"] > 20.0
        assert waiting["searchable"] is True
        assert waiting["embedded"] is False
        embedder.delay = 0.0
        done = until(lambda: (t := http.get(f"/tasks/{edit['id']}").json())["status"] == "done" and t)
        assert done["embedded"] is True
        assert http.get("/projects/proj").json()["semantic_coverage"] == 1.0


def test_registering_again_is_not_done_before_the_vectors_are_in(tmp_path: Path) -> None:
    root = make_files(tmp_path / "proj", 60)
    embedder = FakeEmbedder(delay=0.02)
    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False})
    with serve_in_thread(config, embedder) as base, httpx.Client(base_url=base + API, timeout=30) as http:
        first = http.post("/projects", json={"path": str(root)}).json()["task_id"]
        until(lambda: http.get(f"/tasks/{first}").json()["phase"] == "embed")
        again = http.post("/projects", json={"path": str(root)})
        assert again.status_code == 201, again.text
        second = again.json()["task_id"]
        assert second != first  # the first is running: a new task is queued
        seen: list[dict[str, Any]] = []

        def ended() -> bool:
            task = http.get(f"/tasks/{second}").json()
            coverage = http.get(f"/projects/{task['project_id']}").json()["semantic_coverage"]
            seen.append({**task, "coverage": coverage})
            return task["status"] != "running" and task["status"] != "queued"

        until(lambda: ended() or len(seen) >= 20, timeout=60)
        # "done" (100 %) only once every chunk has its vector; before that: embedding
        for state in [s for s in seen if s["status"] == "done"]:
            assert state["coverage"] == 1.0, state
            assert state["embedded"] is True
        for state in [s for s in seen if s["status"] != "done"]:
            assert state["embedded"] is False
            assert state["percent"] < 100.0
        searchable = [s for s in seen if s["searchable"]]
        assert searchable, seen[-1]
        # phase 1 found every file as indexed: the task says so
        assert all(s["message"] == "no change" for s in searchable)
        assert seen[-1]["status"] == "running", "still embedding after 20 looks"
        embedder.delay = 0.0
        done = until(lambda: (t := http.get(f"/tasks/{second}").json())["status"] == "done" and t)
        assert done["embedded"] is True
        assert done["message"] == "no change"
        assert http.get(f"/projects/{done['project_id']}").json()["semantic_coverage"] == 1.0


def test_lode_status_shows_searchable_and_embedded_apart(tmp_path: Path) -> None:
    """``lode status`` (through a server) says of each project whether it is searchable
    (phase 1 over) and how much of it is embedded (phase 2), two states apart."""
    from click.testing import CliRunner

    from indexer.cli import cli

    root = make_files(tmp_path / "proj", 60)
    embedder = FakeEmbedder(delay=0.02)
    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False})
    with serve_in_thread(config, embedder) as base, httpx.Client(base_url=base + API, timeout=30) as http:
        env = {"LODE_DB": str(tmp_path / "db"), "LODE_PORT": base.rsplit(":", 1)[1]}
        first = http.post("/projects", json={"path": str(root), "name": "proj"}).json()["task_id"]
        until(lambda: http.get(f"/tasks/{first}").json()["phase"] == "embed")
        out = CliRunner().invoke(cli, ["status"], env=env)
        assert out.exit_code == 0, out.output
        line = next(li for li in out.output.splitlines() if li.startswith("  proj:"))
        assert "searchable: yes, embedded: " in line
        assert "(embedding)" in line
        assert "embedded: yes" not in line
        embedder.delay = 0.0
        until(lambda: http.get(f"/tasks/{first}").json()["status"] == "done")
        done = CliRunner().invoke(cli, ["status"], env=env).output
        assert "searchable: yes, embedded: yes" in done
