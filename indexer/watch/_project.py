"""One project's watcher: an observer, a debouncer, a timer thread, and its status.

States: ``watching`` (native events), ``polling`` (fallback when the OS refuses more
watches), ``stopped``, ``error`` (the folder vanished, or no observer could start).
On start it asks for a whole-project diff (what changed while lode was not running),
then one task per debounced batch, plus a whole-project diff every
``rescan_seconds`` as the safety net for missed events (and one after the kernel dropped
events). Every write goes through the single writer: batches through ``submit`` (a
submit while a task is still queued joins it), whole-project diffs through
``submit_check``, which shows a task only if the diff finds something to change. A batch
the writer could not take (its storage failed: a full disk) is kept and sent again after
1 s, 2 s, 4 s… (at most a minute apart), not left to the next rescan.
"""

from __future__ import annotations

import errno
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from watchdog.observers.api import BaseObserver

from indexer.config import WatchConfig
from indexer.models import Project, Task
from indexer.watch._debouncer import CHECKS, Batch, Clock, Debouncer
from indexer.watch._handler import ChangeHandler
from indexer.watch._observer import (
    ObserverFactory,
    discard_observer,
    inotify_limit_reached,
    native_observer,
    observer_running,
    polling_observer,
    watch_limit_hint,
)

__all__ = ["BatchCallback", "ProjectWatcher", "TaskSink", "WatchStatus"]

log = logging.getLogger(__name__)

#: Longest sleep of the timer thread when nothing is due.
_IDLE_WAKE = 60.0
#: While in error (the folder vanished), how often the timer looks for the folder's return.
_RECOVER_POLL = 1.0
_JOIN_TIMEOUT = 10.0
#: A batch the writer refused is sent again after this long, doubling up to ``_RETRY_MAX``.
_RETRY_FIRST = 1.0
_RETRY_MAX = 60.0


class TaskSink(Protocol):
    """Where batches go: the single writer (``IndexWorker`` satisfies this)."""

    def submit(self, project_id: str, paths: Sequence[str] = ()) -> Task:
        """Queue a partial update of ``paths`` (empty: the whole project's incremental diff)."""
        ...

    def submit_check(self, project_id: str) -> Task:
        """Queue a whole-project diff that becomes a task only if it changes something."""
        ...


#: Called after each batch is submitted, with the batch and the (possibly merged) task.
BatchCallback = Callable[[Batch, Task], None]


@dataclass(frozen=True, slots=True)
class WatchStatus:
    """What the watcher of one project is doing (shown by ``/api/v1/status``)."""

    project_id: str
    """The project watched."""
    root: str
    """Its folder."""
    state: str
    """``watching``, ``polling``, ``stopped`` or ``error``."""
    pending_events: int = 0
    """Events received but not yet sent as a task."""
    pending_paths: int = 0
    """Distinct paths in the pending batch (0 when it covers the whole project)."""
    last_event_at: datetime | None = None
    """When the last relevant file event arrived."""
    last_update_at: datetime | None = None
    """When the last batch was handed to the writer."""
    last_task_id: str | None = None
    """The task that received the last batch."""
    batches: int = 0
    """Batches sent since start (including the start and rescan diffs)."""
    last_error: str | None = None
    """The last problem met, if any."""
    mode_reason: str | None = None
    """Why the watcher polls instead of receiving events (None when it does not)."""


