"""Watching that stays quiet: no inotify watch inside an ignored folder, no task from a
whole-project diff that finds nothing, and a burst inside an ignored folder costs nothing.

Real observers on real folders, the real writer with the fake embedder."""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_watcher_live import Live, start_live, stop_live, wait_until
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers.api import BaseObserver

from indexer.embed import FakeEmbedder
from indexer.walker import IgnoreRules
from indexer.watch import native_observer
from indexer.watch._inotify import PrunedInotifyEmitter

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


def kernel_watches(emitter: PrunedInotifyEmitter) -> int:
    """The watches the kernel holds for the emitter's inotify instance (its fdinfo lines)."""
    fd = emitter._fd
    lines = Path(f"/proc/self/fdinfo/{fd}").read_text().splitlines()
    return sum(line.startswith("inotify wd:") for line in lines)


class Recorder(FileSystemEventHandler):
    """Collects the events an observer dispatches."""

    def __init__(self) -> None:
        self.events: list[FileSystemEvent] = []

    def dispatch(self, event: FileSystemEvent) -> None:
        self.events.append(event)

    def paths(self) -> set[str]:
        return {os.fsdecode(e.src_path) for e in self.events}


def make_tree(root: Path) -> None:
    for folder in ("src/app", ".venv/lib/site", "node_modules/pkg/lib", "generated/deep", ".git/info"):
        (root / folder).mkdir(parents=True)
    (root / ".gitignore").write_text("generated/\n")
    (root / "src" / "app" / "main.py").write_text("def main():\n    pass\n")


@pytest.fixture
def observed(tmp_path: Path) -> Iterator[tuple[Path, BaseObserver, Recorder, PrunedInotifyEmitter]]:
    root = tmp_path / "proj"
    make_tree(root)
    rules = IgnoreRules(root)
    observer = native_observer(lambda: rules)
    recorder = Recorder()
    observer.schedule(recorder, str(root), recursive=True)
    observer.start()
    (emitter,) = observer.emitters
    assert isinstance(emitter, PrunedInotifyEmitter)
    try:
        yield root, observer, recorder, emitter
    finally:
        observer.stop()
        observer.join(5)


def test_no_watch_is_placed_inside_an_ignored_folder(
    observed: tuple[Path, BaseObserver, Recorder, PrunedInotifyEmitter],
) -> None:
    _root, _observer, _recorder, emitter = observed
    # .venv and node_modules (built-in rules), generated/ (.gitignore), .git but its info/
    assert emitter.watched_folders == ["", ".git/info", "src", "src/app"]
    assert kernel_watches(emitter) == 4


def test_folders_made_later_are_watched_unless_ignored(
    observed: tuple[Path, BaseObserver, Recorder, PrunedInotifyEmitter],
) -> None:
    root, _observer, recorder, emitter = observed
    (root / "src" / "new" / "deeper").mkdir(parents=True)
    (root / "dist" / "bundle").mkdir(parents=True)  # built-in: ignored
    wait_until(lambda: "src/new/deeper" in emitter.watched_folders, timeout=5, what="new folders watched")
    (root / "src" / "new" / "deeper" / "x.py").write_text("x = 1\n")
    wait_until(lambda: str(root / "src" / "new" / "deeper" / "x.py") in recorder.paths(), timeout=5)
    assert not any(f.startswith("dist") for f in emitter.watched_folders)
    assert kernel_watches(emitter) == len(emitter.watched_folders)
    (root / "src" / "new").rename(root / "src" / "moved")
    wait_until(lambda: "src/moved/deeper" in emitter.watched_folders, timeout=5, what="moved folder watched")
    assert not any(f.startswith("src/new") for f in emitter.watched_folders)


def test_an_ignore_file_change_moves_the_watches(
    observed: tuple[Path, BaseObserver, Recorder, PrunedInotifyEmitter],
) -> None:
    root, _observer, recorder, emitter = observed
    (root / ".gitignore").write_text("src/app/\n")
    wait_until(
        lambda: "generated/deep" in emitter.watched_folders and "src/app" not in emitter.watched_folders,
        timeout=5,
        what="generated/ watched, src/app not",
    )
    (root / "generated" / "deep" / "g.py").write_text("g = 1\n")
    wait_until(lambda: str(root / "generated" / "deep" / "g.py") in recorder.paths(), timeout=5)
    assert kernel_watches(emitter) == len(emitter.watched_folders)


