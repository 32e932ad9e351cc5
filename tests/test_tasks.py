"""The index worker's queue: a cancel or a joining request racing the worker's pick, and
deletes ahead of index work (real store, fake embedder)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from indexer.api import Lode
from indexer.config import load_config
from indexer.embed import FakeEmbedder
from indexer.models import Task
from indexer.store import Store
from indexer.tasks import IndexWorker


@pytest.fixture
def lode_repo(tmp_path: Path, repo: Path) -> tuple[Lode, Path]:
    """A Lode on a fresh store with the fixture repo registered (not yet indexed)."""
    lode = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    lode.register(repo)
    return lode, repo


def _race_the_pick(worker: IndexWorker, action: Any) -> tuple[threading.Thread, threading.Event]:
    """Run ``action`` on another thread at the moment the worker reads the queue, and give
    it 0.3 s to finish before the worker goes on (the window a lock-free pick left open)."""
    store = worker.store
    original = store.tasks.all
    fired = threading.Event()

    def list_tasks(*args: Any, **kwargs: Any) -> list[Task]:
        found = original(*args, **kwargs)
        if threading.current_thread().name == "lode-writer" and found and not fired.is_set():
            racer.start()
            fired.set()
            racer.join(0.3)
        return found

    racer = threading.Thread(target=action)
    store.tasks.all = list_tasks  # type: ignore[method-assign]
    return racer, fired


def _finished(worker: IndexWorker, task_id: str, timeout: float = 30) -> Task:
    deadline = time.monotonic() + timeout
    while (task := worker.get(task_id)).live and time.monotonic() < deadline:
        time.sleep(0.02)
    return task


def test_a_cancel_racing_the_pick_cancels_the_task(lode_repo: tuple[Lode, Path]) -> None:
    lode, _ = lode_repo
    project = lode.store.projects.get("repo")
    worker = IndexWorker(lode.store, lode.embedder, lode.config)
    task = worker.submit(project.id)
    answers: list[Task] = []
    racer, fired = _race_the_pick(worker, lambda: answers.append(worker.cancel(task.id)))
    worker.start()
    try:
        assert fired.wait(10)
        racer.join(10)
        final = _finished(worker, task.id)
    finally:
        worker.stop()
    assert answers, "the cancel never returned"
    assert final.status == "cancelled", final  # before the fix: "done", the cancel lost


def test_a_request_racing_the_pick_is_not_lost(lode_repo: tuple[Lode, Path]) -> None:
    """A partial re-index asked while the worker picks up a queued one either joins it
    before it starts or queues after it: its path is indexed either way."""
    lode, repo = lode_repo
    project = lode.store.projects.get("repo")
    lode.index(repo)
    (repo / "src/shop/late.py").write_text("def late_arrival():\n    return 1\n")
    worker = IndexWorker(lode.store, lode.embedder, lode.config)
    first = worker.submit(project.id, paths=("README.md",))
    joined: list[Task] = []
    racer, fired = _race_the_pick(
        worker, lambda: joined.append(worker.submit(project.id, paths=("src/shop/late.py",)))
    )
    worker.start()
    try:
        assert fired.wait(10)
        racer.join(10)
        assert joined
        _finished(worker, first.id)
        _finished(worker, joined[0].id)
    finally:
        worker.stop()
    assert lode.store.documents.find(project.id, "src/shop/late.py") is not None


def test_a_delete_runs_before_older_index_work(lode_repo: tuple[Lode, Path], tmp_path: Path) -> None:
    lode, _repo = lode_repo
    other_root = tmp_path / "other"
    other_root.mkdir()
    (other_root / "a.py").write_text("def a():\n    return 1\n")
    other = lode.register(other_root)
    project = lode.store.projects.get("repo")
    worker = IndexWorker(lode.store, lode.embedder, lode.config)
    index = worker.submit(project.id)
    delete = worker.submit(other.id, kind="delete")
    worker.start()
    try:
        deleted = _finished(worker, delete.id)
        indexed = _finished(worker, index.id)
    finally:
        worker.stop()
    assert (deleted.status, indexed.status) == ("done", "done")
    assert deleted.finished_at is not None
    assert indexed.started_at is not None
    assert deleted.finished_at <= indexed.started_at


def test_old_finished_tasks_are_pruned_live_ones_never(store: Store) -> None:
    from dataclasses import replace
    from datetime import UTC, datetime, timedelta

    start = datetime(2026, 1, 1, tzinfo=UTC)
    made = []
    for i in range(30):
        stamp = start + timedelta(minutes=i)
        task = Task(id=f"t{i:02d}", project_id="p", kind="index", created_at=stamp, updated_at=stamp)
        status = ("done", "failed", "cancelled", "queued", "running")[i % 5]
        finished = stamp + timedelta(seconds=30) if status in ("done", "failed", "cancelled") else None
        made.append(replace(task, status=status, finished_at=finished))
    for task in made:
        store.tasks.save(task)
    assert store.tasks.prune(keep=5) == 18 - 5
    left = {t.id for t in store.tasks.all()}
    live = {t.id for t in made if t.status in ("queued", "running")}
    newest_finished = {t.id for t in sorted(made, key=lambda t: t.created_at or start) if t.id not in live}
    assert left == live | set(sorted(newest_finished)[-5:])
    assert store.tasks.prune(keep=5) == 0