class ProjectWatcher:
    """Watches one project's folder and turns its changes into index tasks."""

    def __init__(
        self,
        project: Project,
        sink: TaskSink,
        config: WatchConfig,
        *,
        clock: Clock = time.monotonic,
        observer_factory: ObserverFactory | None = None,
        poll_interval: float = 1.0,
        max_paths: int = 256,
        on_batch: BatchCallback | None = None,
        limit_probe: Callable[[Path], bool] = inotify_limit_reached,
    ) -> None:
        self.project = project
        self.root = Path(project.root)
        self._sink = sink
        self._rescan = float(config.rescan_seconds)
        self._clock = clock
        # by default: watches only on the folders the project's current rules keep
        self._observer_factory = observer_factory or (
            lambda: native_observer(lambda: self._handler.rules, self._overflowed)
        )
        self._poll_interval = poll_interval
        self._on_batch = on_batch
        self._limit_probe = limit_probe
        self._debouncer = Debouncer(
            quiet=config.quiet_ms / 1000,
            max_delay=config.max_delay_ms / 1000,
            max_paths=max_paths,
            clock=clock,
        )
        self._handler = ChangeHandler(
            self.root, self._mark, include=project.include, exclude=project.exclude,
            on_root_gone=self._root_gone, on_error=self._handler_failed,
        )  # fmt: skip
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._observer: BaseObserver | None = None
        self._thread: threading.Thread | None = None
        self._started = False
        self._next_rescan: float | None = None
        self._state = "stopped"
        self._reason: str | None = None
        self._error: str | None = None
        self._last_event_at: datetime | None = None
        self._last_update_at: datetime | None = None
        self._last_task_id: str | None = None
        self._batches = 0
        #: A batch the writer refused, when it is sent again, and the pause before that.
        self._retry: Batch | None = None
        self._retry_at: float | None = None
        self._retry_delay = 0.0

    # ---- lifecycle -----------------------------------------------------------------
    def start(self, reconcile: bool = True, timer: bool = True) -> WatchStatus:
        """Start watching; with ``reconcile``, first send the whole-project diff.

        ``timer=False`` runs no timer thread: the caller drives ``tick()`` (tests with
        an injected clock).
        """
        if self._started:
            return self.status()
        self._started = True
        self._stopping.clear()
        self._start_observer()
        if self._rescan > 0:
            self._next_rescan = self._clock() + self._rescan
        if timer:
            name = f"lode-watch-{self.project.name}"
            self._thread = threading.Thread(target=self._run, name=name, daemon=True)
            self._thread.start()
        if reconcile:
            self._send(self._whole_project("reconcile"))
        return self.status()

    def stop(self, flush: bool = True) -> None:
        """Stop watching; with ``flush``, send what is pending first (it is durable)."""
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(_JOIN_TIMEOUT)
            self._thread = None
        self._started = False
        self._drop_observer(state="stopped")
        batch = self._debouncer.take()
        if flush and batch is not None:
            self._send(batch)
        retry, self._retry, self._retry_at = self._retry, None, None
        if flush and retry is not None:
            self._send(retry)

    # ---- work ----------------------------------------------------------------------
    def tick(self, now: float | None = None) -> list[Task]:
        """Send a due batch and run a due rescan (the timer thread calls this)."""
        now = self._clock() if now is None else now
        sent: list[Task | None] = []
        if self._state == "error" and self._recover():  # back: diff what changed meanwhile
            sent.append(self._send(self._whole_project("recovered", now)))
        if self._retry is not None and self._retry_at is not None and now >= self._retry_at:
            retry, self._retry, self._retry_at = self._retry, None, None
            sent.append(self._send(retry))
        batch = self._debouncer.poll(now)
        if batch is not None:
            sent.append(self._send(batch))
        if self._next_rescan is not None and now >= self._next_rescan:
            self._next_rescan = now + self._rescan
            self._recover()
            self._check_watch_limit()
            sent.append(self._send(self._whole_project("rescan", now)))
        return [t for t in sent if t is not None]

    def flush(self) -> Task | None:
        """Send the pending batch now, due or not."""
        batch = self._debouncer.take()
        return self._send(batch) if batch is not None else None

    def status(self) -> WatchStatus:
        """A snapshot of this watcher's state."""
        with self._lock:
            state, error = self._state, self._error
            observer = self._observer
            if state in ("watching", "polling") and not observer_running(observer):
                state, error = "error", error or "the file observer stopped unexpectedly"
            return WatchStatus(
                project_id=self.project.id,
                root=str(self.root),
                state=state,
                pending_events=self._debouncer.pending_events,
                pending_paths=self._debouncer.pending_paths,
                last_event_at=self._last_event_at,
                last_update_at=self._last_update_at,
                last_task_id=self._last_task_id,
                batches=self._batches,
                last_error=error,
                mode_reason=self._reason,
            )

    # ---- observers -------------------------------------------------------------------
    def _start_observer(self) -> None:
        observer: BaseObserver | None = None
        try:
            observer = self._observer_factory()
            observer.schedule(self._handler, str(self.root), recursive=True)
            observer.start()
        except OSError as exc:
            if observer is not None:
                discard_observer(observer)
            self._fall_back(f"native file events unavailable: {exc}", exc.errno)
            return
        if self._limit_probe(self.root):
            discard_observer(observer)
            self._fall_back("inotify watch limit reached", errno.ENOSPC)
            return
        with self._lock:
            self._observer, self._state, self._reason = observer, "watching", None

    def _fall_back(self, why: str, code: int | None) -> None:
        hint = watch_limit_hint(code)
        reason = f"{why}; polling every {self._poll_interval:g}s" + (f" ({hint})" if hint else "")
        try:
            observer = polling_observer(lambda: self._handler.rules, self.root, self._poll_interval)
            observer.schedule(self._handler, str(self.root), recursive=True)
            observer.start()
        except OSError as exc:
            self._fail(f"cannot watch {self.root}: {exc}")
            return
        log.warning("watcher: %s: %s", self.root, reason)
        with self._lock:
            self._observer, self._state, self._reason, self._error = observer, "polling", reason, reason

    def _recover(self) -> bool:
        """After an error (folder gone, observer died), watch again once the folder is back
        (the error clears); True when it did."""
        if self._state != "error" or not self.root.is_dir():
            return False
        self._drop_observer(clear_error=True)
        log.info("watcher: %s is back; watching again", self.root)
        self._start_observer()
        return self._state != "error"

    def _check_watch_limit(self) -> None:
        """Sub-folders created since start may have hit the limit unnoticed: re-probe."""
        if self._state != "watching" or not self._limit_probe(self.root):
            return
        self._drop_observer()
        self._fall_back("inotify watch limit reached while watching", errno.ENOSPC)

    def _drop_observer(self, *, state: str | None = None, clear_error: bool = False) -> None:
        """Take the observer out (and set its ``state``, clear the error) and discard it."""
        with self._lock:
            observer, self._observer = self._observer, None
            self._state = state or self._state
            self._error = None if clear_error else self._error
        if observer is not None:
            discard_observer(observer)

    # ---- the timer thread ----------------------------------------------------------
    def _run(self) -> None:
        while not self._stopping.is_set():
            self._wake.clear()
            try:
                self.tick()
            except Exception as exc:  # keep the timer alive; the status shows the failure
                log.exception("watcher: %s: tick failed", self.root)
                self._note_error(f"timer failed: {exc!r}")
            self._wake.wait(self._sleep_for())

    def _sleep_for(self) -> float:
        now = self._clock()
        due = [t for t in (self._debouncer.due_at(), self._next_rescan, self._retry_at) if t is not None]
        if self._state == "error":
            due.append(now + _RECOVER_POLL)
        return min(_IDLE_WAKE, max(0.0, min(due) - now)) if due else _IDLE_WAKE

    # ---- callbacks -------------------------------------------------------------------
    def _mark(self, path: str) -> None:
        if self._debouncer.add(path):
            self._wake.set()
        self._last_event_at = datetime.now(UTC)

    def _send(self, batch: Batch) -> Task | None:
        if not self.root.is_dir():
            # Never diff a vanished root: that would delete the project's whole index.
            self._fail(f"project folder {self.root} is missing; not updating the index")
            return None
        with self._send_lock:
            try:
                if batch.whole_project and batch.reason in CHECKS:
                    task = self._sink.submit_check(self.project.id)
                else:
                    task = self._sink.submit(self.project.id, batch.submit_paths)
            except Exception as exc:
                self._keep_for_retry(batch, exc)
                return None
            self._retry_delay = 0.0
            with self._lock:
                self._last_update_at = datetime.now(UTC)
                self._last_task_id = task.id
                self._batches += 1
                if self._state != "error" and self._error != self._reason:
                    self._error = None  # what went wrong before (a failed submit) is over
        if self._on_batch is not None:
            try:
                self._on_batch(batch, task)
            except Exception:
                log.exception("watcher: batch callback failed")
        return task

    def _keep_for_retry(self, batch: Batch, exc: Exception) -> None:
        """The writer refused a batch: keep it (with any other refused one) and send it
        again after a pause that doubles each time."""
        self._retry_delay = min(max(self._retry_delay * 2, _RETRY_FIRST), _RETRY_MAX)
        self._retry = batch if self._retry is None else self._retry.merge(batch)
        self._retry_at = self._clock() + self._retry_delay
        log.warning(
            "watcher: %s: cannot queue a task (trying again in %.0f s): %s", self.root, self._retry_delay, exc
        )
        self._note_error(f"cannot queue a task: {exc}")
        self._wake.set()  # the timer thread learns the retry's time

    def _whole_project(self, reason: str, now: float | None = None) -> Batch:
        return Batch.whole(reason, self._clock() if now is None else now)

    def _overflowed(self) -> None:
        """The kernel dropped events (the observer's thread): diff the whole project."""
        if not self._stopping.is_set():
            self._send(self._whole_project("overflow"))

    def _root_gone(self) -> None:
        self._fail(f"project folder {self.root} was deleted or moved")

    def _handler_failed(self, exc: BaseException) -> None:
        self._note_error(f"event handling failed: {exc!r}")

    def _note_error(self, message: str) -> None:
        with self._lock:
            self._error = message

    def _fail(self, message: str) -> None:
        with self._lock:
            self._error = message
            if not self._stopping.is_set():
                self._state = "error"
