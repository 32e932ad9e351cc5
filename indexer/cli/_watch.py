"""``lode watch``: index a folder, then keep its index current until Ctrl-C."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click

from indexer.cli._common import lode_command, make_config
from indexer.config import WatchConfig

if TYPE_CHECKING:
    from indexer.api import Lode
    from indexer.models import Project, Task
    from indexer.tasks import IndexWorker
    from indexer.watch import Batch, WatchStatus

__all__ = ["run_watch", "watch_command"]

_SHOWN_PATHS = 3


@lode_command("watch", "db")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--quiet-ms", type=click.IntRange(min=1), default=None,
    help=f"Send a batch once no file changed for this long, in ms (default {WatchConfig().quiet_ms}).",
)  # fmt: skip
def watch_command(path: Path, quiet_ms: int | None, db: Path | str | None) -> None:
    """Index PATH, then re-index what changes in it, one line per batch, until Ctrl-C.

    Example: lode watch ~/src/myrepo --quiet-ms 200
    """
    from indexer.api import Lode
    from indexer.cli._stop import STOP_WAIT, exit_now, fast_exit_wanted, stop_on_signals

    lode = Lode(make_config(db=db, quiet_ms=quiet_ms))
    stop = threading.Event()
    try:
        with stop_on_signals(stop):  # SIGINT (Ctrl-C) or SIGTERM: stop within 2 s
            run_watch(lode, path, stop=stop, stop_wait=STOP_WAIT)
    except KeyboardInterrupt:  # a second Ctrl-C while stopping
        pass
    finally:
        lode.settle_later()
        lode.close()
    click.echo("stopped")
    if fast_exit_wanted():
        exit_now(0)


def run_watch(
    lode: Lode,
    path: Path,
    *,
    stop: threading.Event,
    echo: Callable[[str], None] = click.echo,
    report_every: float = 0.2,
    stop_wait: float = 10.0,
) -> None:
    """Register ``path``, run a writer and its watcher until ``stop`` is set, then stop both
    (the writer gets ``stop_wait`` seconds to end its batch: ``IndexWorker.stop``)."""
    from indexer.tasks import IndexWorker
    from indexer.watch import WatchService

    lode.hold_writer("lode watch")
    project = lode.register(path)
    if lode.upgraded_from is not None:  # the other projects' symbols and roles too, now
        lode.rechunk_outdated()
    worker = IndexWorker(lode.store, lode.lazy_embedder, lode.config, activity=lode.activity)
    reporter = _Reporter(worker, Path(project.root), echo)
    service = WatchService(worker, lode.config.watch, on_batch=reporter.on_batch)
    worker.start()
    try:
        echo(_describe_start(project, service.add(project)))
        while not stop.wait(report_every):
            reporter.report()
    finally:
        service.stop()
        reporter.report()
        worker.stop(stop_wait)


def _describe_start(project: Project, status: WatchStatus) -> str:
    if status.state == "watching":
        how = "file events"
    else:
        how = f"{status.state}: {status.mode_reason or status.last_error}"
    return f"watching {project.root} ({project.name}) with {how}; Ctrl-C to stop"


class _Reporter:
    """One line per task once it is searchable (batches joining a queued task share it)."""

    def __init__(self, worker: IndexWorker, root: Path, echo: Callable[[str], None]) -> None:
        self._worker = worker
        self._root = root
        self._echo = echo
        self._lock = threading.Lock()
        self._pending: dict[str, list[Batch]] = {}

    def on_batch(self, project: Project, batch: Batch, task: Task) -> None:
        with self._lock:
            self._pending.setdefault(task.id, []).append(batch)

    def report(self) -> None:
        with self._lock:
            waiting = list(self._pending)
        for task_id in waiting:
            task = self._worker.get(task_id)
            if task.live and task.phase != "embed":
                continue
            with self._lock:
                batches = self._pending.pop(task_id, [])
            unchanged = task.status == "done" and task.message == "no change"
            if unchanged and all(b.reason in ("rescan", "overflow") for b in batches):
                continue  # the safety net found nothing: no line every few minutes
            self._echo(self._line(batches, task))

    def _line(self, batches: list[Batch], task: Task) -> str:
        stamp = datetime.now().strftime("%H:%M:%S")
        what = _describe_paths(batches)
        if task.status in ("failed", "cancelled"):
            return f"{stamp}  {what} → {task.status}: {task.message}"
        if task.message == "no change":
            return f"{stamp}  {what} → up to date"
        paths = {p for b in batches for p in b.paths}
        gone = sum(1 for p in paths if not (self._root / p).exists())
        result = f"{task.files_done} file(s) indexed, {task.chunks_done} chunk(s)"
        if gone:
            result += f", {gone} path(s) removed"
        if task.errors:
            result += f", {len(task.errors)} error(s): {task.errors[0]}"
        return f"{stamp}  {what} → {result}"


def _describe_paths(batches: list[Batch]) -> str:
    reasons = sorted({b.reason for b in batches} - {"changes"})
    if any(b.whole_project for b in batches):
        return f"whole project ({', '.join(reasons)})" if reasons else "whole project"
    paths = sorted({p for b in batches for p in b.paths})
    shown = ", ".join(paths[:_SHOWN_PATHS])
    return shown + (f" (+{len(paths) - _SHOWN_PATHS} more)" if len(paths) > _SHOWN_PATHS else "")
