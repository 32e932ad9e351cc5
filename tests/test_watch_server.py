"""The watcher inside the real server: a real watchdog observer on a real temp folder,
changes searchable over HTTP without anyone asking for a re-index."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import make_repo
from live import serve_in_thread, wait_task

from indexer.config import load_config
from indexer.embed import FakeEmbedder

API = "/api/v1"


def _eventually(check: Callable[[], Any], timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"condition not met within {timeout}s")
        time.sleep(0.05)


@pytest.fixture
def watched(tmp_path: Path) -> Iterator[tuple[str, Path, FakeEmbedder]]:
    repo = make_repo(tmp_path / "repo")
    embedder = FakeEmbedder()
    overrides = {"db": tmp_path / "db", "quiet_ms": 150, "max_delay_ms": 1000}
    with serve_in_thread(load_config(env={}, overrides=overrides), embedder) as base:
        created = httpx.post(f"{base}{API}/projects", json={"path": str(repo), "name": "shop"}).json()
        wait_task(base, created["task_id"])
        _eventually(lambda: _project(base)["watch"]["state"] == "watching")
        _idle(base)
        yield base, repo, embedder


def _project(base: str) -> dict[str, Any]:
    return dict(httpx.get(f"{base}{API}/projects/shop").json())


def _idle(base: str, timeout: float = 20.0) -> None:
    _eventually(
        lambda: (
            not [t for t in httpx.get(f"{base}{API}/tasks").json() if t["status"] in ("queued", "running")]
        ),
        timeout=timeout,
    )


def _paths(base: str) -> set[str]:
    paths: set[str] = set()
    offset = 0
    while True:
        page = httpx.get(f"{base}{API}/projects/shop/files", params={"limit": 1000, "offset": offset}).json()
        paths.update(f["path"] for f in page["files"])
        offset += len(page["files"])
        if offset >= page["total"] or not page["files"]:
            return paths


def _found(base: str, query: str) -> list[str]:
    resp = httpx.post(
        f"{base}{API}/search", json={"query": query, "mode": "lexical", "granularity": "chunk"}
    ).json()
    return [h["file_path"] for g in resp["groups"] for h in g["chunks"]]


def test_saved_function_becomes_searchable(watched: tuple[str, Path, FakeEmbedder]) -> None:
    base, repo, _ = watched
    target = repo / "src/shop/pricing.py"
    target.write_text(
        target.read_text() + "\n\ndef compute_loyalty_points(total_cents):\n    return total_cents // 100\n"
    )
    _eventually(lambda: "src/shop/pricing.py" in _found(base, "compute_loyalty_points"))
    assert _project(base)["watch"]["last_update_at"] is not None


def test_a_renamed_file_is_embedded_once_as_its_new_path(watched: tuple[str, Path, FakeEmbedder]) -> None:
    """The file moves, and its chunks get the vectors of their new texts (their captions
    carry the path's words), each made once."""
    base, repo, embedder = watched
    before = embedder.texts_embedded
    (repo / "src/web/router.go").rename(repo / "src/web/routes.go")
    _eventually(lambda: "src/web/routes.go" in _paths(base) and "src/web/router.go" not in _paths(base))
    _idle(base)
    files = httpx.get(f"{base}{API}/projects/shop/files", params={"limit": 1000}).json()["files"]
    moved = next(f["chunk_count"] for f in files if f["path"] == "src/web/routes.go")
    assert embedder.texts_embedded == before + moved


def test_deleted_folder_leaves_the_index(watched: tuple[str, Path, FakeEmbedder]) -> None:
    base, repo, _ = watched
    shutil.rmtree(repo / "src/web")
    _eventually(lambda: not [p for p in _paths(base) if p.startswith("src/web/")])
    assert "src/shop/cart.py" in _paths(base)


def test_gitignore_pattern_removes_matching_files(watched: tuple[str, Path, FakeEmbedder]) -> None:
    base, repo, _ = watched
    (repo / ".gitignore").write_text((repo / ".gitignore").read_text() + "docs/\n")
    _eventually(lambda: "docs/guide.md" not in _paths(base))


@pytest.mark.slow
def test_burst_of_2000_files_is_a_few_tasks(watched: tuple[str, Path, FakeEmbedder]) -> None:
    base, repo, _ = watched
    before = {t["id"] for t in httpx.get(f"{base}{API}/tasks", params={"limit": 1000}).json()}
    burst = repo / "generated"
    burst.mkdir()
    for i in range(2000):
        (burst / f"mod_{i}.py").write_text(f"def generated_function_{i}():\n    return {i}\n")
    _eventually(lambda: len([p for p in _paths(base) if p.startswith("generated/")]) == 2000, timeout=120)
    _idle(base, timeout=90)  # 2,000 files fold and embed: 20 s ran out in loaded full runs
    tasks = [
        t for t in httpx.get(f"{base}{API}/tasks", params={"limit": 1000}).json() if t["id"] not in before
    ]
    assert 1 <= len(tasks) <= 5, [t["paths"] for t in tasks]
    assert "generated/mod_1999.py" in _found(base, "generated_function_1999")
