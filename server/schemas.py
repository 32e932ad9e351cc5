"""HTTP request and response types: the OpenAPI document is generated from these.

Field names mirror ``indexer`` dataclasses one for one, so the CLI prints the same
JSON whether it ran in-process or through a server. Converted from ``indexer.models``
and ``indexer.search`` results, never from storage rows.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from indexer.limits import MAX_GLOBS, MAX_NAMES, MAX_PATHS, MAX_QUERY_CHARS, MAX_TEXT_CHARS
from indexer.roles import ROLES
from indexer.search import MAX_LIMIT
from indexer.search._options import MAX_OFFSET
from server._fields import (
    NO_NUL,
    NOT_EMPTY,
    ChunkCount,
    ChunkId,
    ChunkIndex,
    ChunkLanguage,
    ChunkText,
    EndLine,
    FileId,
    FilePath,
    FileSize,
    LanguageName,
    Languages,
    NodeName,
    NodeType,
    NodeTypeName,
    PrimaryLanguage,
    ProjectId,
    ProjectName,
    RelativePath,
    RoleName,
    StartLine,
    Text,
)
from server._fields import describe as _d

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
    "StoreCheckOut",
    "StoreProblemOut",
    "TaskOut",
]

Str = Annotated[str, Meta(min_length=1, max_length=MAX_TEXT_CHARS)]
Globs = Annotated[list[Text], Meta(max_length=MAX_GLOBS)]
Names = Annotated[list[Text], Meta(max_length=MAX_NAMES)]
#: A glob on a unit's name or parent: not empty, without NUL.
NamePattern = Annotated[str, Meta(min_length=1, max_length=MAX_TEXT_CHARS, pattern=NOT_EMPTY)]


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
    created_at: Annotated[datetime | None, _d("When the task was queued (UTC)")] = None
    started_at: Annotated[datetime | None, _d("When the task first ran (UTC); null if it has not run")] = None
    finished_at: Annotated[datetime | None, _d("When the task ended (UTC); null while it is live")] = None


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
    created_at: Annotated[datetime | None, _d("When the project was registered (UTC)")] = None
    files_awaiting_rechunk: Annotated[
        int, _d("Files an older lode chunked: their symbols and roles come once they are chunked again")
    ] = 0
    last_indexed_at: Annotated[
        datetime | None, _d("When an index run last finished writing chunks (UTC); null if never")
    ] = None
    current_task: Annotated[TaskOut | None, _d("The live task of this project, if any")] = None
    watch: Annotated[dict[str, object] | None, _d("Watcher state of this project")] = None


class ProjectCreated(msgspec.Struct):
    """The new project and the id of the full-index task it queued."""

    project: Annotated[
        ProjectOut, _d("The registered project (the existing one if its folder was already registered)")
    ]
    task_id: Annotated[str, _d("Id of the queued whole-project index task (an already queued one is reused)")]


class IndexRequest(msgspec.Struct, forbid_unknown_fields=True):
    """Refresh some paths of a project, or all of it."""

    paths: Annotated[
        list[RelativePath],
        _d("Project-relative files or folders; empty = whole project", max_length=MAX_PATHS),
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


# ---- search -----------------------------------------------------------------------
_ROLES_HELP = (
    "What the code is for: implementation, test, docs, example, config, changelog, generated, vendored, "
    "build (a chunk has its file's role, or test inside an inline test module)"
)
_ROLE_HELP = "The chunk's role: its file's (implementation, test, docs, example…), or test for an inline test"
_NODE_TYPES_HELP = (
    "Only these unit kinds: function, method, constructor, class, struct, enum, interface, trait, impl, "
    "module, namespace, type, constant, variable, macro, test, section, block, text"
)


class SearchRequest(msgspec.Struct, forbid_unknown_fields=True):
    """Hybrid search with metadata filters (the same options as the CLI and MCP)."""

    query: Annotated[
        str,
        _d(
            "Natural language or identifiers, e.g. 'parse http request' or 'parseRequest'; may be "
            "left out with has_definitions or has_references (then what they name is listed)"
        ),
        Meta(max_length=MAX_QUERY_CHARS, pattern=NO_NUL),
    ] = ""
    projects: Annotated[Names, _d("Project ids or names (default: all)")] = []
    granularity: Annotated[
        Literal["document", "chunk"],
        _d("document (files with their best chunks) or chunk (chunks grouped by file)"),
    ] = "document"
    mode: Annotated[
        Literal["hybrid", "semantic", "lexical"], _d("hybrid (vector + full text), semantic, or lexical")
    ] = "hybrid"
    languages: Annotated[
        Annotated[list[LanguageName], Meta(max_length=MAX_NAMES)],
        _d("Only these languages, e.g. python, go"),
    ] = []
    path_include: Annotated[
        Globs,
        _d(
            "Path globs to include, relative to the project root, e.g. src/**/*.py; a glob without / "
            "matches file names; an absolute glob inside the project is made relative, outside it is a 400"
        ),
    ] = []
    path_exclude: Annotated[Globs, _d("Path globs to exclude, relative to the project root")] = []
    node_types: Annotated[
        Annotated[list[NodeTypeName], Meta(max_length=MAX_NAMES)], _d(_NODE_TYPES_HELP)
    ] = []
    node_name_pattern: Annotated[
        NamePattern | None,
        _d("Glob on the unit's name, case-sensitive (exact name = glob without wildcards)"),
    ] = None
    parent_context_pattern: Annotated[
        NamePattern | None, _d("Glob on the enclosing declaration, e.g. 'class Cart*'")
    ] = None
    scope_depth: Annotated[
        Annotated[list[Annotated[int, Meta(ge=0)]], Meta(min_length=2, max_length=2)] | None,
        _d("[min, max] length of the scope path (min > max is an empty range: nothing matches)"),
    ] = None
    has_definitions: Annotated[Names, _d("Chunk defines any of these names")] = []
    has_references: Annotated[Names, _d("Chunk references any of these names")] = []
    roles: Annotated[
        Annotated[list[RoleName], Meta(max_length=len(ROLES))],
        _d(_ROLES_HELP + "; only chunks of these roles"),
    ] = []
    exclude_roles: Annotated[
        Annotated[list[RoleName], Meta(max_length=len(ROLES))], _d("No chunk of these roles")
    ] = []
    file_limit: Annotated[
        Annotated[int, Meta(ge=1, le=MAX_LIMIT)], _d("Files returned (document granularity)")
    ] = 5
    chunks_per_file: Annotated[
        Annotated[int, Meta(ge=1, le=50)], _d("Chunks per file (document granularity)")
    ] = 3
    limit: Annotated[
        Annotated[int, Meta(ge=1, le=MAX_LIMIT)], _d("Chunks returned (chunk granularity), at most 100")
    ] = 10
    offset: Annotated[Annotated[int, Meta(ge=0, le=MAX_OFFSET)], _d("Results to skip (files or chunks)")] = 0


class ChunkHitOut(msgspec.Struct):
    """A ranked chunk."""

    id: ChunkId
    file_id: FileId
    file_path: FilePath
    project_id: ProjectId
    project: ProjectName
    chunk_index: ChunkIndex
    content: ChunkText
    start_line: StartLine
    end_line: EndLine
    language: ChunkLanguage
    node_type: Annotated[str, _d("Unit kind, e.g. function, class or section (see node_types)")]
    node_name: NodeName
    parent_context: Annotated[str, _d("Header of the enclosing declaration or heading ('' at top level)")]
    scope_path: Annotated[list[str], _d("Names of the enclosing units and this one, outermost first")]
    relevance_score: Annotated[float, _d("0-1, comparable across pages of one query")]
    role: Annotated[str, _d(_ROLE_HELP)]
    unit_start_line: Annotated[
        int, _d("First line of the unit this chunk is (a piece of): a long function split into pieces")
    ]
    unit_end_line: Annotated[int, _d("Last line of the unit")]
    folded_pieces: Annotated[
        int, _d("Other pieces of the same unit that matched, folded into this hit (0: none)")
    ] = 0


class DocumentHitOut(msgspec.Struct):
    """A ranked file with its best chunks."""

    id: Annotated[str, _d("Document id of the file")]
    file_path: FilePath
    project_id: ProjectId
    project: ProjectName
    relevance_score: Annotated[float, _d("0-1, rank fusion of the file's chunk and whole-file rankings")]
    chunk_count: Annotated[int, _d("Chunks of the whole file")]
    languages: Languages
    primary_language: PrimaryLanguage
    chunks: Annotated[list[ChunkHitOut], _d("The file's best chunks (at most chunks_per_file)")]
    role: Annotated[str, _d("What the file is for: implementation, test, docs, example…")]


class FileGroupOut(msgspec.Struct):
    """Chunk-granularity results of one file."""

    file_id: Annotated[str, _d("Document id of the file")]
    file_path: FilePath
    project_id: ProjectId
    project: ProjectName
    total_relevance: Annotated[float, _d("The file's best chunk score (groups follow their best chunks)")]
    chunks: Annotated[list[ChunkHitOut], _d("This page's chunks of the file, best first")]


class SearchResponseOut(msgspec.Struct):
    """Search results: ``documents`` (document granularity) or ``groups`` (chunk granularity)."""

    query: Annotated[str, _d("The query, as sent")]
    mode: Annotated[str, _d("hybrid, semantic or lexical")]
    granularity: Annotated[str, _d("document or chunk")]
    offset: Annotated[int, _d("Results skipped (files or chunks)")]
    limit: Annotated[int, _d("Page size: file_limit (document granularity) or limit (chunk granularity)")]
    total: Annotated[int, _d("Size of the ranked candidate pool")]
    has_more: Annotated[bool, _d("True when results exist beyond this page")]
    documents: Annotated[
        list[DocumentHitOut], _d("Ranked files, best first (document granularity; else empty)")
    ]
    groups: Annotated[
        list[FileGroupOut],
        _d("This page's chunks grouped by file, best group first (chunk granularity; else empty)"),
    ]
    semantic_coverage: Annotated[dict[str, float], _d("Per project id: share of chunks with a vector")]
    warnings: Annotated[list[str], _d("Notes on the results, e.g. an incomplete semantic index")]
    took_ms: Annotated[float, _d("Search time on the server, in milliseconds")]


class DocumentOut(msgspec.Struct):
    """An indexed file: metadata, and optionally its text and chunks."""

    id: Annotated[str, _d("Document id (UUID v5 of project id and path)")]
    project_id: ProjectId
    file_path: FilePath
    content_hash: Annotated[str, _d("blake3 hex digest of the file's bytes")]
    file_size: FileSize
    last_modified: Annotated[float, _d("File modification time (Unix seconds) seen by the last index run")]
    indexed_at: Annotated[datetime | None, _d("When the file was last indexed (UTC)")]
    languages: Languages
    primary_language: PrimaryLanguage
    chunk_count: ChunkCount
    keywords: Annotated[list[str], _d("Up to 7 key phrases of the file")]
    summary: Annotated[
        str, _d("First doc comment or heading paragraph, at most ~300 characters ('' if none)")
    ]
    content: Annotated[str | None, _d("The whole text as indexed (null unless content=true)")] = None
    chunks: Annotated[list[ChunkOut] | None, _d("Every chunk in file order (null unless chunks=true)")] = None


class ChunkOut(msgspec.Struct):
    """One stored chunk with all its metadata."""

    id: ChunkId
    file_id: FileId
    project_id: ProjectId
    file_path: FilePath
    chunk_index: ChunkIndex
    content: ChunkText
    chunk_hash: Annotated[str, _d("blake3 hex digest of content (UTF-8)")]
    start_byte: Annotated[int, _d("Offset of the first byte in the file (0-based)")]
    end_byte: Annotated[int, _d("Offset just past the last byte (0-based, exclusive)")]
    start_line: StartLine
    end_line: EndLine
    language: ChunkLanguage
    node_type: NodeType
    node_name: NodeName
    parent_context: Annotated[str, _d("Header of the enclosing declaration or heading ('' at top level)")]
    scope_path: Annotated[list[str], _d("Names of the enclosing units and this one, outermost first")]
    definitions: Annotated[list[str], _d("Names the chunk defines")]
    references: Annotated[list[str], _d("Identifiers the chunk uses but does not define (capped)")]
    embedded: Annotated[bool, _d("True once the chunk has a vector")]


# ---- service ------------------------------------------------------------------------
class HealthOut(msgspec.Struct):
    """Liveness and readiness."""

    status: Annotated[str, _d("ok when ready, starting while the model loads, degraded on a fault")]
    store_open: Annotated[
        bool,
        _d("True while the index folder exists (it is opened before serving; always true on object storage)"),
    ]
    model_loaded: Annotated[bool, _d("True once the embedding model is loaded")]
    worker_alive: Annotated[bool, _d("True while the index writer thread runs (never on a reader)")]
    version: Annotated[str, _d("lode version")]
    search_processes: Annotated[
        int, _d("search processes answering searches now (0: searches run in the server process)")
    ] = 0
    role: Annotated[
        str,
        _d("writer: this server writes the index; reader: it only reads it (lode serve --read-only)"),
    ] = "writer"
    index_version: Annotated[
        int | None,
        _d(
            "The newest version of the chunk table this server has seen: searches read it (a reader, "
            "for up to LODE_READ_CONSISTENCY_SECONDS after a newer commit, the one before); null "
            "before the first look"
        ),
    ] = None
    reason: Annotated[
        str | None,
        _d("Why the server is degraded or starting (null when ok), e.g. a storage failure and where"),
    ] = None


class StoreProblemOut(msgspec.Struct):
    """One inconsistency or damage the check found."""

    kind: Annotated[
        str,
        _d(
            "unreadable, index, duplicate, orphan, missing, stale, unembedded, hash, vector or "
            "columns; for work left to do, rechunk or reembed"
        ),
    ]
    table: Annotated[str, _d("The table it is in, e.g. code_chunks")]
    detail: Annotated[str, _d("What was seen, with an example row")]
    count: Annotated[int, _d("How many rows have it")]


class StoreCheckOut(msgspec.Struct):
    """The store verified: tables, data files, indexes and row agreement."""

    ok: Annotated[bool, _d("True when nothing is wrong")]
    problems: Annotated[list[StoreProblemOut], _d("Everything wrong (empty when ok)")]
    rows: Annotated[dict[str, int], _d("Rows read per table (-1: the table could not be read)")]
    indexes: Annotated[dict[str, str], _d("Each index and its answer to one query: ok, or the error")]
    seconds: Annotated[float, _d("How long the check took")]
    pending: Annotated[
        list[StoreProblemOut],
        _d("Work left for the index's writer, not damage: files and vectors to make again after an upgrade"),
    ] = msgspec.field(default_factory=list)


class StatusOut(msgspec.Struct):
    """The whole service at a glance."""

    version: Annotated[str, _d("lode version")]
    db: Annotated[str, _d("Index folder (database path) on the server's machine")]
    model_id: Annotated[str, _d("Embedding model id")]
    dimension: Annotated[int, _d("Length of the embedding vectors")]
    documents: Annotated[int, _d("Indexed files of every project")]
    chunks: Annotated[int, _d("Chunks of every project")]
    chunks_embedded: Annotated[int, _d("Chunks with a vector of their current text")]
    embedding_cache: Annotated[int, _d("Cached vectors, keyed by model and embedding-text hash")]
    file_errors: Annotated[int, _d("Files that failed to chunk or embed (retried on the next run)")]
    queue: Annotated[dict[str, int], _d("Tasks by status")]
    projects: Annotated[list[ProjectOut], _d("Every project with its index size")]
    worker_error: Annotated[str | None, _d("Last error of the index writer thread (null if none)")] = None
