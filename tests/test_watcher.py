"""The watcher's pieces without a real observer: debouncer (fake clock), event
handling, the timer's decisions, the polling filter, the public API."""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirModifiedEvent,
    DirMovedEvent,
    FileClosedNoWriteEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileOpenedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers.api import BaseObserver, ObservedWatch
from watchdog.observers.polling import PollingEmitter
from watchdog.utils.dirsnapshot import DirectorySnapshot

import indexer.watch
from indexer.config import WatchConfig
from indexer.models import Project, Task
from indexer.walker import IgnoreRules
from indexer.watch import Debouncer, ProjectWatcher, WatchService, inotify_limit_reached, is_editor_temp
from indexer.watch._handler import ChangeHandler, PathChange, iter_changes
from indexer.watch._observer import listdir_skipping_ignored


class FakeClock:
    """Monotonic seconds that move only when a test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> float:
        self.now += seconds
        return self.now


@dataclass
class FakeSink:
    """Records submits like the writer would, one task each (a whole-project check is
    recorded as a submit of no paths, and in ``checks``)."""

    calls: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)

    def submit(self, project_id: str, paths: Sequence[str] = ()) -> Task:
        self.calls.append((project_id, tuple(paths)))
        return Task(id=f"t{len(self.calls)}", project_id=project_id, paths=tuple(paths))

    def submit_check(self, project_id: str) -> Task:
        self.checks.append(project_id)
        return self.submit(project_id)


def test_public_api_is_pinned() -> None:
    assert indexer.watch.__all__ == sorted(indexer.watch.__all__)
    assert set(indexer.watch.__all__) == {
        "Batch", "BatchCallback", "Clock", "Debouncer", "ObserverFactory", "ProjectWatcher", "TaskSink",
        "WatchService", "WatchStatus", "inotify_limit_reached", "is_editor_temp", "native_observer",
        "polling_observer",
    }  # fmt: skip


# ---- debouncer ----------------------------------------------------------------------


def make_debouncer(clock: FakeClock, max_paths: int = 256) -> Debouncer:
    return Debouncer(quiet=0.3, max_delay=2.0, max_paths=max_paths, clock=clock)


def test_batch_is_due_after_the_quiet_window() -> None:
    clock = FakeClock()
    deb = make_debouncer(clock)
    assert deb.add("src/a.py") is True
    assert deb.due_at() == pytest.approx(clock.now + 0.3)
    assert deb.poll(clock.advance(0.29)) is None
    batch = deb.poll(clock.advance(0.02))
    assert batch is not None
    assert batch.paths == ("src/a.py",)
    assert batch.submit_paths == ("src/a.py",)
    assert not batch.whole_project
    assert deb.poll(clock.advance(10)) is None
    assert deb.due_at() is None


def test_each_event_restarts_the_quiet_window() -> None:
    clock = FakeClock()
    deb = make_debouncer(clock)
    deb.add("a.py")
    for _ in range(3):
        clock.advance(0.2)
        assert deb.add("b.py") is False
        assert deb.poll() is None
    assert deb.poll(clock.advance(0.25)) is None
    batch = deb.poll(clock.advance(0.06))
    assert batch is not None
    assert batch.paths == ("a.py", "b.py")
    assert batch.events == 4


def test_a_continuous_stream_still_lands_every_max_delay() -> None:
    clock = FakeClock()
    deb = make_debouncer(clock)
    start = clock.now
    flushed: list[float] = []
    for i in range(80):  # one save every 0.125 s for 10 s: never quiet for 0.3 s
        deb.add(f"f{i % 7}.py")
        batch = deb.poll()
        if batch is not None:
            flushed.append(clock.now - start)
            assert batch.last_event_at - batch.first_event_at == pytest.approx(2.0)
        clock.advance(0.125)
    assert flushed == pytest.approx([2.0, 4.125, 6.25, 8.375])
    final = deb.poll(clock.advance(0.3))
    assert final is not None


def test_repeated_and_nested_paths_coalesce() -> None:
    clock = FakeClock()
    deb = make_debouncer(clock)
    for _ in range(50):
        deb.add("src/a.py")
    deb.add("src/pkg/b.py")
    deb.add("src/pkg")  # a folder event covers what is under it...
    deb.add("src/pkg/c.py")  # ...before and after
    deb.add("/docs/x.md/")
    assert deb.pending_paths <= 4
    batch = deb.take()
    assert batch is not None
    assert batch.paths == ("docs/x.md", "src/a.py", "src/pkg")
    assert batch.events == 54
    assert deb.take() is None


def test_empty_path_means_the_whole_project() -> None:
    deb = make_debouncer(FakeClock())
    deb.add("a.py")
    deb.add("")
    deb.add("b.py")
    batch = deb.take()
    assert batch is not None
    assert batch.whole_project
    assert batch.paths == ()
    assert batch.submit_paths == ()


def test_memory_is_bounded_by_collapsing_to_folders() -> None:
    clock = FakeClock()
    deb = make_debouncer(clock, max_paths=10)
    for i in range(2000):
        deb.add(f"src/gen/mod{i}.py")
        assert deb.pending_paths <= 10
    deb.add("src/keep.py")
    deb.add("docs/a/b/c.md")
    batch = deb.take()
    assert batch is not None
    assert batch.paths == ("docs/a/b/c.md", "src/gen", "src/keep.py")
    assert batch.events == 2002


def test_collapse_goes_up_level_by_level_then_to_the_whole_project() -> None:
    deb = make_debouncer(FakeClock(), max_paths=5)
    for rel in ("a/b/c0.py", "a/b/c1.py", "a/b/c2.py", "a/d0.py", "a/d1.py", "e.py"):
        deb.add(rel)
    batch = deb.take()
    assert batch is not None
    assert batch.paths == ("a/b", "a/d0.py", "a/d1.py", "e.py")  # only the deepest level went up
    for i in range(6):
        deb.add(f"top{i}.py")
    batch = deb.take()
    assert batch is not None
    assert batch.whole_project


def test_debouncer_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="must be > 0"):
        Debouncer(quiet=0, max_delay=1)


# ---- events → paths -------------------------------------------------------------------


def changes(event: FileSystemEvent, root: Path) -> list[PathChange]:
    return list(iter_changes(event, str(root)))


def test_events_map_to_relative_paths(tmp_path: Path) -> None:
    root = tmp_path
    assert changes(FileModifiedEvent(str(root / "src/a.py")), root) == [PathChange("src/a.py", False, False)]
    assert changes(FileDeletedEvent(str(root / "a.py")), root) == [PathChange("a.py", False, True)]
    assert changes(DirDeletedEvent(str(root / "pkg")), root) == [PathChange("pkg", True, True)]
    assert changes(FileMovedEvent(str(root / "a.py.tmp"), str(root / "a.py")), root) == [
        PathChange("a.py.tmp", False, True),
        PathChange("a.py", False, False),
    ]
    assert changes(DirMovedEvent(str(root / "old"), str(root / "new")), root) == [
        PathChange("old", True, True),
        PathChange("new", True, False),
    ]
    assert changes(FileMovedEvent(str(root / "a.py"), "/elsewhere/a.py"), root) == [
        PathChange("a.py", False, True)
    ]
    assert changes(DirDeletedEvent(str(root)), root) == [PathChange("", True, True)]
    assert changes(FileCreatedEvent(os.fsencode(root / "b.py")), root) == [PathChange("b.py", False, False)]


def test_events_that_change_nothing_are_skipped(tmp_path: Path) -> None:
    for event in (
        DirModifiedEvent(str(tmp_path / "src")),
        FileOpenedEvent(str(tmp_path / "a.py")),
        FileClosedNoWriteEvent(str(tmp_path / "a.py")),
        FileModifiedEvent("/somewhere/else.py"),
    ):
        assert changes(event, tmp_path) == []


@pytest.mark.parametrize(
    ("name", "temp"),
    [
        (".cart.py.swp", True), (".cart.py.swx", True), ("cart.py~", True), (".#cart.py", True),
        ("#cart.py#", True), ("4913", True), ("cart.py.tmp", True), ("cart.py___jb_tmp___", True),
        ("cart.py", False), ("main.swift", False), ("notes.txt", False), ("49130", False),
    ],
)  # fmt: skip
def test_editor_temp_names(name: str, temp: bool) -> None:
    assert is_editor_temp(name) is temp


class Marks:
    def __init__(self) -> None:
        self.paths: list[str] = []

    def __call__(self, path: str) -> None:
        self.paths.append(path)


def make_handler(root: Path, exclude: tuple[str, ...] = ()) -> tuple[ChangeHandler, Marks]:
    marks = Marks()
    return ChangeHandler(root, marks, exclude=exclude), marks


def test_handler_drops_ignored_paths_and_editor_temp_files(repo: Path) -> None:
    handler, marks = make_handler(repo, exclude=("*.gen.py",))
    for rel in (
        ".git/index", ".git/objects/ab/cdef", "node_modules/x/index.js", "vendor_ignored/lib.py",
        "server.log", "docs/drafts/new.md", "src/.cart.py.swp", "src/cart.py~", "src/x.gen.py",
    ):  # fmt: skip
        handler.dispatch(FileModifiedEvent(str(repo / rel)))
    handler.dispatch(DirCreatedEvent(str(repo / "build" / "sub")))
    assert marks.paths == []
    handler.dispatch(FileModifiedEvent(str(repo / "src/shop/cart.py")))
    handler.dispatch(FileMovedEvent(str(repo / "src/.cart.py.swp"), str(repo / "src/shop/cart.py")))
    handler.dispatch(DirMovedEvent(str(repo / "src/web"), str(repo / "build/web")))
    assert marks.paths == ["src/shop/cart.py", "src/shop/cart.py", "src/web"]


def test_handler_reloads_ignore_files(repo: Path) -> None:
    handler, marks = make_handler(repo)
    assert not handler.rules.ignored("src/shop/cart.py")
    (repo / "src" / ".gitignore").write_text("cart.py\n")
    handler.dispatch(FileModifiedEvent(str(repo / "src/.gitignore")))
    assert marks.paths == ["src"]  # re-diff the folder the ignore file rules
    assert handler.rules.ignored("src/shop/cart.py")
    handler.dispatch(FileModifiedEvent(str(repo / ".lodeignore")))
    assert marks.paths == ["src", ""]  # a root ignore file: the whole project
    handler.dispatch(FileCreatedEvent(str(repo / "vendor_ignored/.gitignore")))
    assert marks.paths == ["src", ""]  # inside an ignored folder: nothing to re-evaluate


def test_handler_rereads_git_info_exclude(repo: Path) -> None:
    handler, marks = make_handler(repo)
    (repo / ".git" / "info").mkdir(parents=True)
    (repo / ".git" / "info" / "exclude").write_text("docs/\n")
    handler.dispatch(FileModifiedEvent(str(repo / ".git/info/exclude")))
    assert marks.paths == [""]
    assert handler.rules.ignored("docs/guide.md")


def test_handler_reports_errors_instead_of_raising(tmp_path: Path) -> None:
    errors: list[BaseException] = []

    def boom(path: str) -> None:
        raise RuntimeError("sink broke")

    handler = ChangeHandler(tmp_path, boom, on_error=errors.append)
    handler.dispatch(FileCreatedEvent(str(tmp_path / "a.py")))
    assert len(errors) == 1


def test_handler_reports_the_root_vanishing(tmp_path: Path) -> None:
    gone: list[bool] = []
    handler = ChangeHandler(tmp_path, Marks(), on_root_gone=lambda: gone.append(True))
    handler.dispatch(DirDeletedEvent(str(tmp_path)))
    assert gone == [True]


# ---- polling filter ---------------------------------------------------------------------


def test_polling_skips_ignored_folders(repo: Path) -> None:
    (repo / "node_modules" / "pkg").mkdir(parents=True)
    (repo / "node_modules" / "pkg" / "index.js").write_text("x\n")
    rules = IgnoreRules(repo)
    listdir = listdir_skipping_ignored(lambda: rules, repo)
    snapshot = DirectorySnapshot(str(repo), listdir=listdir, stat=os.lstat)
    rels = {os.path.relpath(os.fsdecode(p), repo) for p in snapshot.paths}
    assert "src/shop/cart.py" in rels
    assert not {r for r in rels if r.startswith(("node_modules", "vendor_ignored", "build"))}
    assert "server.log" not in rels


# ---- the timer's decisions, driven by a fake clock ------------------------------------


class ManualObserver(BaseObserver):
    """An observer that reports only the events a test fires (the timer logic is under test)."""

    def __init__(self) -> None:
        super().__init__(PollingEmitter, timeout=3600)
        self.handlers: list[FileSystemEventHandler] = []

    def schedule(
        self,
        event_handler: FileSystemEventHandler,
        path: str | Path,
        *,
        recursive: bool = False,
        event_filter: list[type[FileSystemEvent]] | None = None,
        follow_symlink: bool = False,
    ) -> ObservedWatch:
        self.handlers.append(event_handler)
        return super().schedule(event_handler, path, recursive=recursive)

    def fire(self, event: FileSystemEvent) -> None:
        for handler in self.handlers:
            handler.dispatch(event)


def make_watcher(
    tmp_path: Path, sink: FakeSink, clock: FakeClock, rescan: int = 300
) -> tuple[ProjectWatcher, ManualObserver]:
    project = Project(id="p1", name="p", root=str(tmp_path))
    config = WatchConfig(quiet_ms=300, max_delay_ms=2000, rescan_seconds=rescan)
    observer = ManualObserver()
    watcher = ProjectWatcher(
        project, sink, config, clock=clock, observer_factory=lambda: observer, limit_probe=lambda _: False
    )
    return watcher, observer


def test_start_reconciles_then_batches_and_rescans(tmp_path: Path) -> None:
    clock, sink = FakeClock(), FakeSink()
    watcher, observer = make_watcher(tmp_path, sink, clock)
    status = watcher.start(timer=False)
    try:
        assert status.state == "watching"
        assert sink.calls == [("p1", ())]  # the start-up diff
        assert sink.checks == ["p1"]  # as a check: no task unless something changed
        observer.fire(FileModifiedEvent(str(tmp_path / "a.py")))
        observer.fire(FileMovedEvent(str(tmp_path / "a.py.tmp"), str(tmp_path / "b.py")))
        status = watcher.status()
        assert status.pending_events == 2
        assert status.last_event_at is not None
        assert watcher.tick(clock.advance(0.1)) == []
        assert [t.paths for t in watcher.tick(clock.advance(0.3))] == [("a.py", "b.py")]
        assert watcher.tick(clock.advance(298)) == []
        assert [t.paths for t in watcher.tick(clock.advance(2))] == [()]  # the safety-net rescan
        assert sink.checks == ["p1", "p1"]
        assert watcher.tick(clock.advance(299)) == []
        assert len(watcher.tick(clock.advance(1))) == 1
        status = watcher.status()
        assert status.batches == 4
        assert status.pending_events == 0
        assert status.last_update_at is not None
        assert status.last_task_id == "t4"
    finally:
        watcher.stop()
    assert watcher.status().state == "stopped"


def test_rescan_zero_disables_it(tmp_path: Path) -> None:
    clock, sink = FakeClock(), FakeSink()
    watcher, _ = make_watcher(tmp_path, sink, clock, rescan=0)
    watcher.start(reconcile=False, timer=False)
    try:
        assert watcher.tick(clock.advance(100_000)) == []
        assert sink.calls == []
    finally:
        watcher.stop()


def test_stop_flushes_pending_paths(tmp_path: Path) -> None:
    clock, sink = FakeClock(), FakeSink()
    watcher, observer = make_watcher(tmp_path, sink, clock)
    watcher.start(reconcile=False, timer=False)
    observer.fire(FileCreatedEvent(str(tmp_path / "late.py")))
    watcher.stop()
    assert sink.calls == [("p1", ("late.py",))]


def test_a_vanished_root_is_never_diffed(tmp_path: Path) -> None:
    clock, sink = FakeClock(), FakeSink()
    root = tmp_path / "proj"
    root.mkdir()
    watcher, observer = make_watcher(root, sink, clock)
    watcher.start(reconcile=False, timer=False)
    try:
        observer.fire(FileCreatedEvent(str(root / "a.py")))
        root.rmdir()
        assert watcher.tick(clock.advance(1)) == []
        assert sink.calls == []
        status = watcher.status()
        assert status.state == "error"
        assert status.last_error is not None
        assert "missing" in status.last_error
    finally:
        watcher.stop()


def test_submit_failures_are_reported_not_raised(tmp_path: Path) -> None:
    class BrokenSink:
        def submit(self, project_id: str, paths: Sequence[str] = ()) -> Task:
            raise OSError("disk full")

        def submit_check(self, project_id: str) -> Task:
            raise OSError("disk full")

    clock = FakeClock()
    project = Project(id="p1", name="p", root=str(tmp_path))
    watcher = ProjectWatcher(
        project, BrokenSink(), WatchConfig(), clock=clock, observer_factory=ManualObserver,
        limit_probe=lambda _: False,
    )  # fmt: skip
    watcher.start(timer=False)
    try:
        status = watcher.status()
        assert status.state == "watching"
        assert status.last_error == "cannot queue a task: disk full"
    finally:
        watcher.stop(flush=False)


def test_a_full_watch_table_switches_to_polling(tmp_path: Path) -> None:
    clock, sink = FakeClock(), FakeSink()
    exhausted = [False]
    project = Project(id="p1", name="p", root=str(tmp_path))
    watcher = ProjectWatcher(
        project, sink, WatchConfig(rescan_seconds=60), clock=clock, observer_factory=ManualObserver,
        limit_probe=lambda _: exhausted[0],
    )  # fmt: skip
    watcher.start(reconcile=False, timer=False)
    try:
        assert watcher.status().state == "watching"
        exhausted[0] = True  # sub-folders created since start used up the last watches
        watcher.tick(clock.advance(60))
        status = watcher.status()
        assert status.state == "polling"
        assert status.mode_reason is not None
        assert "limit" in status.mode_reason
        assert sink.calls == [("p1", ())]
    finally:
        watcher.stop()


def test_service_adds_lists_and_removes(tmp_path: Path) -> None:
    sink = FakeSink()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    projects = [Project(id=n, name=n, root=str(tmp_path / n)) for n in ("a", "b")]
    service = WatchService(sink, WatchConfig(), observer_factory=ManualObserver, limit_probe=lambda _: False)
    with service:
        service.start(projects)
        service.add(projects[0])  # already watched: no second start-up diff
        assert sorted(service.status()) == ["a", "b"]
        assert {s.state for s in service.status().values()} == {"watching"}
        assert sorted(sink.calls) == [("a", ()), ("b", ())]
        service.remove("a")
        assert service.get("a") is None
        status = service.get("b")
        assert status is not None
        assert status.root == str(tmp_path / "b")
    assert service.status() == {}


def test_watch_command_help_has_an_example() -> None:
    from click.testing import CliRunner

    from indexer.cli._watch import watch_command

    result = CliRunner().invoke(watch_command, ["--help"])
    assert result.exit_code == 0
    assert "Example: lode watch" in result.output
    assert "--quiet-ms" in result.output
    assert "--db" in result.output


def test_watching_resumes_when_a_vanished_folder_comes_back(tmp_path: Path) -> None:
    clock, sink = FakeClock(), FakeSink()
    root = tmp_path / "proj"
    root.mkdir()
    observers: list[ManualObserver] = []

    def factory() -> ManualObserver:
        observers.append(ManualObserver())
        return observers[-1]

    project = Project(id="p1", name="p", root=str(root))
    watcher = ProjectWatcher(
        project, sink, WatchConfig(rescan_seconds=10), clock=clock, observer_factory=factory,
        limit_probe=lambda _: False,
    )  # fmt: skip
    watcher.start(reconcile=False, timer=False)
    try:
        root.rmdir()
        observers[-1].fire(DirDeletedEvent(str(root)))
        assert watcher.status().state == "error"
        assert watcher.tick(clock.advance(1)) == []  # still gone: nothing is diffed
        assert watcher.status().last_error
        root.mkdir()
        # back within a second, long before the rescan: a whole-project diff, the error cleared
        assert [t.paths for t in watcher.tick(clock.advance(1))] == [()]
        assert watcher.status().state == "watching"
        assert watcher.status().last_error is None
        assert len(observers) == 2
    finally:
        watcher.stop()


def test_the_inotify_probe_sees_free_watches(tmp_path: Path) -> None:
    assert inotify_limit_reached(tmp_path) is False
    assert inotify_limit_reached(tmp_path / "missing") is False  # not a limit problem


def test_no_inotify_instance_left_means_polling(tmp_path: Path) -> None:
    def no_instances() -> BaseObserver:
        raise OSError(errno.EMFILE, "inotify instance limit reached")

    project = Project(id="p1", name="p", root=str(tmp_path))
    watcher = ProjectWatcher(
        project, FakeSink(), WatchConfig(), observer_factory=no_instances, poll_interval=0.1
    )
    status = watcher.start(reconcile=False, timer=False)
    try:
        assert status.state == "polling"
        assert status.mode_reason is not None
        assert "instance limit" in status.mode_reason
        assert "max_user_instances" in status.mode_reason
    finally:
        watcher.stop()
