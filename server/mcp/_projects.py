"""The ``projects`` MCP tool: list what is indexed, register a folder, re-index a project
(or some of its paths) and follow indexing, chosen by ``action``; one line per project or
task, names rather than ids."""

from __future__ import annotations

from typing import Any, Literal

from indexer.api import relative_paths
from indexer.models import Project, Task
from indexer.tasks import task_eta, task_percent
from server.context import ServerContext
from server.mcp._answer import Block, Fitted, fit_blocks, fit_json
from server.mcp._params import FORMAT, MAX_TOKENS, Param, Strs, Tool
from server.mcp._read import resolve_project

__all__ = ["PROJECTS_DESCRIPTION", "TOOL"]

PARAMS: tuple[Param, ...] = (
    Param("action", Literal["list", "register", "reindex", "status"], "list", ""),
    Param("project", str | None, None, ""),
    Param("path", str | None, None, "register: absolute folder"),
    Param("name", str | None, None, "register: default folder name"),
    Param("include", Strs, [], "register: globs"),
    Param("exclude", Strs, [], ""),
    Param("paths", Strs, [], "reindex: relative paths"),
    Param("full", bool, False, "reindex: unchanged files too"),
    MAX_TOKENS(1000),
    FORMAT,
)

PROJECTS_DESCRIPTION = (
    "action=list: each project's root, files, chunks, share embedded; register a folder and index "
    "it; reindex a project or some paths; status: indexing progress."
)


def _project_row(ctx: ServerContext, project: Project) -> tuple[str, dict[str, Any]]:
    store = ctx.lode.store
    files, chunks = store.documents.count(project.id), store.chunks.count(project.id)
    embedded = round(100 * store.vectors.coverage(project.id))
    current = ctx.worker.current(project.id)
    item: dict[str, Any] = {"name": project.name, "root": project.root, "files": files, "chunks": chunks,
                            "embedded_percent": embedded}  # fmt: skip
    parts = [project.name, project.root, f"{files} files", f"{chunks} chunks", f"{embedded}% embedded"]
    if project.last_indexed_at:
        stamp = project.last_indexed_at.isoformat(timespec="seconds")
        parts.append(f"indexed {stamp}")
        item["indexed_at"] = stamp
    if current is not None:
        parts.append(f"indexing {task_percent(current):.0f}%")
        item["indexing_percent"] = task_percent(current)
    return "  ".join(parts), item


def _task_row(ctx: ServerContext, task: Task, names: dict[str, str]) -> tuple[str, dict[str, Any]]:
    percent = task_percent(task)
    eta = task_eta(task, ctx.worker.rate(task.id))
    item: dict[str, Any] = {
        "project": names.get(task.project_id, task.project_id), "status": task.status,
        "phase": task.phase, "files_done": task.files_done, "files_total": task.files_total,
        "chunks_embedded": task.chunks_embedded, "chunks_total": task.chunks_total,
        "percent": percent, "paths": list(task.paths), "message": task.message,
        "errors": list(task.errors[:5]),
    }  # fmt: skip
    parts = [item["project"], f"{task.status} ({task.phase})", f"{percent:.0f}%",
             f"files {task.files_done}/{task.files_total}",
             f"embedded {task.chunks_embedded}/{task.chunks_total}"]  # fmt: skip
    if eta is not None:
        parts.append(f"~{eta:.0f} s left")
    if task.paths:
        parts.append("paths " + ", ".join(task.paths[:5]))
    if task.message:
        parts.append(task.message)
    if task.errors:
        parts.append(f"{len(task.errors)} errors, first: {task.errors[0]}")
    return "  ".join(parts), item


def _answer(
    ctx: ServerContext, head: str, rows: list[tuple[str, dict[str, Any]]], args: dict[str, Any]
) -> str:
    budget = args["max_tokens"]  # checked by add_tools
    counter = ctx.token_counter()
    if args["format"] == "json":

        def wrap(kept: list[Any], left: int) -> dict[str, Any]:
            return {"head": head, "results": kept, "left_out": left}

        return fit_json(counter, [item for _, item in rows], budget, wrap)[0]

    def footer(fitted: Fitted) -> str:
        return f"[{fitted.left_out} more left out to fit max_tokens={budget}]" if fitted.left_out else ""

    return fit_blocks(counter, head, [Block(text) for text, _ in rows], budget, footer).text


def _list(ctx: ServerContext, args: dict[str, Any]) -> str:
    projects = ctx.lode.store.projects.all()
    head = (
        f"{len(projects)} projects"
        if projects
        else "no project yet: projects action=register path=/abs/folder"
    )
    return _answer(ctx, head, [_project_row(ctx, p) for p in projects], args)


def _register(ctx: ServerContext, args: dict[str, Any]) -> str:
    from indexer.errors import ValidationError

    if not args["path"]:
        raise ValidationError("path", "give the absolute folder to register")
    project, _ = ctx.register(args["path"], args["name"] or None, args["include"], args["exclude"])
    head = (f"registered {project.name} at {project.root}; indexing queued "
            f"(projects action=status project={project.name} follows it)")  # fmt: skip
    return _answer(ctx, head, [_project_row(ctx, project)], args)


def _reindex(ctx: ServerContext, args: dict[str, Any]) -> str:
    project = resolve_project(ctx, args["project"])
    paths = relative_paths(args["paths"])
    ctx.require_writer()
    task = ctx.worker.submit(project.id, paths=paths, full=args["full"])
    head = f"re-index of {project.name} queued" + (f" ({len(paths)} paths)" if paths else "")
    return _answer(ctx, head, [_task_row(ctx, task, {project.id: project.name})], args)


def _status(ctx: ServerContext, args: dict[str, Any]) -> str:
    names = {p.id: p.name for p in ctx.lode.store.projects.all()}
    pid = resolve_project(ctx, args["project"]).id if args["project"] else None
    tasks = ctx.worker.list(pid, limit=10)
    head = f"{sum(t.live for t in tasks)} tasks running or queued; latest first"
    return _answer(ctx, head, [_task_row(ctx, t, names) for t in tasks], args)


_ACTIONS = {"list": _list, "register": _register, "reindex": _reindex, "status": _status}


TOOL = Tool(
    "projects", PROJECTS_DESCRIPTION, PARAMS, lambda ctx, args, _: _ACTIONS[args["action"]](ctx, args)
)
