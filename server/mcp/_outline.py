"""The ``outline`` MCP tool: a project's structure (folders → files → classes → methods,
documents → sections) with ``ls``, ``find``, ``grep`` and ``cat`` in one tool, chosen by
``action``. Every line names a node the way ``read`` takes it (``path#Class.method``), and
answers are cut to ``max_tokens`` at whole lines, saying how many were left out."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from indexer.errors import FieldError, NotFoundError, ValidationError
from indexer.limits import check_text, quote
from indexer.outline import LIMITS, ListedNode, NodeInfo, Outline
from server.context import ServerContext
from server.mcp._answer import Block, Fitted, fit_blocks, fit_json, fit_text, span
from server.mcp._params import FORMAT, MAX_TOKENS, Param, Tool
from server.mcp._read import render_read, resolve_project
from server.mcp._read import target_of_node as read_target

__all__ = ["OUTLINE_DESCRIPTION", "TOOL"]

Action = Literal["ls", "find", "grep", "cat"]

PARAMS: tuple[Param, ...] = (
    Param("action", Action, "ls", ""),
    Param("project", str | None, None, ""),
    Param("path", str | None, None, "Folder, file or path#Class.method"),
    Param("pattern", str | None, None, "find: name glob; grep: regex"),
    Param("kind", str | None, None, "find: class, function..."),
    Param("depth", int, 1, "ls: levels, 1-5"),
    Param("ignore_case", bool, False, ""),
    MAX_TOKENS(2000),
    FORMAT,
)

OUTLINE_DESCRIPTION = (
    "A project's structure. action=ls: a folder's files or a file's units with line ranges; find: "
    "units by name glob; grep: lines by regex, with their unit; cat: a node's lines or a folder's tree."
)

_SUMMARY_CHARS = 100


def _name(node_id: str) -> str:
    return node_id.split("#", 1)[1] if "#" in node_id else ""


def _node_line(node: ListedNode | NodeInfo, indent: int = 0) -> str:
    """``path:start-end  kind name  — summary`` for a unit, ``path/  directory`` for a folder."""
    path = node.id.split("#", 1)[0]
    name = _name(node.id)
    where = span(path, node.start_line, node.end_line) if name else path
    if node.kind == "directory":
        where += "/"
    parts = ["  " * indent + where, f"{node.kind} {name}".strip()]
    summary = " ".join(node.summary.split())
    if summary:
        parts.append("— " + (summary if len(summary) <= _SUMMARY_CHARS else summary[:_SUMMARY_CHARS] + "…"))
    return "  ".join(parts)


def _flatten(nodes: Sequence[ListedNode], indent: int) -> list[tuple[str, ListedNode]]:
    out: list[tuple[str, ListedNode]] = []
    for node in nodes:
        out.append((_node_line(node, indent), node))
        out += _flatten(node.children, indent + 1)
    return out


def _footer(budget: int, hint: str, capped: bool = False) -> Callable[[Fitted], str]:
    def footer(fitted: Fitted) -> str:
        if fitted.left_out:
            return f"[{fitted.left_out} more left out to fit max_tokens={budget}: {hint}]"
        if capped:
            return f"[more matches exist: {hint}]"
        return "" if fitted.shown else "[nothing found]"

    return footer


def _answer(
    ctx: ServerContext, head: str, lines: Sequence[tuple[str, dict[str, Any]]], budget: int, fmt: str,
    hint: str, capped: bool = False,
) -> str:  # fmt: skip
    counter = ctx.token_counter()
    head = fit_text(counter, head, budget // 2)  # the results' room, whatever the head quotes
    if fmt == "json":

        def wrap(kept: list[Any], left: int) -> dict[str, Any]:
            return {"head": head, "results": kept, "left_out": left, "capped": capped}

        return fit_json(counter, [item for _, item in lines], budget, wrap)[0]
    blocks = [Block(text) for text, _ in lines]
    return fit_blocks(counter, head, blocks, budget, _footer(budget, hint, capped)).text


def _item(node: ListedNode | NodeInfo, depth: int = 0) -> dict[str, Any]:
    return {"id": node.id, "kind": node.kind, "start_line": node.start_line, "end_line": node.end_line,
            "summary": node.summary, **({"depth": depth} if depth else {})}  # fmt: skip


def _ls(ctx: ServerContext, outline: Outline, args: dict[str, Any], budget: int) -> str:
    listing = outline.ls(args["path"], args["depth"], LIMITS["limit"][1])
    node = listing.node
    head = f"{_node_line(node)}  ({node.child_count} children)"
    rows = [(text, _item(child)) for text, child in _flatten(listing.children, 1)]
    return _answer(ctx, head, rows, budget, args["format"], "ls a deeper path, or a larger max_tokens")


def _find(ctx: ServerContext, outline: Outline, args: dict[str, Any], budget: int) -> str:
    found = outline.find(args["pattern"] or "", args["kind"], args["path"], LIMITS["find_limit"][1])
    head = f"{found.total} nodes match {quote(found.title)}"
    rows = [(_node_line(n), _item(n)) for n in found.nodes]
    hint = "a narrower pattern, kind or path"
    return _answer(ctx, head, rows, budget, args["format"], hint, found.truncated)


def _grep(ctx: ServerContext, outline: Outline, args: dict[str, Any], budget: int) -> str:
    result = outline.grep(args["pattern"] or "", args["path"], LIMITS["grep_limit"][1], args["ignore_case"])
    rows = []
    for match in result.matches:
        unit = _name(match.node)
        text = f"{match.path}:{match.line}  {match.preview.strip()}" + (f"  (in {unit})" if unit else "")
        rows.append((text, {"path": match.path, "line": match.line, "text": match.preview, "unit": unit}))
    head = f"{len(result.matches)} lines match in {result.files_searched} files"
    hint = "a narrower pattern or path"
    return _answer(ctx, head, rows, budget, args["format"], hint, result.truncated)


def _cat(ctx: ServerContext, outline: Outline, args: dict[str, Any], budget: int) -> str:
    node = outline.node(args["path"])
    if node.is_text:
        target = read_target(ctx, outline, node)
        return render_read(ctx, target, budget, args["format"], False)
    listing = outline.ls(node.id, LIMITS["depth"][1], LIMITS["limit"][1])
    rows = [(text, _item(child)) for text, child in _flatten(listing.children, 1)]
    head = f"{_node_line(listing.node)}  ({listing.node.child_count} children)"
    return _answer(ctx, head, rows, budget, args["format"], "cat a deeper path, or a larger max_tokens")


_ACTIONS = {"ls": _ls, "find": _find, "grep": _grep, "cat": _cat}
#: The outline's names of this tool's arguments.
_ARGUMENTS = {"title": "pattern", "node": "path"}


def _as_arguments(exc: ValidationError) -> ValidationError:
    """The error naming this tool's arguments (``pattern``, ``path``) for the outline's."""
    errors = [FieldError(_ARGUMENTS.get(e.field, e.field), e.message) for e in exc.errors]
    return ValidationError(errors[0].field, errors[0].message, more=tuple(errors[1:]))


def _outline(ctx: ServerContext, args: dict[str, Any], budget: int) -> str:
    project = resolve_project(ctx, args["project"])
    if args["path"]:
        args["path"] = check_text("path", args["path"], blank=True).strip().strip("/") or None
    outline = ctx.lode.outline(project.name)
    try:
        return _ACTIONS[args["action"]](ctx, outline, args, budget)
    except NotFoundError as exc:  # an unknown node: the path named it
        raise NotFoundError(str(exc), exc.field or "path") from None
    except ValidationError as exc:
        raise _as_arguments(exc) from None


TOOL = Tool("outline", OUTLINE_DESCRIPTION, PARAMS, _outline)
