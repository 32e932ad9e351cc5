"""The MCP tools of lode before its agent surface (27 of them): callable by their old names
for one release, never listed (``build_mcp`` hides them). ``add_legacy_tools`` registers
them; with ``with_discover`` also the old ``discover`` (whose name the new tool took), so a
benchmark can compare the old answers with the new ones in one run.

Each is a thin call into the same ``indexer`` functions as the HTTP routes, answering the
HTTP API's JSON; results are cut at whole-result boundaries to fit ``max_tokens``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from indexer.api import resolve_project_root
from indexer.chunker import estimate_tokens
from indexer.errors import LodeError, NotFoundError, ValidationError
from indexer.search import SearchOptions
from server.context import ServerContext
from server.convert import to_chunk, to_document, to_project, to_search_response, to_task
from server.mcp_errors import tool_error
from server.mcp_legacy_content import add_content_tools
from server.mcp_legacy_discover import add_discover_tools
from server.mcp_legacy_outline import add_outline_tools

__all__ = ["LEGACY_TOOLS", "add_legacy_tools", "trim_to_tokens"]

#: The old tool names (``discover`` excepted: the new tool has its name).
LEGACY_TOOLS = frozenset({
    "search_code", "list_projects", "register_project", "reindex_project", "index_status", "get_document",
    "get_chunk", "search_content", "find_documents", "get_document_data", "get_document_text",
    "outline_ls", "outline_cat", "outline_find", "outline_grep", "outline_locate", "outline_plan",
    "filter_projects", "score_projects", "expand_queries", "broad_discovery", "semantic_focus",
    "promote_readme", "compress_evidence", "build_answer_plan", "render_prompt",
})  # fmt: skip

Granularity = Literal["document", "chunk"]
Mode = Literal["hybrid", "semantic", "lexical"]
Strs = list[str]


def _jsonable(value: Any) -> Any:
    import msgspec

    return msgspec.to_builtins(value)


def trim_to_tokens(items: list[Any], max_tokens: int | None) -> tuple[list[Any], int]:
    """Keep whole items while their JSON fits ``max_tokens`` (at least one); return (kept, dropped)."""
    if max_tokens is None:
        return items, 0
    kept: list[Any] = []
    used = 0
    for item in items:
        cost = estimate_tokens(json.dumps(item, ensure_ascii=False))
        if kept and used + cost > max_tokens:
            break
        kept.append(item)
        used += cost
    return kept, len(items) - len(kept)


def add_legacy_tools(
    mcp: MCPServer, get_ctx: Callable[[], ServerContext], *, with_discover: bool = False
) -> None:
    """Register the old tools on ``mcp`` (the old ``discover`` too with ``with_discover``)."""
    _add_search_tools(mcp, get_ctx)
    _add_project_tools(mcp, get_ctx)
    _add_read_tools(mcp, get_ctx)
    add_outline_tools(mcp, get_ctx)
    add_content_tools(mcp, get_ctx)
    add_discover_tools(mcp, get_ctx, with_discover=with_discover)


def _add_search_tools(mcp: MCPServer, get_ctx: Callable[[], ServerContext]) -> None:
    @mcp.tool(
        description=(
            "Search indexed code. Use natural language ('where are tokens refreshed') or identifiers "
            "('parseRequest'); hybrid mode combines meaning and exact words. granularity=document returns "
            "files with their best chunks (good first look); granularity=chunk returns ranked code units. "
            "Narrow with languages, path_include globs (src/**/*.py), node_types (function, method, class…), "
            "node_name_pattern globs, has_definitions / has_references (names). Use offset to page and "
            "max_tokens to fit your context."
        )
    )
    def search_code(
        query: Annotated[str, Field(description="What to look for: words or identifiers")],
        projects: Annotated[Strs, Field(description="Project names or ids (default: all)")] = [],  # noqa: B006
        granularity: Annotated[Granularity, Field(description="document or chunk")] = "document",
        mode: Annotated[Mode, Field(description="hybrid (default), semantic or lexical")] = "hybrid",
        languages: Annotated[Strs, Field(description="e.g. python, go, rust")] = [],  # noqa: B006
        path_include: Annotated[
            Strs, Field(description="Path globs to include, relative to the project root")
        ] = [],  # noqa: B006
        path_exclude: Annotated[
            Strs, Field(description="Path globs to exclude, relative to the project root")
        ] = [],  # noqa: B006
        node_types: Annotated[Strs, Field(description="function, method, class, struct, …")] = [],  # noqa: B006
        node_name_pattern: Annotated[str | None, Field(description="Glob on unit names")] = None,
        parent_context_pattern: Annotated[
            str | None, Field(description="Glob on the enclosing declaration")
        ] = None,
        scope_depth: Annotated[list[int] | None, Field(description="[min, max] nesting depth")] = None,
        has_definitions: Annotated[Strs, Field(description="Units defining any of these names")] = [],  # noqa: B006
        has_references: Annotated[Strs, Field(description="Units using any of these names")] = [],  # noqa: B006
        file_limit: Annotated[int, Field(description="Files (document granularity)")] = 5,
        chunks_per_file: Annotated[int, Field(description="Chunks per file (document granularity)")] = 3,
        limit: Annotated[int, Field(description="Chunks (chunk granularity), max 100")] = 10,
        offset: Annotated[int, Field(description="Results to skip, for paging")] = 0,
        max_tokens: Annotated[int | None, Field(description="Cut results to about this many tokens")] = None,
    ) -> dict[str, Any]:
        if scope_depth is not None and len(scope_depth) != 2:
            raise ToolError("invalid argument (scope_depth): must be [min, max]")
        options = SearchOptions(
            query=query, projects=tuple(projects), granularity=granularity, mode=mode,
            languages=tuple(languages),
            path_include=tuple(path_include), path_exclude=tuple(path_exclude), node_types=tuple(node_types),
            node_name_pattern=node_name_pattern, parent_context_pattern=parent_context_pattern,
            scope_depth=(scope_depth[0], scope_depth[1]) if scope_depth else None,
            has_definitions=tuple(has_definitions), has_references=tuple(has_references),
            file_limit=file_limit, chunks_per_file=chunks_per_file, limit=limit, offset=offset,
        )  # fmt: skip
        try:
            response = _jsonable(to_search_response(get_ctx().lode.search(options)))
        except LodeError as exc:
            raise tool_error(exc) from None
        key = "documents" if granularity == "document" else "groups"
        response[key], dropped = trim_to_tokens(response[key], max_tokens)
        response["truncated"] = dropped > 0
        if dropped:
            response["warnings"].append(f"{dropped} result(s) left out to fit max_tokens={max_tokens}")
        return dict(response)


def _add_project_tools(mcp: MCPServer, get_ctx: Callable[[], ServerContext]) -> None:
    @mcp.tool(description="List indexed projects with their size, semantic coverage and current task.")
    def list_projects() -> dict[str, Any]:
        ctx = get_ctx()
        return {"projects": [_jsonable(to_project(ctx, p)) for p in ctx.lode.store.list_projects()]}

    @mcp.tool(
        description=(
            "Register a folder (absolute path on this machine) as a project and queue its indexing. "
            "Returns the project and a task id; follow it with index_status."
        )
    )
    def register_project(
        path: Annotated[str, Field(description="Absolute folder path")],
        name: Annotated[str | None, Field(description="Unique name (default: folder name)")] = None,
        include: Annotated[Strs, Field(description="Only index files matching these globs")] = [],  # noqa: B006
        exclude: Annotated[Strs, Field(description="Never index files matching these globs")] = [],  # noqa: B006
    ) -> dict[str, Any]:
        ctx = get_ctx()
        try:
            ctx.require_writer()
            root = resolve_project_root(path)
            store = ctx.lode.store
            project = store.find_project_by_root(str(root)) or store.add_project(
                name or root.name, str(root), tuple(include), tuple(exclude)
            )
            task = ctx.worker.submit(project.id)
            ctx.watch(project)
        except LodeError as exc:
            raise tool_error(exc) from None
        return {"project": _jsonable(to_project(ctx, project)), "task_id": task.id}

    @mcp.tool(description="Queue a re-index of a project, or of some of its files/folders (relative paths).")
    def reindex_project(
        project: Annotated[str, Field(description="Project name or id")],
        paths: Annotated[Strs, Field(description="Relative files or folders; empty = whole project")] = [],  # noqa: B006
        full: Annotated[bool, Field(description="Re-chunk even unchanged files")] = False,
    ) -> dict[str, Any]:
        ctx = get_ctx()
        try:
            ctx.require_writer()
            found = ctx.lode.store.get_project(project)
            for path in paths:
                if path.startswith("/") or ".." in path.split("/"):
                    raise ValidationError(
                        "paths", f"{path!r} must be relative to the project root, without '..'"
                    )
            task = ctx.worker.submit(found.id, paths=tuple(p.strip("/") for p in paths), full=full)
        except LodeError as exc:
            raise tool_error(exc) from None
        return {"task": _jsonable(to_task(task))}

    @mcp.tool(description="Indexing progress: one task by id, or the recent tasks (of a project).")
    def index_status(
        task_id: Annotated[str | None, Field(description="A task id")] = None,
        project: Annotated[str | None, Field(description="Project name or id")] = None,
    ) -> dict[str, Any]:
        ctx = get_ctx()
        try:
            if task_id:
                return {"task": _jsonable(to_task(ctx.worker.get(task_id), ctx.worker.rate(task_id)))}
            pid = ctx.lode.store.get_project(project).id if project else None
        except LodeError as exc:
            raise tool_error(exc) from None
        tasks = ctx.worker.list(pid, limit=10)
        return {"tasks": [_jsonable(to_task(t, ctx.worker.rate(t.id))) for t in tasks]}


def _add_read_tools(mcp: MCPServer, get_ctx: Callable[[], ServerContext]) -> None:
    @mcp.tool(
        description=(
            "Read an indexed file: by document_id, or by project + path. Optional 1-based inclusive "
            "start_line/end_line; the text comes with line numbers. Use after search_code to see context."
        )
    )
    def get_document(
        document_id: Annotated[str | None, Field(description="Document id from a search result")] = None,
        project: Annotated[str | None, Field(description="Project name or id (with path)")] = None,
        path: Annotated[str | None, Field(description="File path relative to the project root")] = None,
        start_line: Annotated[int | None, Field(description="First line (1-based)")] = None,
        end_line: Annotated[int | None, Field(description="Last line (inclusive)")] = None,
        max_tokens: Annotated[int | None, Field(description="Cut the text to about this many tokens")] = None,
    ) -> dict[str, Any]:
        ctx = get_ctx()
        try:
            doc = _find_document(ctx, document_id, project, path)
            text = ctx.lode.store.document_content(doc.id) or ""
            numbered, truncated = _numbered(text, start_line, end_line, max_tokens)
        except LodeError as exc:
            raise tool_error(exc) from None
        meta = _jsonable(to_document(doc))
        return {**meta, "text": numbered, "truncated": truncated}

    @mcp.tool(description="Read one chunk (a function, class, section…) by id, with all its metadata.")
    def get_chunk(
        chunk_id: Annotated[str, Field(description="Chunk id from a search result")],
    ) -> dict[str, Any]:
        found = get_ctx().lode.store.get_chunks([chunk_id])
        if not found:
            raise ToolError(f"no chunk {chunk_id!r}")
        return dict(_jsonable(to_chunk(found[0])))


def _find_document(ctx: ServerContext, document_id: str | None, project: str | None, path: str | None) -> Any:
    store = ctx.lode.store
    if document_id:
        found = store.get_documents([document_id])
        if not found:
            raise NotFoundError(f"no document {document_id!r}")
        return found[0]
    if not project or not path:
        raise ValidationError("document_id", "give document_id, or project and path")
    doc = store.find_document(store.get_project(project).id, path.strip("/"))
    if doc is None:
        raise NotFoundError(f"no indexed file {path!r} in project {project!r}")
    return doc


def _numbered(text: str, start: int | None, end: int | None, max_tokens: int | None) -> tuple[str, bool]:
    lines = text.splitlines()
    first = start or 1
    last = end or len(lines)
    if first < 1 or last < first:
        raise ValidationError("start_line", f"need 1 <= start_line <= end_line (got {first}, {last})")
    out: list[str] = []
    used = 0
    for number in range(first, min(last, len(lines)) + 1):
        line = f"{number:>5}  {lines[number - 1]}"
        cost = estimate_tokens(line) + 1
        if max_tokens is not None and out and used + cost > max_tokens:
            out.append(f"… cut at line {number - 1} to fit max_tokens={max_tokens}")
            return "\n".join(out), True
        out.append(line)
        used += cost
    return "\n".join(out), False
