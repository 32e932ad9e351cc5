"""The index writer's queue of tasks: what is queued, running, or a check not yet shown.

Tasks live in the store's ``tasks`` table, so a restart resumes queued and interrupted
work; a running task's progress is kept here and saved now and then. The watcher's
whole-project diffs come through ``submit_check``: such a run stays out of the task list
until it changes something, and one that finds nothing changed leaves no task behind.
``indexer.tasks.IndexWorker`` runs what this queue holds, on its own thread.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from indexer.errors import ConflictError
from indexer.events import EventHub, IndexEvent
from indexer.health import StorageHealth, is_storage_failure
from indexer.ids import uuid7
from indexer.models import IndexProgress, Task
from indexer.storage_failure import storage_error
from indexer.store import Store

__all__ = ["NO_CHANGE", "TaskQueue", "is_small"]

#: A queued task with more paths than this becomes a whole-project diff (cheap when
#: nothing else changed, and bounded in memory).
_MAX_TASK_PATHS = 2000
_SAVE_EVERY = 1.0
#: The message of a task whose phase 1 found every file as indexed (it wrote nothing).
NO_CHANGE = "no change"
#: A live task's progress is announced (``EventHub``) at most this often (seconds),
#: a project's embedding coverage too; a new status or phase at once.
_EMIT_EVERY = 0.25
#: Checks (``submit_check``) that found nothing, remembered for ``get`` (the newest).
_KEEP_CHECKS = 64
#: A task of at most this many paths is a save (the watcher's batch of edited files): it
#: runs before whole-project work, whatever its project, and such work steps aside for it.
SMALL_TASK_PATHS = 64
#: The message of a whole-project task that stepped aside for a save (``IndexWorker``).
YIELDED = "stepped aside for a save; goes on where it was"


def is_small(task: Task) -> bool:
    """True for a save: an index task naming a few paths (not a whole project)."""
    return task.kind == "index" and 0 < len(task.paths) <= SMALL_TASK_PATHS


def _now() -> datetime:
    return datetime.now(UTC)


class TaskQueue:
    """The tasks of one index: queued, running with their live progress, or just finished."""

    def __init__(
        self,
        store: Store,
        on_change: Callable[[str], None] | None = None,
        storage: StorageHealth | None = None,
        events: EventHub | None = None,
    ) -> None:
        self.store = store
        #: Where tasks' progress and the index's changes are announced as they happen.
        self.events = events or EventHub()
        #: When each live task and project was last announced (and in which status/phase).
        self._emitted: dict[str, tuple[float, str, str]] = {}
        #: The last storage failure (shared with the server's /health); cleared by a task
        #: that completes, or by a check of the store that passes (``IndexWorker._maintain``).
        self.storage = storage or StorageHealth()
        self.last_error: str | None = None
        #: The writer's pause after a storage failure that waits (0: none).
        self._backoff = 0.0
        #: Tasks queued again after such a failure, kept here: their row may not be
        #: writable until the storage is back.
        self._retrying: dict[str, Task] = {}
        self._on_change = on_change
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._preempt = threading.Event()
        #: Set when a save is queued: a whole-project phase 1 steps aside for it.
        self._save_waiting = threading.Event()
        self._cancel: dict[str, threading.Event] = {}
        self._live: dict[str, Task] = {}
        #: Whole-project checks (``submit_check``) not yet shown as tasks: queued or running
        #: until their run changes something (then they are published), or ends (dropped).
        self._checks: dict[str, Task] = {}
        #: Checks that found nothing to change, as ``get`` answers for them.
        self._unchanged: OrderedDict[str, Task] = OrderedDict()
        self._paused: set[str] = set()
        self._rates: dict[str, float] = {}
        self._last_save = 0.0

    def submit(
        self, project_id: str, paths: Sequence[str] = (), full: bool = False, kind: str = "index"
    ) -> Task:
        """Queue work for a project; a request while one is still queued joins it."""
        with self._lock:
            retrying = [t for t in self._retrying.values() if t.project_id == project_id and t.kind == kind]
            queued = retrying or [t for t in self.store.tasks.all(project_id, ("queued",)) if t.kind == kind]
            if queued:
                task = queued[0]
                merged_paths: tuple[str, ...] = (
                    () if not task.paths or not paths else tuple(sorted({*task.paths, *paths}))
                )
                if len(merged_paths) > _MAX_TASK_PATHS:
                    merged_paths = ()
                task = dataclasses.replace(
                    task, paths=merged_paths, full=task.full or full, updated_at=_now()
                )
            else:
                stamp = _now()
                wanted = tuple(paths) if len(paths) <= _MAX_TASK_PATHS else ()
                task = Task(id=uuid7(), project_id=project_id, kind=kind, paths=wanted, full=full,
                            created_at=stamp, updated_at=stamp)  # fmt: skip
            if task.id in self._retrying:
                self._retrying[task.id] = task  # its row is written when it starts again
            else:
                self._save_queued(task)
            self._emit_task(task, force=True)
            self._paused.discard(project_id)
            if kind == "delete":
                for live in list(self._live.values()):  # the worker changes it without the lock
                    if live.project_id == project_id:
                        self._cancel.setdefault(live.id, threading.Event()).set()
            if is_small(task):
                self._save_waiting.set()
        self._preempt.set()
        self._wake.set()
        return task

    def _save_queued(self, task: Task) -> None:
        """Write a queued task's row; a storage failure is one for ``/health`` too, and
        the caller's ``StorageError`` (a watcher keeps its batch and tries again)."""
        try:
            self.store.tasks.save(task)
        except Exception as exc:
            if not is_storage_failure(exc):
                raise
            self.storage.failed("queueing a task", exc, writing=True)
            raise storage_error(exc, self.store.path) from exc

    def submit_check(self, project_id: str) -> Task:
        """Queue a whole-project diff that becomes a task only once it changes something
        (the watcher's start-up reconcile and rescans): a check that finds every file as
        indexed leaves no task. Joins a queued task of the project, or a queued check."""
        with self._lock:
            if any(t.kind == "index" for t in self.store.tasks.all(project_id, ("queued",))):
                joined = True
            else:
                joined = False
                waiting = [t for t in self._checks.values() if t.project_id == project_id]
                if waiting and waiting[0].status == "queued":
                    return waiting[0]
                stamp = _now()
                check = Task(id=uuid7(), project_id=project_id, created_at=stamp, updated_at=stamp)
                self._checks[check.id] = check
        if joined:
            return self.submit(project_id)
        self._wake.set()
        return check

    def get(self, task_id: str) -> Task:
        """A task with its live progress (a check that found nothing: ``done``, no files)."""
        live = (
            self._live.get(task_id)
            or self._checks.get(task_id)
            or self._retrying.get(task_id)
            or self._unchanged.get(task_id)
        )
        return live if live is not None else self.store.tasks.get(task_id)

    def list(self, project_id: str | None = None, limit: int | None = 100) -> list[Task]:
        """Tasks newest first, live ones with current progress."""
        tasks = self.store.tasks.all(project_id, limit=limit)
        return [self._live.get(t.id) or self._retrying.get(t.id) or t for t in tasks]

    def current(self, project_id: str) -> Task | None:
        """The task the writer works on for a project: a running task in phase 1, else the
        running task phase 2 embeds under (the oldest), else the next queued one; None when
        no task of the project is live."""
        found = {t.id: t for t in self.list(project_id, limit=50) if t.live}
        # a check that found work is live before its row is written
        found.update({t.id: t for t in list(self._live.values()) if t.project_id == project_id})
        live = list(found.values())
        if not live:
            return None

        def age(task: Task) -> tuple[bool, datetime | None]:
            return task.created_at is None, task.created_at

        running = [t for t in live if t.status == "running"]
        chunking = [t for t in running if t.phase != "embed"]
        return min(chunking or running or live, key=age)

    def rate(self, task_id: str) -> float:
        """Current embedding rate (chunks/s) of a running task."""
        return self._rates.get(task_id, 0.0)

    def cancel(self, task_id: str) -> Task:
        """Cancel a queued or running task (a running one stops after its current batch)."""
        with self._lock:  # the worker starts a queued task under this lock too
            task = self.get(task_id)
            if not task.live:
                raise ConflictError(f"task {task_id} is already {task.status}")
            if task_id in self._checks:  # a check not shown as a task: nothing to record
                self._cancel.setdefault(task_id, threading.Event()).set()
                if task.status == "queued":
                    del self._checks[task_id]
                return dataclasses.replace(task, status="cancelled", phase="cancelled", finished_at=_now())
            if task.status == "queued":
                task = dataclasses.replace(task, status="cancelled", phase="cancelled", finished_at=_now())
                self.store.tasks.save(task)
                self._retrying.pop(task_id, None)
                self._emit_task(task, force=True)
                return task
            self._paused.add(task.project_id)
            event = self._cancel.get(task_id)
            if event is not None:
                event.set()
            self._preempt.set()
        return self.get(task_id)

    def wait(self, task_id: str, timeout: float = 60.0, phase1_only: bool = False) -> Task:
        """Block until a task ends (or, with ``phase1_only``, until it is searchable)."""
        deadline = time.monotonic() + timeout
        while True:
            task = self.get(task_id)
            if not task.live or (phase1_only and task.phase == "embed"):
                return task
            if time.monotonic() > deadline:
                return task
            time.sleep(0.05)

    def _start_next(self) -> Task | None:
        """Mark the next queued task running: deletes first (quick, and their callers wait),
        then saves (``is_small``: a file saved in any project is searchable before another
        project's whole-project work goes on), then the oldest. Under the queue's lock, so
        a cancel or a request that would join a queued task sees it either still queued or
        already running."""
        with self._lock:
            retrying = list(self._retrying.values())
            queued = [t for t in self.store.tasks.all(statuses=("queued",)) if t.id not in self._retrying]
            queued += [t for t in self._checks.values() if t.status == "queued"]
            queued += retrying
            if not queued:
                return None
            task = min(
                queued,
                key=lambda t: (t.kind != "delete", not is_small(t), t.created_at is None, t.created_at),
            )
            if not any(is_small(t) for t in queued if t is not task):
                self._save_waiting.clear()
            task = dataclasses.replace(
                task, status="running", phase="chunk", started_at=task.started_at or _now()
            )
            self._cancel.setdefault(task.id, threading.Event())
            if task.id in self._checks:
                self._checks[task.id] = task  # shown once it changes something (``_progress``)
            else:
                self._publish(task, force=True)
            self._retrying.pop(task.id, None)
            return task

    def _progress(self, task_id: str, state: IndexProgress) -> None:
        check = self._checks.get(task_id)
        if check is not None:
            if not state.files_changed:
                return
            # the check found work: from now on it is a task like any other
            with self._lock:
                self._checks.pop(task_id, None)
                self._live[task_id] = check
        task = self._live.get(task_id)
        if task is None:
            return
        if state.changed_paths:
            paths = tuple(state.changed_paths)
            self.events.publish(IndexEvent("files", task.project_id, paths=paths))
        phase = state.phase if state.phase in ("chunk", "embed") else task.phase
        if phase == "chunk":
            task = dataclasses.replace(
                task,
                files_total=state.files_total,
                files_done=state.files_done,
                chunks_done=state.chunks_done,
            )
        else:
            task = dataclasses.replace(
                task, chunks_total=state.chunks_total, chunks_embedded=state.chunks_embedded
            )
            self._rates[task_id] = state.embed_rate
            self._share_embedding(task, state)
            self._emit_coverage(task.project_id, state.chunks_total, state.chunks_embedded)
        self._publish(dataclasses.replace(task, phase=phase))

    def _share_embedding(self, task: Task, state: IndexProgress) -> None:
        """Phase 2 embeds a project's whole backlog under its oldest task: the project's
        other tasks waiting in phase ``embed`` end with it, so they show its progress."""
        for other in list(self._live.values()):
            if other.id != task.id and other.project_id == task.project_id and other.phase == "embed":
                self._live[other.id] = dataclasses.replace(
                    other, chunks_total=state.chunks_total, chunks_embedded=state.chunks_embedded,
                    updated_at=_now(),
                )  # fmt: skip
                self._rates[other.id] = state.embed_rate
                self._emit_task(self._live[other.id])

    def _publish(self, task: Task, force: bool = False) -> None:
        task = dataclasses.replace(task, updated_at=_now())
        self._live[task.id] = task
        now = time.monotonic()
        if force or now - self._last_save >= _SAVE_EVERY:
            self._last_save = now
            self.store.tasks.save(task)
        self._emit_task(task, force)

    def _emit_task(self, task: Task, force: bool = False) -> None:
        """Announce a task: at once when its status or phase changed (or ``force``), else
        at most every ``_EMIT_EVERY`` seconds."""
        now = time.monotonic()
        last = self._emitted.get(task.id)
        same = last is not None and (last[1], last[2]) == (task.status, task.phase)
        if not force and same and last is not None and now - last[0] < _EMIT_EVERY:
            return
        if task.live:
            self._emitted[task.id] = (now, task.status, task.phase)
        else:
            self._emitted.pop(task.id, None)
        self.events.publish(
            IndexEvent("task", task.project_id, task=task, rate=self._rates.get(task.id, 0.0))
        )

    def _emit_coverage(self, project_id: str, total: int, embedded: int, force: bool = False) -> None:
        """Announce a project's embedding coverage (at most every ``_EMIT_EVERY`` seconds)."""
        now = time.monotonic()
        key = f"coverage:{project_id}"
        last = self._emitted.get(key)
        if not force and last is not None and now - last[0] < _EMIT_EVERY:
            return
        self._emitted[key] = (now, "", "")
        share = round(embedded / total, 4) if total else 1.0
        self.events.publish(
            IndexEvent(
                "coverage", project_id, chunks_total=total, chunks_embedded=embedded, semantic_coverage=share
            )
        )

    def _drop_check(self, task_id: str, state: IndexProgress) -> None:
        """End a check that changed nothing: no task row, ``get`` answers ``done``."""
        with self._lock:
            check = self._checks.pop(task_id, None)
        self._cancel.pop(task_id, None)
        if check is None:
            return
        stamp = _now()
        self._unchanged[task_id] = dataclasses.replace(
            check, status="done", phase="done", files_total=state.files_total, message=NO_CHANGE,
            finished_at=stamp, updated_at=stamp,
        )  # fmt: skip
        while len(self._unchanged) > _KEEP_CHECKS:
            self._unchanged.popitem(last=False)

    def _finish(self, task: Task, status: str) -> None:
        if status == "done":  # the store was written whole: what failed before is over
            self.storage.recovered()
            self.last_error = None
            self._backoff = 0.0
        task = dataclasses.replace(task, status=status, phase=status, finished_at=_now(), updated_at=_now())
        self.store.tasks.save(task)
        self._live.pop(task.id, None)
        self._cancel.pop(task.id, None)
        self._emit_task(task, force=True)
        self._rates.pop(task.id, None)

    def _notify(self, project_id: str) -> None:
        """The project's index changed: tell ``on_change``, and announce its coverage."""
        if self._on_change is not None:
            self._on_change(project_id)
        if self.events.listening:
            try:
                self.store.projects.get(project_id)
                total = self.store.chunks.count(project_id)
                embedded = self.store.chunks.count(project_id, embedded=True)
            except Exception:  # the project was deleted (or the store failed): nothing to announce
                return
            self._emit_coverage(project_id, total, embedded, force=True)
