"""The watcher end to end: a real watchdog observer on a real temp folder, the real
single writer (``IndexWorker``) with the fake embedder, and the store checked after.
Waits poll with a deadline; nothing sleeps for a fixed long time."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Set
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from watchdog.observers.api import BaseObserver, ObservedWatch
from watchdog.observers.inotify import InotifyObserver

from indexer.api import Lode
from indexer.cli._watch import run_watch
from indexer.config import LodeConfig, load_config
from indexer.embed import FakeEmbedder
from indexer.models import Project, Task
from indexer.search import SearchOptions
from indexer.tasks import IndexWorker
from indexer.watch import Batch, ObserverFactory, WatchService, WatchStatus, native_observer

DEADLINE = 20.0


def wait_until(predicate: Callable[[], bool], timeout: float = DEADLINE, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def make_config(tmp_path: Path, **overrides: Any) -> LodeConfig:
    settings = {"db": tmp_path / "db", "quiet_ms": 100, "max_delay_ms": 1000, "rescan_seconds": 0}
    return load_config(env={}, overrides={**settings, **overrides})


@dataclass
class Live:
    """A watched project: API, writer, watcher, and what the watcher sent."""

    lode: Lode
    project: Project
    worker: IndexWorker
    service: WatchService
    root: Path
    embedder: FakeEmbedder
    batches: list[Batch] = field(default_factory=list)
    task_ids: list[str] = field(default_factory=list)

    def paths(self) -> set[str]:
        return set(self.lode.store.documents.states(self.project.id))

    def wait_for_paths(self, present: Set[str] = frozenset(), absent: Set[str] = frozenset()) -> None:
        def ok() -> bool:
            now = self.paths()
            return present <= now and not (absent & now)

        wait_until(ok, what=f"{sorted(present)} indexed and {sorted(absent)} gone")

    def settle(self, timeout: float = DEADLINE) -> None:
        """Wait until no task of the project is queued or running (vectors included), nor
        a whole-project check the watcher asked for (a check is not listed as a task)."""
        wait_until(
            lambda: (
                not any(t.live for t in self.worker.list(self.project.id))
                and not any(self.worker.get(i).live for i in self.task_ids)
            ),
            timeout=timeout,
            what="idle writer",
        )

    def search(self, query: str) -> set[str]:
        options = SearchOptions(query=query, granularity="chunk", mode="lexical")
        return {g.file_path for g in self.lode.search(options).groups}

    def status(self) -> WatchStatus:
        status = self.service.get(self.project.id)
        assert status is not None
        return status


def start_live(
    tmp_path: Path,
    repo: Path,
    embedder: FakeEmbedder,
    observer_factory: ObserverFactory | None = None,
    **overrides: Any,
) -> Live:
    config = make_config(tmp_path, **overrides)
    lode = Lode(config, embedder=embedder)
    project = lode.register(repo)
    worker = IndexWorker(lode.store, embedder, config)
    worker.start()
    batches: list[Batch] = []
    task_ids: list[str] = []

    def on_batch(_project: Project, batch: Batch, task: Task) -> None:
        batches.append(batch)
        task_ids.append(task.id)

    service = WatchService(
        worker, config.watch, observer_factory=observer_factory, poll_interval=0.2, on_batch=on_batch
    )
    live = Live(lode, project, worker, service, repo, embedder, batches, task_ids)
    service.add(project)
    live.settle()  # the start-up diff indexed the fixture repo
    return live


def stop_live(live: Live) -> None:
    live.service.stop()
    live.worker.stop()
    live.lode.close()


@pytest.fixture
def live(tmp_path: Path, repo: Path, fake_embedder: FakeEmbedder) -> Iterator[Live]:
    session = start_live(tmp_path, repo, fake_embedder)
    yield session
    stop_live(session)


def test_start_indexes_the_project(live: Live) -> None:
    assert "src/shop/cart.py" in live.paths()
    assert "vendor_ignored/lib.py" not in live.paths()
    assert [b.reason for b in live.batches] == ["reconcile"]
    status = live.status()
    assert status.state == "watching"
    assert status.mode_reason is None


def test_a_saved_function_becomes_searchable(live: Live) -> None:
    assert live.search("quokka_refund_policy") == set()
    (live.root / "src" / "shop" / "refunds.py").write_text(
        "def quokka_refund_policy(order):\n    return order.total * 0.5\n"
    )
    wait_until(lambda: live.search("quokka_refund_policy") == {"src/shop/refunds.py"}, what="search hit")
    assert live.batches[-1].paths == ("src/shop/refunds.py",)
    status = live.status()
    assert status.last_event_at is not None
    assert status.last_update_at is not None


def test_an_atomic_save_indexes_the_new_content(live: Live) -> None:
    target = live.root / "src" / "shop" / "cart.py"
    temp = target.with_name("cart.py.tmp")  # editors: write a temp file, rename it over
    temp.write_text(target.read_text() + "\ndef wombat_checkout_total():\n    return 7\n")
    os.replace(temp, target)
    wait_until(lambda: live.search("wombat_checkout_total") == {"src/shop/cart.py"}, what="new content")
    assert not any("tmp" in p for p in live.paths())


def test_a_renamed_file_is_embedded_once_as_its_new_path(live: Live) -> None:
    before = live.embedder.texts_embedded
    assert before > 0
    (live.root / "src/shop/pricing.py").rename(live.root / "src/shop/prices.py")
    live.wait_for_paths(present={"src/shop/prices.py"}, absent={"src/shop/pricing.py"})
    live.settle()
    moved = live.lode.store.documents.states(live.project.id)["src/shop/prices.py"].chunk_count
    assert live.embedder.texts_embedded == before + moved
    assert live.lode.store.chunks.count(live.project.id, embedded=False) == 0


def test_a_deleted_directory_leaves_the_index(live: Live) -> None:
    web = {p for p in live.paths() if p.startswith("src/web/")}
    assert len(web) >= 3
    shutil.rmtree(live.root / "src" / "web")
    live.wait_for_paths(absent=web)
    assert "src/shop/cart.py" in live.paths()


def test_a_moved_directory_is_reindexed_under_its_new_name(live: Live) -> None:
    old = {p for p in live.paths() if p.startswith("src/shop/")}
    (live.root / "src" / "shop").rename(live.root / "src" / "store")
    new = {p.replace("src/shop/", "src/store/") for p in old}
    live.wait_for_paths(present=new, absent=old)


def test_a_gitignore_pattern_removes_matching_files(live: Live) -> None:
    assert {"README.md", "docs/guide.md"} <= live.paths()
    with (live.root / ".gitignore").open("a") as f:
        f.write("*.md\n")
    live.wait_for_paths(absent={"README.md", "docs/guide.md"})
    assert "src/shop/cart.py" in live.paths()


def test_a_nested_ignore_file_re_evaluates_its_folder(live: Live) -> None:
    (live.root / "src" / "web" / ".lodeignore").write_text("*.go\n")
    live.wait_for_paths(absent={"src/web/router.go"})
    assert live.batches[-1].paths == ("src/web",)
    (live.root / "src" / "web" / ".lodeignore").unlink()  # and back in when the rule goes
    live.wait_for_paths(present={"src/web/router.go"})


def test_git_internals_do_not_make_tasks(live: Live) -> None:
    objects = live.root / ".git" / "objects"
    for i in range(300):
        folder = objects / f"{i % 16:02x}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"obj{i}").write_bytes(b"blob")
    (live.root / "node_modules" / "left-pad").mkdir(parents=True)
    (live.root / "node_modules" / "left-pad" / "index.js").write_text("module.exports = 1\n")
    (live.root / "src" / "shop" / ".cart.py.swp").write_bytes(b"vim")
    time.sleep(0.5)  # several quiet windows: anything dirty would have been sent
    assert [b.reason for b in live.batches] == ["reconcile"]
    assert live.status().pending_events == 0


def test_changes_made_while_stopped_are_reconciled_on_start(
    tmp_path: Path, repo: Path, fake_embedder: FakeEmbedder
) -> None:
    first = start_live(tmp_path, repo, fake_embedder)
    stop_live(first)
    (repo / "src" / "shop" / "cart.py").unlink()
    (repo / "src" / "offline.py").write_text("def platypus_offline_edit():\n    pass\n")
    second = start_live(tmp_path, repo, fake_embedder)
    try:
        assert "src/shop/cart.py" not in second.paths()
        assert "src/offline.py" in second.paths()
    finally:
        stop_live(second)


class NoWatchesLeft(InotifyObserver):
    """An inotify observer on a machine whose watch table is full."""

    def schedule(self, *args: Any, **kwargs: Any) -> ObservedWatch:
        raise OSError(errno.ENOSPC, "inotify watch limit reached")


def test_falls_back_to_polling_when_the_os_refuses_watches(
    tmp_path: Path, repo: Path, fake_embedder: FakeEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    threads_before = sum(t.name != "LanceDBBackgroundEventLoop" for t in threading.enumerate())
    session = start_live(tmp_path, repo, fake_embedder, observer_factory=NoWatchesLeft)
    try:
        status = session.status()
        assert status.state == "polling"
        assert status.mode_reason is not None
        assert "inotify watch limit reached" in status.mode_reason
        assert "polling" in caplog.text
        (repo / "src" / "polled.py").write_text("def echidna_polled():\n    pass\n")
        wait_until(lambda: session.search("echidna_polled") == {"src/polled.py"}, what="polled change")
        (repo / "src" / "polled.py").unlink()
        session.wait_for_paths(absent={"src/polled.py"})
    finally:
        stop_live(session)
    # (lancedb starts one event-loop thread for the process on first use: not the watcher's)
    wait_until(
        lambda: sum(t.name != "LanceDBBackgroundEventLoop" for t in threading.enumerate()) <= threads_before,
        timeout=5,
        what="threads to end",
    )


def test_a_deleted_project_folder_is_an_error_not_an_empty_index(live: Live) -> None:
    indexed = live.paths()
    shutil.rmtree(live.root)
    wait_until(lambda: live.status().state == "error", what="error state")
    time.sleep(0.3)  # past the quiet window: the pending batch must not be sent
    assert live.paths() == indexed
    assert str(live.root) in (live.status().last_error or "")


def test_a_deleted_then_recreated_folder_is_watched_again_within_seconds(live: Live) -> None:
    """No rescan runs here (rescan_seconds=0): the watcher finds its folder back by itself,
    diffs it, watches it again and clears its error."""
    shutil.rmtree(live.root)
    wait_until(lambda: live.status().state == "error", what="error state")
    live.root.mkdir()
    (live.root / "back.py").write_text("def came_back():\n    return 1\n")
    wait_until(lambda: live.status().state == "watching", timeout=10, what="watching again")
    live.wait_for_paths(present={"back.py"})
    assert live.status().last_error is None
    (live.root / "later.py").write_text("def after_return():\n    return 2\n")
    live.wait_for_paths(present={"later.py"})


@pytest.mark.slow
def test_a_burst_of_2000_files_makes_few_tasks(live: Live) -> None:
    tasks_before = len(live.worker.list(live.project.id))
    folder = live.root / "src" / "shop"
    for i in range(2000):
        (folder / f"gen_{i:04d}.py").write_text(f"def generated_{i:04d}():\n    return {i}\n")
    wanted = {f"src/shop/gen_{i:04d}.py" for i in range(2000)}
    wait_until(lambda: wanted <= live.paths(), timeout=60, what="2,000 files indexed")
    live.settle(timeout=60)  # then compaction and phase 2 of 2,000 files (slow on a busy 2-core box)
    new_tasks = len(live.worker.list(live.project.id)) - tasks_before
    assert 1 <= new_tasks <= 3
    assert all(len(b.paths) <= 256 for b in live.batches)  # bounded: collapsed to the folder
    assert any(b.paths == ("src/shop",) for b in live.batches)


def test_lode_watch_prints_a_line_per_batch(tmp_path: Path, repo: Path, fake_embedder: FakeEmbedder) -> None:
    lode = Lode(make_config(tmp_path), embedder=fake_embedder)
    lines: list[str] = []
    stop = threading.Event()
    runner = threading.Thread(
        target=run_watch, args=(lode, repo), kwargs={"stop": stop, "echo": lines.append}
    )
    runner.start()
    try:
        wait_until(lambda: any("whole project (reconcile)" in line for line in lines), what="start line")
        assert lines[0].startswith(f"watching {repo}")
        (repo / "src" / "cli_made.py").write_text("def numbat():\n    pass\n")
        wait_until(lambda: any("src/cli_made.py → 1 file(s) indexed" in line for line in lines), what="batch")
        (repo / "src" / "cli_made.py").unlink()
        wait_until(lambda: any("1 path(s) removed" in line for line in lines), what="removal line")
    finally:
        stop.set()
        runner.join(30)
        lode.close()
    assert not runner.is_alive()


def test_native_observer_is_a_real_observer() -> None:
    observer = native_observer()
    assert isinstance(observer, BaseObserver)
    observer.stop()


@pytest.mark.slow
def test_lode_watch_stops_cleanly_on_ctrl_c(tmp_path: Path, repo: Path) -> None:
    """``lode watch`` in its own process with the real model: Ctrl-C ends it with status 0.

    It runs through the ``lode`` entry point, as a user runs it: that one leaves without
    the interpreter's teardown, which would wait for a writer thread still inside the model
    (the command called as a function from another program leaves that thread running)."""
    code = "import sys; from server.cli import main; sys.argv[0] = 'lode'; main()"
    db = str(tmp_path / "db")
    args = [sys.executable, "-c", code, "watch", str(repo), "--db", db, "--quiet-ms", "100"]
    lines: list[str] = []
    with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        stdout, stderr = proc.stdout, proc.stderr
        assert stdout is not None
        assert stderr is not None
        reader = threading.Thread(target=lambda: lines.extend(iter(stdout.readline, "")), daemon=True)
        reader.start()
        try:
            wait_until(
                lambda: any("(reconcile)" in line for line in lines), timeout=60, what="start-up index"
            )
            (repo / "src" / "quoll.py").write_text("def quoll():\n    pass\n")
            # the real model embeds the start-up index meanwhile: on a busy machine it takes time
            wait_until(lambda: any("src/quoll.py →" in line for line in lines), timeout=60, what="batch line")
            proc.send_signal(signal.SIGINT)
            code = proc.wait(timeout=30)
            assert code == 0, (code, stderr.read()[-3000:])  # a crash at exit says where
        finally:
            if proc.poll() is None:
                proc.kill()
        reader.join(5)
        errors = stderr.read()
    assert lines[-1].strip() == "stopped"
    assert "Traceback" not in errors
