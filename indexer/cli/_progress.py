"""A progress bar for indexing on a terminal (files, chunks, chunks/s, ETA).

Phase 1 reports every 50 files or every second, phase 2 after every write of vectors;
each bar shows its time left once 5 % of what it had left when it appeared is done,
from its own pace since then (not rich's sliding window, which counts the vectors a run
finds in the cache as speed).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn

from indexer.models import IndexProgress

__all__ = ["ETA_AFTER", "BarClock", "IndexBar", "eta_text"]

#: Share of a bar's work done before it shows a time left.
ETA_AFTER = 0.05


@dataclass(slots=True)
class BarClock:
    """Where one bar started: its count and the time when it appeared."""

    started_at: float
    start_done: int


def eta_text(clock: BarClock, done: int, total: int, now: float) -> str:
    """``eta m:ss`` from the bar's pace since it appeared, once ``ETA_AFTER`` of what it
    had left then is done (empty before)."""
    todo = total - clock.start_done
    progressed = done - clock.start_done
    elapsed = now - clock.started_at
    if todo <= 0 or progressed < max(1, ETA_AFTER * todo) or elapsed <= 0:
        return ""
    seconds = round(max(0, total - done) * elapsed / progressed)
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"eta {hours}:{minutes:02d}:{secs:02d}" if hours else f"eta {minutes}:{secs:02d}"


class IndexBar:
    """Shows phase 1 (files) and phase 2 (chunks embedded) on stderr when it is a terminal."""

    def __init__(self, enabled: bool | None = None, console: Console | None = None) -> None:
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._console = console
        self._progress: Progress | None = None
        self._files: TaskID | None = None
        self._embed: TaskID | None = None
        self._clocks: dict[str, BarClock] = {}
        self._last = 0.0

    def __enter__(self) -> IndexBar:
        if self.enabled:
            self._progress = Progress(
                TextColumn("{task.description:<8}"),
                BarColumn(),
                TextColumn("{task.completed:>7.0f}/{task.total:<7.0f}"),
                TextColumn("{task.fields[extra]}"),
                TextColumn("{task.fields[eta]}"),
                console=self._console or Console(stderr=True),
                transient=True,
            )
            self._progress.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.stop()

    def from_task(self, task: dict[str, Any]) -> None:
        """Progress callback for a task followed on a server (its JSON)."""
        fields = ("phase", "files_total", "files_done", "chunks_done", "chunks_total", "chunks_embedded")
        state = IndexProgress(**{name: task[name] for name in fields})
        eta = task.get("eta_seconds")
        state.embed_rate = (task["chunks_total"] - task["chunks_embedded"]) / eta if eta else 0.0
        self(state)

    def __call__(self, state: IndexProgress) -> None:
        """Progress callback for ``index_project``."""
        if self._progress is None:
            return
        now = time.monotonic()
        if now - self._last < 0.1 and state.phase not in ("done",):
            return
        self._last = now
        self._files = self._update(
            "files", self._files, state.files_done, state.files_total, f"{state.chunks_done} chunks", now
        )
        if state.phase == "embed":
            left = state.chunks_total - state.chunks_embedded
            extra = f"{state.embed_rate:5.1f} chunks/s, {left} left"
            self._embed = self._update(
                "embed", self._embed, state.chunks_embedded, state.chunks_total, extra, now
            )

    def _update(self, name: str, bar: TaskID | None, done: int, total: int, extra: str, now: float) -> TaskID:
        progress = self._progress
        assert progress is not None
        clock = self._clocks.setdefault(name, BarClock(now, done))
        if bar is None:
            bar = progress.add_task(name, total=max(1, total), extra="", eta="")
        eta = eta_text(clock, done, total, now)
        progress.update(bar, total=max(1, total), completed=done, extra=extra, eta=eta)
        return bar
