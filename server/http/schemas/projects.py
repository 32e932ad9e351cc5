"""HTTP types of projects and tasks (``/api/v1/projects…``, ``/api/v1/tasks…``)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec

from indexer.limits import MAX_PATHS
from server.http.schemas._choices import TaskKind, TaskPhase, TaskStatus, WatchState
from server.http.schemas._fields import (
    ChunkCount,
    FilePath,
    FileSize,
    Globs,
    Languages,
    PrimaryLanguage,
    Text,
)
from server.http.schemas._fields import describe as _d
from server.http.schemas._positions import FileArgument

__all__ = [
    "FileOut",
    "FilesPage",
    "IndexRequest",
    "ProjectCreate",
    "ProjectCreated",
    "ProjectOut",
    "ProjectPatch",
    "TaskOut",
    "WatchOut",
]


class ProjectCreate(msgspec.Struct, forbid_unknown_fields=True):
    """Register a folder as a project (its full index is queued at once)."""

    path: Annotated[Text, _d("Absolute path of a readable folder on the server's machine")]
    name: Annotated[Text | None, _d("Unique project name (default: the folder's name)")] = None
    include: Annotated[Globs, _d("Gitignore-style globs; when given, only matching files are indexed")] = []
    exclude: Annotated[Globs, _d("Gitignore-style globs of files never indexed")] = []
    force: Annotated[
        bool,
        _d(
            "Register /, a system folder or the home folder itself anyway "
            "(refused by default: it would read everything below it)"
        ),
    ] = False


class ProjectPatch(msgspec.Struct, forbid_unknown_fields=True):
    """Change a project's name or globs (changing globs queues a re-index)."""

    name: Annotated[Text | None, _d("New unique name")] = None
    include: Annotated[Globs | None, _d("New include globs")] = None
    exclude: Annotated[Globs | None, _d("New exclude globs")] = None


class TaskOut(msgspec.Struct, kw_only=True):
    """An indexing task of the single writer, with live progress."""

    id: Annotated[str, _d("Task id (UUID v7)")]
    project_id: Annotated[str, _d("Project the task works on")]
    kind: Annotated[TaskKind, _d("index or delete")]
    status: Annotated[TaskStatus, _d("queued, running, done, failed or cancelled")]
    phase: Annotated[TaskPhase, _d("queued, chunk (lexical phase), embed (vectors), or the final status")]
    paths: Annotated[list[str], _d("Project-relative paths to refresh; empty means the whole project")]
    full: Annotated[bool, _d("Re-chunk every file, not only changed ones")]
    files_total: Annotated[int, _d("Files to read in phase 1")]
    files_done: Annotated[int, _d("Files read so far")]
    chunks_done: Annotated[int, _d("Chunks written in phase 1")]
    chunks_total: Annotated[int, _d("Chunks of the project (phase 2 denominator)")]
    chunks_embedded: Annotated[int, _d("Chunks of the project with a vector")]
    percent: Annotated[float, _d("Progress 0-100 (phase 1 counts 20 %, embedding 80 %)")]
    eta_seconds: Annotated[float | None, _d("Seconds left in phase 2 at the current rate")] = None
    errors: Annotated[list[str], _d("Files that failed, as 'path: reason'")]
    message: Annotated[
        str, _d("Why a task failed or was resumed; 'no change' when its phase 1 found every file as indexed")
    ]
    created_at: Annotated[datetime | None, _d("When the task was queued (UTC)")] = None
    started_at: Annotated[datetime | None, _d("When the task first ran (UTC); null if it has not run")] = None
    finished_at: Annotated[datetime | None, _d("When the task ended (UTC); null while it is live")] = None
    searchable: Annotated[
        bool,
        _d(
            "True once the task's phase 1 is over: every file it covers is lexically searchable "
            "(phase embed, or done)"
        ),
    ] = False
    embedded: Annotated[
        bool,
        _d(
            "True when the task is done and every chunk of its project had a vector then. An index "
            "task is done only once its project's vectors are in (or were refused by the model: "
            "then errors lists them and this stays false)"
        ),
    ] = False