def test_a_burst_in_an_ignored_folder_reaches_nothing(
    observed: tuple[Path, BaseObserver, Recorder, PrunedInotifyEmitter],
) -> None:
    root, _observer, recorder, _emitter = observed
    site = root / ".venv" / "lib" / "site"
    for i in range(500):
        (site / f"m{i}.py").write_text("x = 1\n")
    (root / "src" / "app" / "marker.py").write_text("y = 2\n")  # a change that is seen
    wait_until(lambda: str(root / "src" / "app" / "marker.py") in recorder.paths(), timeout=5)
    assert not any(".venv" in p for p in recorder.paths())


@pytest.mark.slow
def test_5000_files_into_an_ignored_venv_cost_nothing(
    tmp_path: Path, repo: Path, fake_embedder: FakeEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    """The issue's case: a watched project, a 5,000-file burst into its .venv: no task, no
    overflow, and the process (the writing thread aside) spends at most 1 s of CPU on it."""
    (repo / ".venv").mkdir()
    session = start_live(tmp_path, repo, fake_embedder)
    try:
        tasks_before = [t.id for t in session.worker.list(session.project.id)]
        batches_before = len(session.batches)
        caplog.set_level(logging.WARNING)
        writer_cpu = 0.0
        cpu_before = time.process_time()
        started = time.thread_time()
        for package in range(50):
            folder = repo / ".venv" / "lib" / "python3" / "site-packages" / f"pkg{package:02d}"
            folder.mkdir(parents=True)
            for module in range(100):
                (folder / f"mod{module:03d}.py").write_text(f"def f{module}():\n    return {package}\n")
        writer_cpu = time.thread_time() - started
        time.sleep(1.0)  # past the quiet window (100 ms) and a debounced batch's delay
        others_cpu = time.process_time() - cpu_before - writer_cpu
        status = session.status()
        assert status.pending_events == 0
        assert len(session.batches) == batches_before
        assert [t.id for t in session.worker.list(session.project.id)] == tasks_before
        assert "overflow" not in caplog.text.lower()
        observer = session.service._watchers[session.project.id]._observer
        assert observer is not None
        (emitter,) = observer.emitters
        assert isinstance(emitter, PrunedInotifyEmitter)
        assert not any(f.startswith(".venv") for f in emitter.watched_folders)
        assert kernel_watches(emitter) == len(emitter.watched_folders)
        assert others_cpu <= 1.0, f"the watcher spent {others_cpu:.2f} s of CPU on an ignored burst"
    finally:
        stop_live(session)


def test_a_check_that_finds_nothing_leaves_no_task(live: Live) -> None:
    """The start-up reconcile of an indexed project, and a rescan, create no task; a rescan
    after a change made while nothing watched is a task that indexes it."""
    listed = [t.id for t in live.worker.list(live.project.id)]
    watcher = live.service._watchers[live.project.id]
    watcher.stop()
    watcher.start()  # the start-up reconcile of an indexed project
    check = live.worker.get(live.status().last_task_id or "")
    wait_until(lambda: not live.worker.get(check.id).live, what="the check to end")
    assert live.worker.get(check.id).message == "no change"
    assert [t.id for t in live.worker.list(live.project.id)] == listed
    watcher.stop()
    (live.root / "src" / "offline_edit.py").write_text("def wombat_offline():\n    pass\n")
    watcher.start(reconcile=False)
    watcher._send(watcher._whole_project("rescan"))
    live.wait_for_paths(present={"src/offline_edit.py"})
    live.settle()
    tasks = live.worker.list(live.project.id)
    assert len(tasks) == len(listed) + 1
    assert tasks[0].status == "done"
    assert tasks[0].files_done >= 1


@pytest.fixture
def live(tmp_path: Path, repo: Path, fake_embedder: FakeEmbedder) -> Iterator[Live]:
    session = start_live(tmp_path, repo, fake_embedder)
    yield session
    stop_live(session)


def test_a_task_with_nothing_to_embed_ends_with_phase_1(live: Live) -> None:
    """Deleting a file leaves nothing to embed: its task is done at once, not 'embed'."""
    (live.root / "src" / "shop" / "cart.py").unlink()
    live.wait_for_paths(absent={"src/shop/cart.py"})
    live.settle()
    task = live.worker.list(live.project.id)[0]
    assert task.status == "done"
    assert task.phase == "done"
    assert task.chunks_embedded == task.chunks_total > 0  # counted, not left at 0/0


def test_threads_end_with_the_observer(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    make_tree(root)
    before = threading.active_count()
    observer = native_observer(lambda: IgnoreRules(root))
    observer.schedule(Recorder(), str(root), recursive=True)
    observer.start()
    started = time.monotonic()
    observer.stop()
    observer.join(5)
    assert time.monotonic() - started < 1.0  # the reading thread is woken, not timed out
    wait_until(lambda: threading.active_count() <= before, timeout=5, what="threads to end")
