"""A progress bar for indexing on a terminal (files, chunks, chunks/s, ETA)."""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

from indexer.pipeline import IndexProgress

__all__ = ["IndexBar"]


class IndexBar:
    """Shows phase 1 (files) and phase 2 (chunks embedded) on stderr when it is a terminal."""

    def __init__(self, enabled: bool | None = None) -> None:
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._progress: Progress | None = None
        self._files: TaskID | None = None
        self._embed: TaskID | None = None
        self._last = 0.0

    def __enter__(self) -> IndexBar:
        if self.enabled:
            self._progress = Progress(
                TextColumn("{task.description:<8}"),
                BarColumn(),
                TextColumn("{task.completed:>7.0f}/{task.total:<7.0f}"),
                TextColumn("{task.fields[extra]}"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
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
        state = IndexProgress(
            phase=task["phase"],
            files_total=task["files_total"],
            files_done=task["files_done"],
            chunks_done=task["chunks_done"],
            chunks_total=task["chunks_total"],
            chunks_embedded=task["chunks_embedded"],
        )
        eta = task.get("eta_seconds")
        left = task["chunks_total"] - task["chunks_embedded"]
        state.embed_rate = left / eta if eta else 0.0
        self(state)

    def __call__(self, state: IndexProgress) -> None:
        """Progress callback for ``index_project``."""
        if self._progress is None:
            return
        now = time.monotonic()
        if now - self._last < 0.1 and state.phase not in ("done",):
            return
        self._last = now
        progress = self._progress
        if self._files is None:
            self._files = progress.add_task("files", total=max(1, state.files_total), extra="")
        progress.update(
            self._files,
            total=max(1, state.files_total),
            completed=state.files_done,
            extra=f"{state.chunks_done} chunks",
        )
        if state.phase == "embed":
            left = state.chunks_total - state.chunks_embedded
            if self._embed is None:
                self._embed = progress.add_task("embed", total=max(1, state.chunks_total), extra="")
            progress.update(
                self._embed,
                total=max(1, state.chunks_total),
                completed=state.chunks_embedded,
                extra=f"{state.embed_rate:5.1f} chunks/s, {left} left",
            )