class WatchOut(msgspec.Struct):
    """What the watcher of a project is doing."""

    state: Annotated[
        WatchState,
        _d("watching (file events), polling (the fallback), stopped (not watched) or error"),
    ]
    pending_events: Annotated[int, _d("File events received but not yet sent as a task")]
    last_event_at: Annotated[
        datetime | None, _d("When the last relevant file event arrived (UTC); null if none")
    ] = None
    last_update_at: Annotated[
        datetime | None, _d("When the last batch of changes was handed to the writer (UTC); null if none")
    ] = None
    last_error: Annotated[str | None, _d("The last problem met (null if none)")] = None
    mode_reason: Annotated[
        str | None, _d("Why the watcher polls instead of receiving events (null if not)")
    ] = None
    batches: Annotated[int, _d("Batches of changes sent since the watcher started")] = 0


class ProjectOut(msgspec.Struct):
    """A registered project and the size of its index."""

    id: Annotated[str, _d("Project id (UUID)")]
    name: Annotated[str, _d("Unique name")]
    root: Annotated[str, _d("Absolute folder")]
    include: Annotated[list[str], _d("Include globs; empty means every file not excluded")]
    exclude: Annotated[list[str], _d("Exclude globs")]
    files: Annotated[int, _d("Indexed files")]
    chunks: Annotated[int, _d("Indexed chunks")]
    semantic_coverage: Annotated[float, _d("Share of chunks with a vector of their current text, 0-1")]
    implementation_coverage: Annotated[
        float,
        _d(
            "The same share among chunks of implementation code (role implementation), which "
            "indexing embeds before tests, docs, examples and generated files; 1 when there are none"
        ),
    ] = 1.0
    created_at: Annotated[datetime | None, _d("When the project was registered (UTC)")] = None
    files_awaiting_rechunk: Annotated[
        int, _d("Files an older lode chunked: their symbols and roles come once they are chunked again")
    ] = 0
    last_indexed_at: Annotated[
        datetime | None, _d("When an index run last finished writing chunks (UTC); null if never")
    ] = None
    current_task: Annotated[
        TaskOut | None,
        _d(
            "The task the writer works on for this project: the one running (in phase 1 first, "
            "else the one embedding), else the next queued; null when none is live"
        ),
    ] = None
    watch: Annotated[WatchOut | None, _d("What the watcher of this project is doing")] = None


class ProjectCreated(msgspec.Struct):
    """The new project and the id of the full-index task it queued."""

    project: Annotated[
        ProjectOut, _d("The registered project (the existing one if its folder was already registered)")
    ]
    task_id: Annotated[str, _d("Id of the queued whole-project index task (an already queued one is reused)")]


class IndexRequest(msgspec.Struct, forbid_unknown_fields=True):
    """Refresh some paths of a project, or all of it."""

    paths: Annotated[
        list[FileArgument],
        _d(
            "Files or folders: relative to the project's root, absolute inside it, or file:// URIs; "
            "empty = whole project",
            max_length=MAX_PATHS,
        ),
    ] = []
    full: Annotated[bool, _d("Re-chunk every file even if unchanged")] = False


class FileOut(msgspec.Struct):
    """One indexed file."""

    id: Annotated[str, _d("Document id (UUID v5 of project id and path)")]
    path: FilePath
    language: PrimaryLanguage
    languages: Languages
    chunk_count: ChunkCount
    file_size: FileSize
    indexed_at: Annotated[datetime | None, _d("When the file was last indexed (UTC)")]


class FilesPage(msgspec.Struct):
    """A page of a project's files, by path."""

    files: Annotated[list[FileOut], _d("This page of the project's files, sorted by path")]
    total: Annotated[int, _d("Indexed files of the project")]
    offset: Annotated[int, _d("Files skipped, as requested")]
    limit: Annotated[int, _d("Most files per page, as requested")]
