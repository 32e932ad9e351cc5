"""Health that tells the truth: a damaged or unwritable index is ``degraded`` with its
reason (503), never a bare 500 beside ``ok``; a check that passes clears it (issue 28, 7)."""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

import httpx
import lance
import pytest
from conftest import make_repo
from live import serve_in_thread, wait_task

from indexer.config import load_config
from indexer.embed import FakeEmbedder
from indexer.health import StorageHealth, is_storage_failure
from server.errors import error_body

API = "/api/v1"


class PanicException(BaseException):
    """Stands for pyo3's PanicException (a Rust panic inside a storage library)."""


def _largest_data_file(db: Path, table: str) -> Path:
    uri = db / f"{table}.lance"
    dataset = lance.dataset(str(uri))
    files = [uri / "data" / f.path for frag in dataset.get_fragments() for f in frag.data_files()]
    return max(files, key=lambda p: p.stat().st_size)


def test_a_truncated_data_file_degrades_health_until_a_check_passes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    db = tmp_path / "db"
    config = load_config(env={}, overrides={"db": db, "enabled": False})
    with serve_in_thread(config, FakeEmbedder()) as base:
        created = httpx.post(f"{base}{API}/projects", json={"path": str(repo), "name": "shop"}).json()
        assert wait_task(base, created["task_id"])["status"] == "done"
        assert httpx.get(f"{base}/health").json()["status"] == "ok"
        victim = _largest_data_file(db, "code_chunks")
        saved = victim.read_bytes()
        victim.write_bytes(saved[: len(saved) // 3])
        body = {"query": "cart", "mode": "lexical", "granularity": "chunk"}
        broken = httpx.post(f"{base}{API}/search", json=body)
        assert broken.status_code == 503, broken.text
        error = broken.json()
        assert error["extra"][0]["key"] == "index"
        assert "lode check" in error["detail"]
        health = httpx.get(f"{base}/health")
        assert health.status_code == 503
        assert health.json()["status"] == "degraded"
        assert "storage failure" in health.json()["reason"]
        check = httpx.get(f"{base}{API}/check").json()
        assert not check["ok"]
        assert {p["kind"] for p in check["problems"]} >= {"unreadable"}
        assert httpx.get(f"{base}/health").status_code == 503  # a failing check clears nothing
        victim.write_bytes(saved)  # the file restored (a backup, a re-index elsewhere)
        assert httpx.get(f"{base}{API}/check").json()["ok"]
        healthy = httpx.get(f"{base}/health")
        assert healthy.status_code == 200, healthy.text
        assert healthy.json()["reason"] is None
        assert httpx.post(f"{base}{API}/search", json=body).status_code == 200


def test_storage_failures_are_told_from_bugs() -> None:
    assert is_storage_failure(OSError(errno.EROFS, "Read-only file system"))
    assert is_storage_failure(PanicException("index page out of range"))
    assert is_storage_failure(RuntimeError("LanceError(IO): Not found: data/x.lance"))
    assert not is_storage_failure(KeyError("x"))
    assert not is_storage_failure(KeyboardInterrupt())
    status, body = error_body(OSError(errno.EROFS, "Read-only file system"))
    assert status == 503
    assert body["detail"].startswith("the index folder is read-only")
    assert error_body(ValueError("a bug"))[0] == 500


def test_a_panic_in_a_search_process_is_answered_not_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from indexer.api import Lode
    from server import _search_worker
    from server.http.schemas.search import SearchRequest

    lode = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    lode.index(make_repo(tmp_path / "repo"))

    def panic(_: object) -> None:
        raise PanicException("corrupted posting list")

    monkeypatch.setattr(lode, "search", panic)
    status, body = _search_worker.answer(lode, SearchRequest(query="cart"))
    assert status == 503
    assert b"lode check" in body
    lode.close()


def test_worker_errors_clear_once_a_task_completes(tmp_path: Path) -> None:
    from indexer.api import Lode
    from indexer.tasks import IndexWorker

    lode = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    repo = make_repo(tmp_path / "repo")
    project = lode.register(repo)
    health = StorageHealth()
    worker = IndexWorker(lode.store, lode.embedder, lode.config, storage=health)
    worker.last_error = "OSError(28, 'No space left on device')"
    health.failed("index task", OSError(errno.ENOSPC, "No space left on device"))
    assert health.failure is not None
    assert "disk holding the index is full" in health.failure.message
    worker.start()
    try:
        task = worker.submit(project.id)
        assert worker.wait(task.id, timeout=60).status == "done"
    finally:
        worker.stop()
        lode.close()
    assert worker.last_error is None
    assert health.failure is None
    shutil.rmtree(repo)


def test_a_panic_while_prewarming_is_a_storage_failure_not_a_dead_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from indexer.store._lance._indexes import Indexes
    from server.context import open_context

    def panic(_: Indexes) -> None:
        raise PanicException("corrupted full-text index")

    monkeypatch.setattr(Indexes, "prewarm", panic)
    uncaught: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: uncaught.append(args.exc_value))
    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False})
    ctx = open_context(config, embedder=FakeEmbedder(), warm=True)
    try:
        assert ctx._model_thread is not None
        ctx._model_thread.join(timeout=30)
        assert uncaught == []
        assert ctx.model_error is None
        failure = ctx.storage.failure
        assert failure is not None
        assert failure.where == "prewarming the search indexes"
    finally:
        ctx.close()
