"""What indexing runs, tasks and checks of the index report (plain data, like ``indexer.models``,
which re-exports every name here but the ``task_*`` helpers)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

__all__ = [
    "FINISHED_STATUSES",
    "LIVE_STATUSES",
    "TASK_STATUSES",
    "IndexProgress",
    "IndexReport",
    "SkippedFile",
    "StoreCheck",
    "StoreProblem",
    "Task",
    "UpgradeReport",
    "task_embedded",
    "task_eta",
    "task_percent",
    "task_searchable",
    "task_summary",
]


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A file the walker or chunker left out, and why."""

    path: str
    reason: str


@dataclass(slots=True)
class IndexProgress:
    """Where a run is: phase, files and chunks done, and the rate of phase 2."""

    phase: str = "scan"
    files_total: int = 0
    files_done: int = 0
    chunks_done: int = 0
    chunks_total: int = 0
    chunks_embedded: int = 0
    embed_rate: float = 0.0
    errors: list[str] = field(default_factory=list)
    files_changed: int = 0
    """Files written, removed or failed so far (0: the run changed nothing yet)."""
    changed_paths: list[str] = field(default_factory=list)
    """The paths the write just reported wrote or removed (set for one report, then
    emptied: what ``files`` events announce)."""

    @property
    def eta_seconds(self) -> float | None:
        """Seconds left in phase 2 at the current rate (None when unknown)."""
        left = self.chunks_total - self.chunks_embedded
        if self.phase != "embed" or self.embed_rate <= 0:
            return None
        return max(0.0, left / self.embed_rate)


@dataclass(slots=True)
class IndexReport:
    """What one indexing run did (the ``lode index --json`` summary)."""

    project_id: str = ""
    files_seen: int = 0
    files_indexed: int = 0
    files_unchanged: int = 0
    files_deleted: int = 0
    files_skipped: list[SkippedFile] = field(default_factory=list)
    files_failed: list[SkippedFile] = field(default_factory=list)
    chunks_written: int = 0
    """Chunks written by phase 1 (the changed files' chunks)."""
    chunks_embedded: int = 0
    """Chunks given a vector the model computed in this run (a text repeated in the run is
    embedded once)."""
    embedding_cache_hits: int = 0
    """Chunks given a vector from the embedding cache (by phase 1 or phase 2)."""
    chunks_queued: int = 0
    """Chunks of the project still without a vector when the run ended (``--no-embed``,
    a stopped run, or texts the model refused)."""
    chunks_from_earlier: int = 0
    """Chunks an earlier run left without a vector that this run's phase 2 took on.
    ``chunks_written + chunks_from_earlier = chunks_embedded + embedding_cache_hits +
    chunks_queued``."""
    seconds: float = 0.0
    lexical_seconds: float = 0.0
    """Time until every changed file was lexically searchable (end of phase 1)."""
    model_seconds: float = 0.0
    """Time spent inside the embedding model."""


#: Task states; ``queued`` and ``running`` are live, the others final.
TASK_STATUSES: Final[tuple[str, ...]] = ("queued", "running", "done", "failed", "cancelled")
#: A task in these states still changes; in the others (``FINISHED_STATUSES``) never again.
LIVE_STATUSES: Final[tuple[str, ...]] = ("queued", "running")
FINISHED_STATUSES: Final[tuple[str, ...]] = tuple(s for s in TASK_STATUSES if s not in LIVE_STATUSES)


@dataclass(frozen=True, slots=True)
class Task:
    """One unit of work for the single writer: (re)index a project or some of its paths."""

    id: str
    project_id: str
    kind: str = "index"
    status: str = "queued"
    phase: str = "queued"
    paths: tuple[str, ...] = ()
    full: bool = False
    files_total: int = 0
    files_done: int = 0
    chunks_done: int = 0
    chunks_total: int = 0
    chunks_embedded: int = 0
    errors: tuple[str, ...] = ()
    message: str = ""
    created_at: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    updated_at: datetime | None = None

    @property
    def live(self) -> bool:
        """True while queued or running."""
        return self.status in LIVE_STATUSES


@dataclass(frozen=True, slots=True)
class StoreProblem:
    """One inconsistency or damage ``Store.check`` found."""

    kind: str
    """What is wrong: ``unreadable``, ``index``, ``duplicate``, ``orphan``, ``missing``,
    ``stale``, ``unembedded``, ``hash``, ``vector``, ``columns``; or, for work still to do,
    ``rechunk``, ``reembed``."""
    table: str
    """The table it is in."""
    detail: str
    """What was seen, with an example row (file path or id)."""
    count: int = 1
    """How many rows have it."""


@dataclass(frozen=True, slots=True)
class StoreCheck:
    """The result of verifying the store: tables, data files, indexes and row agreement."""

    problems: tuple[StoreProblem, ...]
    """Everything wrong (empty: the store is sound)."""
    rows: dict[str, int]
    """Rows read per table."""
    indexes: dict[str, str]
    """Each index and whether it answered (``ok`` or the error)."""
    seconds: float
    """How long the check took."""
    pending: tuple[StoreProblem, ...] = ()
    """Work the index's writer still has to do, not damage: files to chunk again and
    vectors to make again after an upgrade."""

    @property
    def ok(self) -> bool:
        """True when nothing is wrong."""
        return not self.problems


@dataclass(frozen=True, slots=True)
class UpgradeReport:
    """What ``lode upgrade`` did to an index."""

    db: str
    """The index."""
    from_version: int
    """Its schema version before."""
    to_version: int
    """Its schema version now (this lode's)."""
    files_rechunked: int
    """Files an older lode chunked, chunked again (their symbols and roles)."""
    files_awaiting_rechunk: int
    """Files still to chunk again (a project folder that could not be read)."""
    vectors_outdated: int
    """Vectors made for a text no longer known: the next phase 2 makes them again."""


def task_percent(task: Task) -> float:
    """Progress in [0, 100]: phase 1 counts for 20 %, embedding for 80 %."""
    if task.status == "done":
        return 100.0
    files = (
        task.files_done / task.files_total if task.files_total else (1.0 if task.phase == "embed" else 0.0)
    )
    vectors = task.chunks_embedded / task.chunks_total if task.chunks_total else 0.0
    if task.phase != "embed":
        vectors = 0.0
    return round(100.0 * (0.2 * min(files, 1.0) + 0.8 * min(vectors, 1.0)), 1)


def task_searchable(task: Task) -> bool:
    """True once an index task's phase 1 is over: every file it covers is lexically
    searchable (phase ``embed``, or done)."""
    return task.kind == "index" and (task.phase == "embed" or task.status == "done")


def task_embedded(task: Task) -> bool:
    """True when an index task is done and every chunk of its project had a vector then
    (false while it embeds, and when chunks the model refused were left without one)."""
    return task.kind == "index" and task.status == "done" and task.chunks_embedded >= task.chunks_total


def task_eta(task: Task, rate: float) -> float | None:
    """Seconds left in phase 2 at ``rate`` chunks/s (None when unknown)."""
    if task.phase != "embed" or rate <= 0:
        return None
    return round(max(0, task.chunks_total - task.chunks_embedded) / rate, 1)


def task_summary(task: Task) -> dict[str, Any]:
    """A task as ``lode status`` shows it: its state and counts, with the percent done."""
    fields = ("id", "project_id", "kind", "status", "phase", "files_total", "files_done")
    counts = ("chunks_done", "chunks_total", "chunks_embedded")
    return {
        **{name: getattr(task, name) for name in (*fields, *counts)},
        "percent": task_percent(task),
        "eta_seconds": None,
        "message": task.message,
    }
