"""HTTP request and response types: the OpenAPI document is generated from these.

Field names mirror ``indexer`` dataclasses one for one, so the CLI prints the same
JSON whether it ran in-process or through a server. Converted from ``indexer.models``
and ``indexer.search`` results, never from storage rows.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec
from msgspec import Meta

__all__ = [
    "ChunkHitOut",
    "ChunkOut",
    "DocumentHitOut",
    "DocumentOut",
    "ErrorOut",
    "FileGroupOut",
    "FileOut",
    "FilesPage",
    "HealthOut",
    "IndexRequest",
    "ProjectCreate",
    "ProjectCreated",
    "ProjectOut",
    "ProjectPatch",
    "SearchRequest",
    "SearchResponseOut",
    "StatusOut",
    "TaskOut",
]

Str = Annotated[str, Meta(min_length=1, max_length=4096)]
Globs = Annotated[list[Str], Meta(max_length=100)]


def _d(text: str, max_length: int | None = None) -> Meta:
    return Meta(description=text, max_length=max_length)


class ErrorOut(msgspec.Struct):
    """Every 4xx/5xx response."""

    status_code: Annotated[int, _d("HTTP status code")]
    detail: Annotated[str, _d("What went wrong, in one sentence")]
    extra: Annotated[
        list[dict[str, str]] | dict[str, object] | None,
        _d("Offending fields: [{key, message, source}]"),
    ] = None


# ---- projects and tasks -------------------------------------------------------------
class ProjectCreate(msgspec.Struct, forbid_unknown_fields=True):
    """Register a folder as a project (its full index is queued at once)."""

    path: Annotated[Str, _d("Absolute path of a readable folder on the server's machine")]
    name: Annotated[Str | None, _d("Unique project name (default: the folder's name)")] = None
    include: Annotated[Globs, _d("Gitignore-style globs; when given, only matching files are indexed")] = []
    exclude: Annotated[Globs, _d("Gitignore-style globs of files never indexed")] = []


class ProjectPatch(msgspec.Struct, forbid_unknown_fields=True):
    """Change a project's name or globs (changing globs queues a re-index)."""

    name: Annotated[Str | None, _d("New unique name")] = None
    include: Annotated[Globs | None, _d("New include globs")] = None
    exclude: Annotated[Globs | None, _d("New exclude globs")] = None


class TaskOut(msgspec.Struct):
    """An indexing task of the single writer, with live progress."""

    id: Annotated[str, _d("Task id (UUID v7)")]
    project_id: Annotated[str, _d("Project the task works on")]
    kind: Annotated[str, _d("index or delete")]
    status: Annotated[str, _d("queued, running, done, failed or cancelled")]
    phase: Annotated[str, _d("queued, chunk (lexical phase), embed (vectors), or the final status")]
    paths: Annotated[list[str], _d("Project-relative paths to refresh; empty means the whole project")]
    full: Annotated[bool, _d("Re-chunk every file, not only changed ones")]
    files_total: Annotated[int, _d("Files to read in phase 1")]
    files_done: Annotated[int, _d("Files read so far")]
    chunks_done: Annotated[int, _d("Chunks written in phase 1")]
    chunks_total: Annotated[int, _d("Chunks of the project (phase 2 denominator)")]
    chunks_embedded: Annotated[int, _d("Chunks of the project with a vector")]
    percent: Annotated[float, _d("Progress 0-100 (phase 1 counts 20 %, embedding 80 %)")]
    eta_seconds: Annotated[float | None, _d("Seconds left in phase 2 at the current rate")]
    errors: Annotated[list[str], _d("Files that failed, as 'path: reason'")]
    message: Annotated[str, _d("Why a task failed or was resumed")]
    created_at: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None


class ProjectOut(msgspec.Struct):
    """A registered project and the size of its index."""

    id: Annotated[str, _d("Project id (UUID)")]
    name: Annotated[str, _d("Unique name")]
    root: Annotated[str, _d("Absolute folder")]
    include: list[str]
    exclude: list[str]
    files: Annotated[int, _d("Indexed files")]
    chunks: Annotated[int, _d("Indexed chunks")]
    semantic_coverage: Annotated[float, _d("Share of chunks with a vector, 0-1")]
    created_at: datetime | None = None
    last_indexed_at: datetime | None = None
    current_task: Annotated[TaskOut | None, _d("The live task of this project, if any")] = None
    watch: Annotated[dict[str, object] | None, _d("Watcher state of this project")] = None


class ProjectCreated(msgspec.Struct):
    """The new project and the id of the full-index task it queued."""

    project: ProjectOut
    task_id: str


class IndexRequest(msgspec.Struct, forbid_unknown_fields=True):
    """Refresh some paths of a project, or all of it."""

    paths: Annotated[
        list[Str], _d("Project-relative files or folders; empty = whole project", max_length=10000)
    ] = []
    full: Annotated[bool, _d("Re-chunk every file even if unchanged")] = False


class FileOut(msgspec.Struct):
    """One indexed file."""

    id: str
    path: str
    language: str
    languages: list[str]
    chunk_count: int
    file_size: int
    indexed_at: datetime | None


class FilesPage(msgspec.Struct):
    """A page of a project's files, by path."""

    files: list[FileOut]
    total: int
    offset: int
    limit: int


