"""The single writer: a durable task queue drained by one worker thread.

Every index write (chunks, documents, vectors, project deletion) happens on the worker
thread; searches never wait for it. Tasks live in the store's ``tasks`` table, so a
restart resumes queued and interrupted work. A task runs phase 1 (walk, chunk, write)
and then stays ``running`` in phase ``embed`` until its project's vectors are all in;
phase 2 yields to any newly queued task, so a saved file is searchable at once even
while a large backlog embeds.

The watcher's whole-project diffs (at start, after a gap, every few minutes) come through
``submit_check``: such a run stays out of the task list until it changes something, and
one that finds nothing changed leaves no task behind. A task that leaves nothing to embed
ends with its phase 1.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from indexer._runs import task_eta, task_percent
from indexer.activity import SearchActivity
from indexer.config import LodeConfig
from indexer.embed import Embedder
from indexer.errors import ConflictError, NotFoundError
from indexer.health import StorageHealth, is_storage_failure
from indexer.ids import uuid7
from indexer.models import IndexProgress, Task
from indexer.pipeline import run_lexical_phase
from indexer.priority import lower_thread_priority
from indexer.storage_failure import describe_storage_failure, storage_cause, storage_error
from indexer.store import OPTIMIZE_AFTER_ROWS, Store
from indexer.vectorizer import embed_backlog

__all__ = ["IndexWorker", "task_eta", "task_percent"]

log = logging.getLogger(__name__)

_MAX_ERRORS = 50
#: A queued task with more paths than this becomes a whole-project diff (cheap when
#: nothing else changed, and bounded in memory).
_MAX_TASK_PATHS = 2000
_SAVE_EVERY = 1.0
#: The worker folds new rows into the indexes (``maybe_optimize``) once it has had no work
#: for this long: an optimize holds the write lock for ~1-4 s, which a file saved during a
#: burst of edits should not wait behind.
_QUIET_SECONDS = 2.0
#: Finished tasks kept (the newest): the watcher queues one per save, and every read of the
#: queue scans the table. Older ones are dropped when the worker is idle, hourly at most.
KEEP_FINISHED_TASKS = 1000
_PRUNE_EVERY = 3600.0
#: While a storage failure stands, the idle writer checks the store this often (seconds).
_VERIFY_EVERY = 60.0
#: After a write failed for a cause that waits for someone (a full disk, refused
#: credentials, an object store that does not answer: ``StorageCause.waits``), the writer
#: pauses this long before it writes again, doubling after each failure up to
#: ``_BACKOFF_MAX``; the task that met it is queued again rather than failed.
_BACKOFF_FIRST = 1.0
_BACKOFF_MAX = 60.0
#: How long a stop waits for a write unit in progress (a unit takes well under a second).
_UNIT_WAIT = 30.0
#: Checks (``submit_check``) that found nothing, remembered for ``get`` (the newest).
_KEEP_CHECKS = 64


def _now() -> datetime:
    return datetime.now(UTC)


class IndexWorker:
    """Runs index tasks one at a time on its own thread; the only writer of index rows."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        config: LodeConfig,
        on_change: Callable[[str], None] | None = None,
        activity: SearchActivity | None = None,
        storage: StorageHealth | None = None,
    ) -> None:
        self.store = store
        #: The last storage failure (shared with the server's /health); cleared by a task
        #: that completes, or by a check of the store that passes (``_maintain``).
        self.storage = storage or StorageHealth()
        self._last_verify = -math.inf
        #: The writer's pause after a storage failure that waits (0: none), and its end.
        self._backoff = 0.0
        self._resume_at = -math.inf
        #: Tasks queued again after such a failure, kept here: their row may not be
        #: writable until the storage is back.
        self._retrying: dict[str, Task] = {}
        #: Searches phase 2 yields the cores to (``indexer.activity``).
        self.activity = activity
        self.embedder = embedder
        self.config = config
        self._on_change = on_change
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._preempt = threading.Event()
        self._cancel: dict[str, threading.Event] = {}
        self._live: dict[str, Task] = {}
        #: Whole-project checks (``submit_check``) not yet shown as tasks: queued or running
        #: until their run changes something (then they are published), or ends (dropped).
        self._checks: dict[str, Task] = {}
        #: Checks that found nothing to change, as ``get`` answers for them.
        self._unchanged: OrderedDict[str, Task] = OrderedDict()
        self._paused: set[str] = set()
        self._rates: dict[str, float] = {}
        self._failed_chunks: set[str] = set()
        self._thread: threading.Thread | None = None
        self._last_save = 0.0
        self._last_work = time.monotonic()
        self._last_prune = -math.inf
        self.last_error: str | None = None

    # ---- lifecycle ----------------------------------------------------------------
    def start(self) -> None:
        """Requeue interrupted tasks and start the worker thread."""
        for task in self.store.tasks.all(statuses=("running",)):
            self.store.tasks.save(
                dataclasses.replace(task, status="queued", phase="queued", message="resumed")
            )
        self._thread = threading.Thread(target=self._run, name="lode-writer", daemon=True)
        self._thread.start()
        self._wake.set()

    def stop(self, timeout: float = 10.0) -> bool:
        """Stop after the current batch; queued tasks stay queued for the next start.

        Waits up to ``timeout`` seconds for the writer thread. If it still runs (inside
        the model, or an optimize), waits for the write unit in progress and lets no
        other begin (``Db.hold_writes``): the store is whole, and a process may exit
        at once, the thread with it. True when the thread ended.
        """
        self._stop.set()
        self._preempt.set()
        for event in list(self._cancel.values()):
            event.set()
        self._wake.set()
        if self._thread is None:
            return True
        self._thread.join(timeout)
        if not self._thread.is_alive():
            return True
        if not self.store.db.hold_writes(_UNIT_WAIT):
            log.warning("the index writer is still inside a write after %.0f s", _UNIT_WAIT)
        return False

    @property
    def alive(self) -> bool:
        """True while the worker thread runs."""
        return self._thread is not None and self._thread.is_alive()

    # ---- the queue -------------------------------------------------------------------
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
            self._paused.discard(project_id)
            if kind == "delete":
                for live in list(self._live.values()):  # the worker changes it without the lock
                    if live.project_id == project_id:
                        self._cancel.setdefault(live.id, threading.Event()).set()
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

    # ---- the worker thread ------------------------------------------------------------
    def _run(self) -> None:
        lower_thread_priority(self.config.server.index_nice)
        try:  # indexes an older lode left missing or built differently (e.g. the vector index)
            self.store.indexes.ensure()
            self.store.maintenance.adopt_unindexed_rows()  # rows a stopped server left unfolded
        except BaseException as exc:
            self._failed("index maintenance at start", exc)
        while not self._stop.is_set():
            pause = self._resume_at - time.monotonic()
            if pause > 0:  # backing off after a storage failure that waits for someone
                self._stop.wait(pause)
                continue
            try:
                if self._step():
                    self._last_work = time.monotonic()
                    continue
                self._maintain()
            except BaseException as exc:  # keep the writer alive (a storage panic included)
                self._failed("index worker step", exc)
            self._wake.wait(timeout=min(1.0, _QUIET_SECONDS))
            self._wake.clear()

    def _failed(self, where: str, exc: BaseException) -> None:
        """Record an error of the writer thread (re-raising what must stop it)."""
        if isinstance(exc, KeyboardInterrupt | SystemExit | GeneratorExit):
            raise exc
        if self._stop.is_set():  # the store closed under a writer left to the process's exit
            log.debug("%s failed while stopping", where, exc_info=exc)
            return
        self.last_error = repr(exc)
        if is_storage_failure(exc):
            self.storage.failed(where, exc, writing=True)
            if storage_cause(exc).waits:
                self._back_off(where, exc)
                return
        log.error("%s failed", where, exc_info=exc)

    def _back_off(self, where: str, exc: BaseException) -> None:
        """Pause the writer after a storage failure that waits for someone: one line in
        the log (no traceback: the cause is known), then 1 s, 2 s, 4 s… up to a minute."""
        self._backoff = min(max(self._backoff * 2, _BACKOFF_FIRST), _BACKOFF_MAX)
        self._resume_at = time.monotonic() + self._backoff
        self.last_error = describe_storage_failure(exc, self.store.path)
        log.error("%s failed: %s; trying again in %.0f s", where, self.last_error, self._backoff)

    def _maintain(self) -> None:
        """Fold written rows into the indexes once the worker has been idle a moment; drop
        old finished tasks now and then; while a storage failure stands, check the store
        now and then and clear it once the check passes."""
        failure = self.storage.failure
        due = time.monotonic() - self._last_verify >= _VERIFY_EVERY
        if failure is not None and not failure.unwritable and due:  # a check clears no full disk
            self._last_verify = time.monotonic()
            if self.store.check().ok:
                self.storage.checked()
                self.last_error = None
        if time.monotonic() - self._last_work >= _QUIET_SECONDS:
            # idle: fold in even a few hundred rows (each costs every full-text query ~27 µs)
            if (
                self.store.maintenance.maybe_optimize(quiet=True)
                and failure is not None
                and failure.unwritable
            ):
                self.storage.recovered()  # it wrote: the full disk (…) is over
                self.last_error = None
                self._backoff = 0.0
            self.store.versions.prune_if_due()
            if time.monotonic() - self._last_prune >= _PRUNE_EVERY:
                self._last_prune = time.monotonic()
                self.store.tasks.prune(KEEP_FINISHED_TASKS)

    def _step(self) -> bool:
        """Do one piece of work; False when there was nothing to do."""
        task = self._start_next()
        if task is not None:
            self._run_phase1(task)
            return True
        return self._run_phase2()

    def _start_next(self) -> Task | None:
        """Mark the next queued task running: deletes first (quick, and their callers wait),
        then the oldest. Under the queue's lock, so a cancel or a request that would join a
        queued task sees it either still queued or already running."""
        with self._lock:
            retrying = list(self._retrying.values())
            queued = [t for t in self.store.tasks.all(statuses=("queued",)) if t.id not in self._retrying]
            queued += [t for t in self._checks.values() if t.status == "queued"]
            queued += retrying
            if not queued:
                return None
            task = min(queued, key=lambda t: (t.kind != "delete", t.created_at is None, t.created_at))
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

    def _run_phase1(self, task: Task) -> None:
        cancel = self._cancel.setdefault(task.id, threading.Event())
        try:
            if task.kind == "delete":
                self._delete_project(task)
                return
            project = self.store.projects.get(task.project_id)
            state = IndexProgress()
            report = run_lexical_phase(
                self.store, self.embedder, project, self.config, paths=task.paths, full=task.full,
                state=state, progress=lambda s: self._progress(task.id, s), cancel=cancel,
            )  # fmt: skip
            if task.id in self._checks:  # it changed nothing: no task to show
                self._drop_check(task.id, state)
                return
            errors = [f"{f.path}: {f.reason}" for f in report.files_failed][:_MAX_ERRORS]
            task = dataclasses.replace(self._live[task.id], errors=tuple(errors))
            if cancel.is_set():
                self._finish(task, "cancelled")
                return
            self._notify(task.project_id)
            if report.chunks_written <= report.embedding_cache_hits:
                # every chunk it wrote has its vector (or it only removed files): done; a
                # backlog left by others is embedded by their tasks (or ``_drain_orphan_backlog``)
                total = self.store.chunks.count(task.project_id)
                embedded = self.store.chunks.count(task.project_id, embedded=True)
                self._finish(dataclasses.replace(task, chunks_total=total, chunks_embedded=embedded), "done")
                return
            # every file is written and lexically searchable (phase 1 made the full-text
            # indexes): say so; a big run folds its rows into the indexes before phase 2
            # rewrites them (small ones wait for a quiet moment: ``_maintain``)
            self._publish(dataclasses.replace(task, phase="embed"), force=True)
            self.store.maintenance.maybe_optimize(rows=OPTIMIZE_AFTER_ROWS, seconds=math.inf)
        except NotFoundError as exc:
            if task.id in self._checks:  # the project went away meanwhile
                self._drop_check(task.id, IndexProgress())
                return
            self._finish(dataclasses.replace(task, message=str(exc)), "failed")
        except Exception as exc:
            self._phase1_failed(task, exc)

    def _phase1_failed(self, task: Task, exc: Exception) -> None:
        """A task's phase 1 failed: resumed later when the writer is stopping, queued again
        after a storage failure that waits for someone (``_retry_later``), else failed."""
        if self._stop.is_set():  # the store closed under a stopping writer: resumed later
            log.debug("task %s stopped", task.id, exc_info=exc)
            return
        if is_storage_failure(exc) and storage_cause(exc).waits:
            self._retry_later(task, exc)
            return
        log.exception("task %s failed", task.id)
        self._checks.pop(task.id, None)  # a failure is shown as a task
        if is_storage_failure(exc):
            self.storage.failed("index task", exc, writing=True)
            self.last_error = describe_storage_failure(exc, self.store.path)
        self._finish(dataclasses.replace(task, message=repr(exc)), "failed")

    def _retry_later(self, task: Task, exc: BaseException) -> None:
        """A task met a storage failure that waits for someone (a full disk): queue it
        again, to run once the writer's pause is over, instead of failing it."""
        self._failed("index task", exc)  # /health degraded, the writer pauses
        message = f"trying again in {self._backoff:.0f} s: {self.last_error}"
        with self._lock:
            if task.id in self._checks:  # a check that changed nothing yet stays one
                self._checks[task.id] = dataclasses.replace(task, status="queued", phase="queued")
                return
            live = self._live.pop(task.id, task)
            queued = dataclasses.replace(
                live, status="queued", phase="queued", message=message, updated_at=_now()
            )
            self._retrying[task.id] = queued
        try:  # shown queued, when the store takes the write (else its row says running)
            self.store.tasks.save(queued)
        except Exception as again:
            if not is_storage_failure(again):
                raise
            log.debug("the task %s stays queued in memory", task.id, exc_info=again)

    def _run_phase2(self) -> bool:
        embedding = [t for t in self._live.values() if t.phase == "embed" and t.status == "running"]
        if not embedding:
            return self._drain_orphan_backlog()
        task = min(embedding, key=lambda t: (t.created_at is None, t.created_at))
        cancel = self._cancel.setdefault(task.id, threading.Event())
        self._preempt.clear()
        stop = _AnyEvent(cancel, self._preempt, self._stop)
        state = IndexProgress(
            files_total=task.files_total, files_done=task.files_done, chunks_done=task.chunks_done
        )
        stats = embed_backlog(
            self.store, self.embedder, task.project_id, state=state,
            progress=lambda s: self._progress(task.id, s), cancel=stop, failed=self._failed_chunks,
            activity=self.activity,
        )  # fmt: skip
        live = self._live.get(task.id, task)
        errors = (*live.errors, *(f"{f.path}: {f.reason}" for f in stats.failed))[:_MAX_ERRORS]
        live = dataclasses.replace(live, errors=errors)
        if stats.embedded or stats.cache_hits:
            self._notify(task.project_id)
        if cancel.is_set():
            self._finish(live, "cancelled")
        elif not stop.is_set():
            # every vector is in: fold in the rows a big run's last writes left outside
            # the indexes before saying done, so the searches that follow cost what later
            # ones do (small leftovers wait for ``_maintain``)
            self.store.maintenance.maybe_optimize(rows=OPTIMIZE_AFTER_ROWS, seconds=math.inf, settle=True)
            for other in [
                t for t in self._live.values() if t.project_id == task.project_id and t.phase == "embed"
            ]:
                self._finish(
                    dataclasses.replace(other, errors=errors if other.id == task.id else other.errors), "done"
                )
        return True

    def _drain_orphan_backlog(self) -> bool:
        """Embed what a previous process left without vectors (restart after a kill)."""
        for project in self.store.projects.all():
            if project.id in self._paused:
                continue
            backlog = [
                cid for cid, _ in self.store.vectors.backlog(project.id) if cid not in self._failed_chunks
            ]
            if backlog:
                self._preempt.clear()
                stop = _AnyEvent(self._preempt, self._stop)
                stats = embed_backlog(
                    self.store, self.embedder, project.id, cancel=stop, failed=self._failed_chunks,
                    activity=self.activity,
                )  # fmt: skip
                if stats.embedded or stats.cache_hits:
                    self._notify(project.id)
                if not stop.is_set():
                    self.store.maintenance.maybe_optimize(
                        rows=OPTIMIZE_AFTER_ROWS, seconds=math.inf, settle=True
                    )
                return True
        return False

    def _delete_project(self, task: Task) -> None:
        for other in [t for t in self._retrying.values() if t.project_id == task.project_id]:
            self._retrying.pop(other.id, None)
            self._finish(other, "cancelled")
        for other in self._live.values():
            if other.project_id == task.project_id and other.id != task.id:
                self._cancel.get(other.id, threading.Event()).set()
        for other in list(self._live.values()):
            if other.project_id == task.project_id and other.id != task.id:
                self._finish(other, "cancelled")
        self.store.projects.delete(task.project_id)
        self._finish(task, "done")
        self._notify(task.project_id)

    # ---- bookkeeping ------------------------------------------------------------------
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
        self._publish(dataclasses.replace(task, phase=phase))

    def _publish(self, task: Task, force: bool = False) -> None:
        task = dataclasses.replace(task, updated_at=_now())
        self._live[task.id] = task
        now = time.monotonic()
        if force or now - self._last_save >= _SAVE_EVERY:
            self._last_save = now
            self.store.tasks.save(task)

    def _drop_check(self, task_id: str, state: IndexProgress) -> None:
        """End a check that changed nothing: no task row, ``get`` answers ``done``."""
        with self._lock:
            check = self._checks.pop(task_id, None)
        self._cancel.pop(task_id, None)
        if check is None:
            return
        stamp = _now()
        self._unchanged[task_id] = dataclasses.replace(
            check, status="done", phase="done", files_total=state.files_total, message="no change",
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
        self._rates.pop(task.id, None)

    def _notify(self, project_id: str) -> None:
        if self._on_change is not None:
            self._on_change(project_id)


class _AnyEvent:
    """Set when any of several events is set (what ``embed_backlog`` polls to stop)."""

    def __init__(self, *events: threading.Event) -> None:
        self._events = events

    def is_set(self) -> bool:
        """True if one of the events is set."""
        return any(e.is_set() for e in self._events)
