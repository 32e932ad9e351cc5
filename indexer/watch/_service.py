"""All projects' watchers: started with the server (or ``lode watch``), one per project."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from types import TracebackType

from indexer.config import WatchConfig
from indexer.models import Project, Task
from indexer.watch._debouncer import Batch, Clock
from indexer.watch._observer import ObserverFactory, inotify_limit_reached
from indexer.watch._project import ProjectWatcher, TaskSink, WatchStatus

__all__ = ["WatchService"]


class WatchService:
    """Starts, stops and reports a ``ProjectWatcher`` per registered project."""

    def __init__(
        self,
        sink: TaskSink,
        config: WatchConfig,
        *,
        clock: Clock = time.monotonic,
        observer_factory: ObserverFactory | None = None,
        poll_interval: float = 1.0,
        max_paths: int = 256,
        on_batch: Callable[[Project, Batch, Task], None] | None = None,
        limit_probe: Callable[[Path], bool] = inotify_limit_reached,
    ) -> None:
        self._sink = sink
        self._config = config
        self._clock = clock
        self._observer_factory = observer_factory
        self._poll_interval = poll_interval
        self._max_paths = max_paths
        self._on_batch = on_batch
        self._limit_probe = limit_probe
        self._lock = threading.Lock()
        self._watchers: dict[str, ProjectWatcher] = {}

    def start(self, projects: Iterable[Project]) -> None:
        """Watch every project given (each first reconciles what changed meanwhile)."""
        for project in projects:
            self.add(project)

    def add(self, project: Project, reconcile: bool = True) -> WatchStatus:
        """Watch one more project (no-op if it is watched already)."""
        with self._lock:
            watcher = self._watchers.get(project.id)
            if watcher is None:
                watcher = ProjectWatcher(
                    project, self._sink, self._config, clock=self._clock,
                    observer_factory=self._observer_factory, poll_interval=self._poll_interval,
                    max_paths=self._max_paths, on_batch=self._callback_for(project),
                    limit_probe=self._limit_probe,
                )  # fmt: skip
                self._watchers[project.id] = watcher
            else:
                return watcher.status()
        return watcher.start(reconcile=reconcile)

    def remove(self, project_id: str, flush: bool = False) -> None:
        """Stop watching a project (default: drop its pending events, e.g. it is being deleted)."""
        with self._lock:
            watcher = self._watchers.pop(project_id, None)
        if watcher is not None:
            watcher.stop(flush=flush)

    def stop(self) -> None:
        """Stop every watcher, sending what is pending (tasks are durable)."""
        with self._lock:
            watchers = list(self._watchers.values())
            self._watchers.clear()
        for watcher in watchers:
            watcher.stop(flush=True)

    def get(self, project_id: str) -> WatchStatus | None:
        """The status of one project's watcher (None when it is not watched)."""
        with self._lock:
            watcher = self._watchers.get(project_id)
        return watcher.status() if watcher is not None else None

    def status(self) -> dict[str, WatchStatus]:
        """project id → status, for every watched project."""
        with self._lock:
            watchers = dict(self._watchers)
        return {pid: w.status() for pid, w in watchers.items()}

    def flush(self) -> list[Task]:
        """Send every pending batch now (tests, shutdown)."""
        with self._lock:
            watchers = list(self._watchers.values())
        return [t for t in (w.flush() for w in watchers) if t is not None]

    def __enter__(self) -> WatchService:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _callback_for(self, project: Project) -> Callable[[Batch, Task], None] | None:
        on_batch = self._on_batch
        if on_batch is None:
            return None
        return lambda batch, task: on_batch(project, batch, task)