# ---- search -----------------------------------------------------------------------
_NODE_TYPES_HELP = (
    "Only these unit kinds: function, method, constructor, class, struct, enum, interface, trait, impl, "
    "module, namespace, type, constant, variable, macro, test, section, block, text"
)


class SearchRequest(msgspec.Struct, forbid_unknown_fields=True):
    """Hybrid search with metadata filters (the same options as the CLI and MCP)."""

    query: Annotated[
        str,
        _d("Natural language or identifiers, e.g. 'parse http request' or 'parseRequest'"),
        Meta(max_length=2000),
    ]
    projects: Annotated[list[Str], _d("Project ids or names (default: all)")] = []
    granularity: Annotated[
        str, _d("document (files with their best chunks) or chunk (chunks grouped by file)")
    ] = "document"
    mode: Annotated[str, _d("hybrid (vector + full text), semantic, or lexical")] = "hybrid"
    languages: Annotated[list[Str], _d("Only these languages, e.g. python, go")] = []
    path_include: Annotated[
        Globs, _d("Path globs to include, e.g. src/**/*.py; a glob without / matches file names")
    ] = []
    path_exclude: Annotated[Globs, _d("Path globs to exclude")] = []
    node_types: Annotated[list[Str], _d(_NODE_TYPES_HELP)] = []
    node_name_pattern: Annotated[
        str | None, _d("Glob on the unit's name, case-sensitive (exact name = glob without wildcards)")
    ] = None
    parent_context_pattern: Annotated[
        str | None, _d("Glob on the enclosing declaration, e.g. 'class Cart*'")
    ] = None
    scope_depth: Annotated[
        Annotated[list[int], Meta(min_length=2, max_length=2)] | None,
        _d("[min, max] length of the scope path"),
    ] = None
    has_definitions: Annotated[list[Str], _d("Chunk defines any of these names")] = []
    has_references: Annotated[list[Str], _d("Chunk references any of these names")] = []
    file_limit: Annotated[int, _d("Files returned (document granularity)")] = 5
    chunks_per_file: Annotated[int, _d("Chunks per file (document granularity)")] = 3
    limit: Annotated[int, _d("Chunks returned (chunk granularity), at most 100")] = 10
    offset: Annotated[int, _d("Results to skip (files or chunks)")] = 0


class ChunkHitOut(msgspec.Struct):
    """A ranked chunk."""

    id: str
    file_id: str
    file_path: str
    project_id: str
    project: str
    chunk_index: int
    content: str
    start_line: int
    end_line: int
    language: str
    node_type: str
    node_name: str
    parent_context: str
    scope_path: list[str]
    relevance_score: Annotated[float, _d("0-1, comparable across pages of one query")]


class DocumentHitOut(msgspec.Struct):
    """A ranked file with its best chunks."""

    id: str
    file_path: str
    project_id: str
    project: str
    relevance_score: float
    chunk_count: int
    languages: list[str]
    primary_language: str
    chunks: list[ChunkHitOut]


class FileGroupOut(msgspec.Struct):
    """Chunk-granularity results of one file."""

    file_id: str
    file_path: str
    project_id: str
    project: str
    total_relevance: Annotated[float, _d("Best chunk score plus a tenth of the other chunks' scores")]
    chunks: list[ChunkHitOut]


class SearchResponseOut(msgspec.Struct):
    """Search results: ``documents`` (document granularity) or ``groups`` (chunk granularity)."""

    query: str
    mode: str
    granularity: str
    offset: int
    limit: int
    total: Annotated[int, _d("Size of the ranked candidate pool")]
    has_more: bool
    documents: list[DocumentHitOut]
    groups: list[FileGroupOut]
    semantic_coverage: Annotated[dict[str, float], _d("Per project id: share of chunks with a vector")]
    warnings: list[str]
    took_ms: float


class DocumentOut(msgspec.Struct):
    """An indexed file: metadata, and optionally its text and chunks."""

    id: str
    project_id: str
    file_path: str
    content_hash: str
    file_size: int
    last_modified: float
    indexed_at: datetime | None
    languages: list[str]
    primary_language: str
    chunk_count: int
    keywords: list[str]
    summary: str
    content: str | None = None
    chunks: list[ChunkOut] | None = None


class ChunkOut(msgspec.Struct):
    """One stored chunk with all its metadata."""

    id: str
    file_id: str
    project_id: str
    file_path: str
    chunk_index: int
    content: str
    chunk_hash: str
    start_byte: int
    end_byte: int
    start_line: int
    end_line: int
    language: str
    node_type: str
    node_name: str
    parent_context: str
    scope_path: list[str]
    definitions: list[str]
    references: list[str]
    embedded: bool


# ---- service ------------------------------------------------------------------------
class HealthOut(msgspec.Struct):
    """Liveness and readiness."""

    status: Annotated[str, _d("ok when ready, starting while the model loads, degraded on a fault")]
    store_open: bool
    model_loaded: bool
    worker_alive: bool
    version: str
    search_processes: Annotated[
        int, _d("search processes answering searches now (0: searches run in the server process)")
    ] = 0


class StatusOut(msgspec.Struct):
    """The whole service at a glance."""

    version: str
    db: str
    model_id: str
    dimension: int
    documents: int
    chunks: int
    chunks_embedded: int
    embedding_cache: int
    file_errors: int
    queue: Annotated[dict[str, int], _d("Tasks by status")]
    projects: list[ProjectOut]
    worker_error: str | None = None
