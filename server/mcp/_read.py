"""The ``read`` MCP tool: an indexed file, a line range of it or one unit of it
(``path#Class.method``), by path (the project only when several have that path; a chunk
or document id also works), as numbered lines cut to ``max_tokens`` with the line to
continue from."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from indexer.errors import NotFoundError, ValidationError
from indexer.limits import check_text, quote, quote_items
from indexer.models import Project
from indexer.outline import Outline, OutlineNode
from server.context import ServerContext
from server.mcp._answer import Block, Fitted, fit_blocks, numbered, span
from server.mcp._params import FORMAT, MAX_TOKENS, Param, Tool

__all__ = ["READ_DESCRIPTION", "TOOL", "render_read", "resolve_project", "target_of_node"]

PARAMS: tuple[Param, ...] = (
    Param("path", str | None, None, "From the project root; path#Class.method: one unit"),
    Param("project", str | None, None, "Only if several have the path"),
    Param("start_line", int | None, None, ""),
    Param("end_line", int | None, None, ""),
    Param("id", str | None, None, "Chunk or document id, instead of path"),
    MAX_TOKENS(4000),
    FORMAT,
)

READ_DESCRIPTION = (
    "Read an indexed file: whole, start_line-end_line, or one unit 'path#Class.method'. Numbered "
    "lines within max_tokens; a cut answer gives the start_line to go on."
)


def resolve_project(ctx: ServerContext, ref: str | None, field: str = "project") -> Project:
    """The project named ``ref``, or the only one when ``ref`` is None."""
    store = ctx.lode.store
    if ref:
        check_text(field, ref)
        try:
            return store.projects.get(ref)
        except NotFoundError as exc:
            raise NotFoundError(str(exc), field) from None
    projects = store.projects.all()
    if len(projects) == 1:
        return projects[0]
    names = quote_items(sorted(p.name for p in projects)) if projects else "none is registered"
    raise ValidationError(field, f"name a project ({names})")


@dataclass(frozen=True, slots=True)
class _Target:
    project: Project
    path: str
    document_id: str
    start: int | None
    end: int | None
    label: str = ""


def _by_path(ctx: ServerContext, path: str, project: str | None) -> tuple[Project, str]:
    store = ctx.lode.store
    candidates = [resolve_project(ctx, project)] if project else store.projects.all()
    found = [(p, d.id) for p in candidates if (d := store.documents.find(p.id, path)) is not None]
    if not found:
        where = f" in project {quote(project)}" if project else ""
        raise NotFoundError(f"no indexed file {quote(path)}{where} (search or outline find it)", "path")
    if len(found) > 1:
        names = quote_items(p.name for p, _ in found)
        raise ValidationError("project", f"{quote(path)} is in several projects ({names}): name one")
    return found[0]


def _unit(ctx: ServerContext, project: Project, path: str, unit: str) -> tuple[int, int, str]:
    outline = ctx.lode.outline(project.name)
    node = outline.nodes.get(f"{path}#{unit}")
    if node is None:
        ends = [n for n in outline.nodes.values() if n.path == path and "#" in n.id]
        matches = [n for n in ends if n.id.split("#", 1)[1].rsplit(".", 1)[-1].rsplit("/", 1)[-1] == unit]
        if len(matches) != 1:
            shown = quote_items(n.id.split("#", 1)[1] for n in matches)
            listed = f"outline action=ls path={quote(path)} lists the units"
            hint = f"it matches {shown}" if matches else listed
            raise NotFoundError(f"no single unit {quote(unit)} in {quote(path)}: {hint}", "path")
        node = matches[0]
    return node.start_line, node.end_line, f"{node.kind} {node.id.split('#', 1)[1]}"


def target_of_node(ctx: ServerContext, outline: Outline, node: OutlineNode) -> _Target:
    """What ``read`` reads for an outline node of a file (the whole file, or the unit's lines)."""
    project = ctx.lode.store.projects.get(outline.project)
    doc_id = outline.document_ids([node.path]).get(node.path)
    if doc_id is None:
        raise NotFoundError(f"no indexed file {quote(node.path)}", "path")
    name = node.id.split("#", 1)[1] if "#" in node.id else ""
    if not name:
        return _Target(project, node.path, doc_id, None, None)
    return _Target(project, node.path, doc_id, node.start_line, node.end_line, f"{node.kind} {name}")


def _target(ctx: ServerContext, args: dict[str, Any]) -> _Target:
    store = ctx.lode.store
    start, end = args["start_line"], args["end_line"]
    if args["id"]:
        check_text("id", args["id"])
        chunks = store.chunks.get([args["id"]])
        if chunks:
            c = chunks[0]
            project = store.projects.get(c.project_id)
            label = f"{c.chunk.node_type} {c.chunk.node_name}".strip()
            return _Target(project, c.file_path, c.file_id, start or c.chunk.start_line,
                           end or c.chunk.end_line, label)  # fmt: skip
        docs = store.documents.get([args["id"]])
        if not docs:
            raise NotFoundError(f"no chunk or document with id {quote(args['id'])}", "id")
        project = store.projects.get(docs[0].project_id)
        return _Target(project, docs[0].file_path, docs[0].id, start, end)
    raw = (args["path"] or "").strip()
    if not raw:
        raise ValidationError("path", "give a path (or an id)")
    check_text("path", raw)
    path, _, unit = raw.partition("#")
    project, doc_id = _by_path(ctx, path.strip("/"), args["project"])
    if unit:
        first, last, label = _unit(ctx, project, path.strip("/"), unit)
        return _Target(project, path.strip("/"), doc_id, start or first, end or last, label)
    return _Target(project, path.strip("/"), doc_id, start, end)


def _lines(ctx: ServerContext, target: _Target) -> tuple[list[str], int, int]:
    lines = (ctx.lode.store.documents.content(target.document_id) or "").splitlines()
    first = 1 if target.start is None else target.start
    last = len(lines) if target.end is None else min(target.end, len(lines))
    if first < 1 or (lines and first > len(lines)):
        raise ValidationError("start_line", f"must be between 1 and {max(1, len(lines))} (got {first})")
    if target.end is not None and target.end < first:
        raise ValidationError("end_line", f"must be >= start_line ({first}) (got {target.end})")
    return lines, first, last


def _footer(budget: int) -> Callable[[Fitted], str]:
    def footer(fitted: Fitted) -> str:
        return "" if fitted.shown else f"[nothing fits max_tokens={budget}]"

    return footer


def render_read(ctx: ServerContext, target: _Target, budget: int, fmt: str, many: bool) -> str:
    """The target's lines as an answer within ``budget`` tokens."""
    lines, first, last = _lines(ctx, target)
    body = lines[first - 1 : last]
    if fmt == "json":
        return _json(ctx, target, body, first, budget)
    header = "  ".join(
        x
        for x in (
            span(target.path, first, last),
            target.label,
            f"(of {len(lines)} lines)" if target.start is None and target.end is None else "",
            f"[{target.project.name}]" if many else "",
        )
        if x
    )

    def cut(kept: int) -> str:
        at = first + kept
        return f"… lines {at}-{last} not shown (max_tokens={budget}): read again with start_line={at}"

    block = Block(header, tuple(numbered(body, first)), cut)
    return fit_blocks(ctx.token_counter(), "", [block], budget, _footer(budget)).text


def _json(ctx: ServerContext, target: _Target, body: list[str], first: int, budget: int) -> str:
    counter = ctx.token_counter()

    def dump(keep: int) -> str:
        out: dict[str, Any] = {"project": target.project.name, "path": target.path, "start_line": first,
                               "end_line": first + keep - 1, "text": "\n".join(body[:keep])}  # fmt: skip
        if keep < len(body):
            out["next_start_line"] = first + keep
        return json.dumps(out, ensure_ascii=False, separators=(",", ":"))

    low, high = 0, len(body)  # the most whole lines that fit
    while low < high:
        mid = (low + high + 1) // 2
        if counter.count(dump(mid)) <= budget:
            low = mid
        else:
            high = mid - 1
    return dump(low)


def _read(ctx: ServerContext, args: dict[str, Any], budget: int) -> str:
    many = len(ctx.lode.store.projects.all()) > 1
    return render_read(ctx, _target(ctx, args), budget, args["format"], many)


TOOL = Tool("read", READ_DESCRIPTION, PARAMS, _read)
