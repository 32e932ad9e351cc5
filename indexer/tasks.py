"""The single writer: a durable task queue (``indexer._task_queue``) drained by one thread.

Every index write (chunks, documents, vectors, project deletion) happens on the worker
thread; searches never wait for it. A task runs phase 1 (walk, chunk, write) and then
stays ``running`` in phase ``embed`` until its project's vectors are all in (a task that
leaves nothing to embed ends with its phase 1); phase 2 yields to any newly queued task,
so a saved file is searchable at once even while a large backlog embeds. A task is
``done`` once its files are searchable and every chunk of its project has a vector (or was
refused by the model): a task that changed nothing while another embeds the project waits
for that, in phase ``embed``, showing the same progress.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import threading
import time
from collections.abc import Callable

from indexer._embed_queue import MAX_ERRORS, AnyEvent, EmbedQueue
from indexer._runs import task_embedded, task_eta, task_percent, task_searchable
from indexer._task_queue import NO_CHANGE, YIELDED, _now, is_small
from indexer.activity import SearchActivity
from indexer.config import LodeConfig
from indexer.embed import Embedder
from indexer.errors import NotFoundError
from indexer.events import EventHub
from indexer.health import StorageHealth, is_storage_failure
from indexer.models import IndexProgress, Task
from indexer.pipeline import run_lexical_phase
from indexer.priority import lower_thread_priority
from indexer.storage_failure import describe_storage_failure, storage_cause
from indexer.store import OPTIMIZE_AFTER_ROWS, Store

__all__ = ["NO_CHANGE", "IndexWorker", "task_embedded", "task_eta", "task_percent", "task_searchable"]

log = logging.getLogger(__name__)

#: The worker folds new rows into the indexes (``maybe_optimize``) once it has had no work
#: for this long: an optimize holds the write lock for seconds, which a file saved during a
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


class IndexWorker(EmbedQueue):
    """Runs index tasks one at a time on its own thread; the only writer of index rows."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        config: LodeConfig,
        on_change: Callable[[str], None] | None = None,
        activity: SearchActivity | None = None,
        storage: StorageHealth | None = None,
        events: EventHub | None = None,
    ) -> None:
        super().__init__(store, embedder, config, on_change, activity, storage, events)
        self._last_verify = -math.inf
        #: When the writer's pause after a storage failure ends.
        self._resume_at = -math.inf
        self._thread: threading.Thread | None = None
        self._last_work = time.monotonic()
        self._last_prune = -math.inf
        #: The paths each full re-index that stepped aside for a save has cut (its next
        #: run cuts the others only).
        self._full_done: dict[str, set[str]] = {}
        self._aside: set[str] = set()

    # ---- lifecycle ----------------------------------------------------------------
    def start(self) -> None:
        """Requeue interrupted tasks and start the worker thread (whose maintenance jobs
        stop for a waiting save: ``Maintenance.save_waits``)."""
        self.store.maintenance.save_waits = self._save_waiting.is_set
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
        self._model.close()
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
                    if not self._save_waiting.is_set():  # saves leave small fragments
                        self.store.maintenance.compact_small_fragments()
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
            # idle: fold in even a few hundred rows (each one unfolded slows every full-text query)
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

    def _run_phase1(self, task: Task) -> None:
        """Phase 1 of a task; a full re-index that steps aside keeps the paths it has cut."""
        full_done = self._full_done.setdefault(task.id, set()) if task.full else None
        self._phase1(task, full_done)
        stepped_aside = task.id in self._aside
        self._aside.discard(task.id)
        if full_done is not None and not stepped_aside and task.id not in self._retrying:
            self._full_done.pop(task.id, None)  # no next run

    def _phase1(self, task: Task, full_done: set[str] | None) -> None:
        """Run it (``_step_aside`` notes a task queued again for a save)."""
        cancel = self._cancel.setdefault(task.id, threading.Event())
        # whole-project work steps aside for a save (of any project) between files, and
        # goes on after it (a full re-index too: its next run cuts only what it did not)
        steps_aside = task.kind == "index" and not is_small(task)
        stop = AnyEvent(cancel, self._save_waiting) if steps_aside else cancel
        try:
            if task.kind == "delete":
                self._delete_project(task)
                return
            project = self.store.projects.get(task.project_id)
            state = IndexProgress()
            report = run_lexical_phase(
                self.store, self.embedder, project, self.config, paths=task.paths, full=task.full,
                state=state, progress=lambda s: self._progress(task.id, s), cancel=stop,
                full_done=full_done,
            )  # fmt: skip
            if steps_aside and not cancel.is_set() and state.files_done < state.files_total:
                self._step_aside(task)
                return
            if task.id in self._checks:  # it changed nothing: no task to show
                self._drop_check(task.id, state)
                return
            errors = [f"{f.path}: {f.reason}" for f in report.files_failed][:MAX_ERRORS]
            task = dataclasses.replace(self._live[task.id], errors=tuple(errors))
            if cancel.is_set():
                self._finish(task, "cancelled")
                return
            self._notify(task.project_id)
            if not state.files_changed:
                task = dataclasses.replace(task, message=NO_CHANGE)
            if report.chunks_written <= report.embedding_cache_hits:
                # every chunk it wrote has its vector (or it only removed files): done, unless
                # the project still has chunks without one (another task embeds them, or an
                # earlier process left them): "done" means embedded, so it waits for them
                total = self.store.chunks.count(task.project_id)
                embedded = self.store.chunks.count(task.project_id, embedded=True)
                task = dataclasses.replace(task, chunks_total=total, chunks_embedded=embedded)
                if embedded >= total or not self._awaits_vectors(task.project_id):
                    self._finish(task, "done")
                    return
            # every file is written and lexically searchable (phase 1 made the full-text
            # indexes): say so; a big run folds its rows into the indexes before phase 2
            # rewrites them (small ones wait for a quiet moment: ``_maintain``)
            self._publish(dataclasses.replace(task, phase="embed"), force=True)
            if not self._save_waiting.is_set():  # a save waiting goes first; phase 2 folds in later
                self.store.maintenance.maybe_optimize(rows=OPTIMIZE_AFTER_ROWS, seconds=math.inf)
        except NotFoundError as exc:
            if task.id in self._checks:  # the project went away meanwhile
                self._drop_check(task.id, IndexProgress())
                return
            self._finish(dataclasses.replace(task, message=str(exc)), "failed")
        except Exception as exc:
            self._phase1_failed(task, exc)

    def _step_aside(self, task: Task) -> None:
        """A whole-project task stopped between files for a save: queued again as it was
        (its next run skips the files this one wrote), to run once the save is done."""
        self._aside.add(task.id)
        with self._lock:
            if task.id in self._checks:  # a check that changed nothing yet stays one
                self._checks[task.id] = dataclasses.replace(task, status="queued", phase="queued")
                return
            live = self._live.pop(task.id, task)
            queued = dataclasses.replace(
                live, status="queued", phase="queued", message=YIELDED, updated_at=_now()
            )
        self._save_queued(queued)
        self._emit_task(queued, force=True)

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
        self._emit_task(queued, force=True)
        try:  # shown queued, when the store takes the write (else its row says running)
            self.store.tasks.save(queued)
        except Exception as again:
            if not is_storage_failure(again):
                raise
            log.debug("the task %s stays queued in memory", task.id, exc_info=again)

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
