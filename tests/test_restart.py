"""Restart test: SIGKILL a real ``lode serve`` (real model) in the middle of a task, start it
again: the task resumes and finishes, and the index is consistent."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import httpx
import pytest
from live import free_port, spawn_server, wait_healthy, wait_task
from test_kill import _assert_consistent, _make_repo, _store

pytestmark = pytest.mark.slow


def test_killed_server_resumes_its_task(tmp_path: Path) -> None:
    files = 300
    repo = tmp_path / "repo"
    _make_repo(repo, files)
    db = tmp_path / "db"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "server.log"
    # pause after each write: the kill lands mid-task (this checkout first: the editable
    # install may point at another)
    slow = os.pathsep.join(
        (str(Path(__file__).resolve().parent.parent), str(Path(__file__).parent / "slowdown"))
    )
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = slow
    try:
        first = spawn_server(db, port, "--no-watch", log=log)
        wait_healthy(base, timeout=240, processes=2)
        searchers = _search_processes(first.pid)
        assert len(searchers) == 2
        created = httpx.post(f"{base}/api/v1/projects", json={"path": str(repo), "name": "gen"}).json()
        task_id = created["task_id"]
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            task = httpx.get(f"{base}/api/v1/tasks/{task_id}").json()
            if task["chunks_done"] > 0:
                break
            time.sleep(0.05)
        first.send_signal(signal.SIGKILL)
        first.wait()
        assert task["status"] == "running", task
        deadline = time.monotonic() + 30  # its search processes end with it (their stdin closed)
        while any(_running(pid) for pid in searchers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_running(pid) for pid in searchers)

        second = spawn_server(db, port, "--no-watch", log=log)
        try:
            wait_healthy(base, timeout=240, processes=2)  # the search below is a search process's
            done = wait_task(base, task_id, timeout=240)
            assert done["status"] == "done", (done, log.read_text()[-3000:])
            assert done["message"] == "resumed"
            hits = httpx.post(
                f"{base}/api/v1/search",
                json={
                    "query": "handle event 123.0 and return a derived number",
                    "granularity": "chunk",
                    "limit": 5,
                },
            ).json()
            paths = [h["file_path"] for g in hits["groups"] for h in g["chunks"]]
            assert "pkg3/mod_123.py" in paths
        finally:
            second.send_signal(signal.SIGTERM)
            second.wait(timeout=30)
    finally:
        if before is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = before
    store = _store(db)
    assert store is not None
    _assert_consistent(store, files)
    assert store.chunks.count(embedded=False) == 0


def _search_processes(parent: int) -> list[int]:
    """Child processes of ``parent`` that are lode search processes."""
    children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
    return [int(c) for c in children if b"_search_worker" in Path(f"/proc/{c}/cmdline").read_bytes()]


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie nobody reaped yet has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
