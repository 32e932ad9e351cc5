"""The one list of lode's operations, and the front ends that serve each.

An operation is defined once, in ``indexer``: a callable of the Python API with a typed
request and answer (``python``). The HTTP routes (by OpenAPI operation id), the MCP tools
(by name, with the ``action`` that selects it where a tool serves several) and the CLI
commands that serve it are thin adapters over it. (Not operations: ``lode serve``,
``lode watch`` and ``lode mcp``, which run front ends, ``lode service …``, which installs
and runs ``lode serve`` as the user's service, and ``GET /health``, the probe.)
``tests/test_operations.py`` holds the list to the app, the MCP server and the CLI (every
route, tool and command belongs to an operation, and every adapter named here exists), and
``docs/architecture.md``'s code map is generated from it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["OPERATIONS", "Operation"]


@dataclass(frozen=True, slots=True)
class Operation:
    """One operation and its adapters."""

    name: str
    """Its name (the HTTP operation id where it has one route)."""
    python: str
    """The Python API that runs it (``module.Class.method``)."""
    summary: str
    """What it does, in a line."""
    http: tuple[str, ...] = ()
    """OpenAPI operation ids of its routes."""
    mcp: tuple[str, ...] = ()
    """MCP tools serving it (``tool`` or ``tool action=…``)."""
    cli: tuple[str, ...] = ()
    """CLI commands serving it (``lode search``)."""
    code: str = "indexer/api.py"
    """Where it is written, in ``indexer`` (a module, or a package ending in ``/``)."""


_LODE = "indexer.api.Lode"
_WORKER = "indexer.tasks.IndexWorker"

#: Every operation, by front-end area.
OPERATIONS: tuple[Operation, ...] = (
    # ---- retrieval ---------------------------------------------------------------------
    Operation("search", f"{_LODE}.search", "Hybrid search with metadata filters, files or chunks",
              ("search",), ("search",), ("lode search",), code="indexer/search/"),
    Operation("search_content", f"{_LODE}.search_content", "Passages by meaning and exact terms, paged",
              ("search_content",), (), ("lode search-content",), code="indexer/search/_content.py"),
    Operation("find_documents", f"{_LODE}.find_documents", "The files that matter, with summaries",
              ("find_documents",), (), ("lode find-documents",), code="indexer/search/_content.py"),
    Operation("discover", "indexer.search.discover.discover", "A cited evidence prompt for a broad question",
              ("discover", "discover_stage"), ("discover",), ("lode discover",),
              code="indexer/search/discover/"),
    # ---- symbols -----------------------------------------------------------------------
    Operation("find_symbols", f"{_LODE}.symbols", "Go to definition: the definitions of a name",
              ("find_symbols",), ("find_symbol",), ("lode symbols",), code="indexer/symbols/"),
    Operation("find_references", f"{_LODE}.references", "Find references: the uses of a name, by caller",
              ("find_references",), ("find_references",), ("lode refs",), code="indexer/symbols/"),
    Operation("get_symbol", f"{_LODE}.symbol", "One symbol with its code", ("get_symbol",),
              code="indexer/symbols/"),
    # ---- editors (LSP positions: 0-based lines, UTF-16 columns) --------------------------
    Operation("read_text", f"{_LODE}.read_text", "Lines of an indexed file and its hash, by path or URI",
              ("read_text",), code="indexer/editor/"),
    Operation("symbol_at", f"{_LODE}.symbol_at", "The symbol at a position, its definitions and unit",
              ("symbol_at",), code="indexer/editor/"),
    # ---- reading and navigating ----------------------------------------------------------
    Operation("read", f"{_LODE}.document_text", "Lines of a file by project and path",
              ("get_project_document",), ("read",), code="indexer/documents.py"),
    Operation("get_document", f"{_LODE}.store", "A document by id, with its text and chunks",
              ("get_document",), code="indexer/documents.py"),
    Operation("get_chunk", f"{_LODE}.store", "A chunk by id, with its metadata", ("get_chunk",),
              code="indexer/store/_chunks.py"),
    Operation("outline_ls", f"{_LODE}.outline", "A node's children: folders, files, units",
              ("outline_ls",), ("outline action=ls",), ("lode outline ls",), code="indexer/outline/"),
    Operation("outline_cat", f"{_LODE}.outline", "A node's text", ("outline_cat",),
              ("outline action=cat",), ("lode outline cat",), code="indexer/outline/"),
    Operation("outline_find", f"{_LODE}.outline", "Nodes by title", ("outline_find",),
              ("outline action=find",), ("lode outline find",), code="indexer/outline/"),
    Operation("outline_grep", f"{_LODE}.outline", "Lines matching a regular expression",
              ("outline_grep",), ("outline action=grep",), ("lode outline grep",), code="indexer/outline/"),
    Operation("outline_locate", f"{_LODE}.outline", "Where a question's answer may be",
              ("outline_locate",), (), ("lode outline locate",), code="indexer/outline/"),
    Operation("outline_plan", f"{_LODE}.outline", "A prompt that plans a walk of the outline",
              ("outline_plan",), (), ("lode outline plan",), code="indexer/outline/"),
    Operation("chunk_file", "indexer.chunker.chunk_file", "A file's chunks and their metadata",
              cli=("lode chunk",), code="indexer/chunker/"),
    # ---- projects and indexing -----------------------------------------------------------
    Operation("list_projects", f"{_LODE}.list_projects", "Every registered project",
              ("list_projects",), ("projects action=list",), ("lode projects list",)),
    Operation("get_project", f"{_LODE}.store", "One project with its index size", ("get_project",)),
    Operation("create_project", f"{_LODE}.index", "Register a folder and index it",
              ("create_project",), ("projects action=register",), ("lode index",)),
    Operation("patch_project", f"{_LODE}.store", "Rename a project or change its globs",
              ("patch_project",)),
    Operation("index_project", f"{_WORKER}.submit", "Index a project (or some paths) again",
              ("index_project",), ("projects action=reindex",), ("lode index",), code="indexer/tasks.py"),
    Operation("delete_project", f"{_LODE}.remove_project", "Forget a project and its index",
              ("delete_project",), (), ("lode projects remove",)),
    Operation("list_files", f"{_LODE}.store", "A project's indexed files, paged", ("list_files",),
              code="indexer/store/_documents.py"),
    Operation("list_tasks", f"{_WORKER}.list", "Indexing tasks, newest first", ("list_tasks",),
              code="indexer/_task_queue.py"),
    Operation("get_task", f"{_WORKER}.get", "One task with its progress", ("get_task",),
              ("projects action=status",), code="indexer/_task_queue.py"),
    Operation("cancel_task", f"{_WORKER}.cancel", "Cancel a queued or running task", ("cancel_task",),
              code="indexer/_task_queue.py"),
    Operation("stream_events", "indexer.events.EventHub.subscribe",
              "Tasks' progress and the index's changes as they happen (server-sent events)",
              ("stream_events",), code="indexer/events.py"),
    # ---- the service ---------------------------------------------------------------------
    Operation("status", f"{_LODE}.status", "Projects, sizes, tasks and the model of the index",
              ("status",), ("projects action=status",), ("lode status",)),
    Operation("check", f"{_LODE}.check", "Verify the index on disk", ("check",), (), ("lode check",),
              code="indexer/store/_check.py"),
    Operation("upgrade", f"{_LODE}.upgrade", "Bring an older index to this lode's schema",
              cli=("lode upgrade",), code="indexer/store/_migrate.py"),
)  # fmt: skip
