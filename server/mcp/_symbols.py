"""The ``find_symbol`` and ``find_references`` MCP tools: go to definition and find
references from the symbol index (names resolved as text, like ctags: no language server).

``find_symbol`` answers ``path:start-end  kind Qualified.name`` and the definition's
numbered code per candidate, nearest to ``from_path`` first; ``find_references`` names
the definitions, then each caller (the unit a name is used in) as ``path:start-end  kind
Qualified.name`` with its numbered lines using the name. Both are cut to ``max_tokens``
at whole results and say what was left out."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Literal

from indexer.limits import quote
from indexer.models import Symbol
from indexer.symbols import Caller, RankedSymbol, References, SymbolList
from server.context import ServerContext
from server.convert import reference_query, symbol_query
from server.mcp._answer import Block, Fitted, fit_blocks, fit_json, numbered, read_on, span
from server.mcp._params import FORMAT, MAX_TOKENS, Param, Tool

__all__ = ["FIND_REFERENCES_DESCRIPTION", "FIND_SYMBOL_DESCRIPTION", "TOOLS"]

_PROJECT = Param("project", str | None, None, "")

SYMBOL_PARAMS: tuple[Param, ...] = (
    Param("name", str, ..., ""),
    Param("match", Literal["exact", "prefix", "glob", "fuzzy"], "exact", ""),
    Param("kind", str | None, None, "method, class..."),
    _PROJECT,
    Param("from_path", str | None, None, "Rank near this file first"),
    MAX_TOKENS(2000),
    FORMAT,
)

REFERENCE_PARAMS: tuple[Param, ...] = (
    Param("name", str, ..., ""),
    _PROJECT,
    Param("from_path", str | None, None, ""),
    MAX_TOKENS(2000),
    FORMAT,
)

FIND_SYMBOL_DESCRIPTION = (
    "Go to definition: the units named so ('push', 'Stack.push'), found by name like ctags, "
    "nearest first, with numbered code."
)
FIND_REFERENCES_DESCRIPTION = (
    "Find references: the lines using a name, grouped by the unit they are in (its callers)."
)

#: Definitions shown before the callers in ``find_references``.
_DEFINITIONS_SHOWN = 3


def _header(ranked: RankedSymbol, near: bool, many: bool) -> str:
    """``path:start-end  kind Qualified.name`` with its proximity and project when they tell something."""
    s = ranked.symbol
    parts = [span(s.file_path, s.start_line, s.end_line), f"{s.kind} {s.qualified_name}"]
    if near:
        parts.append(f"[{ranked.proximity}]")
    if many:
        parts.append(f"[{ranked.project}]")
    return "  ".join(parts)


def _code(ctx: ServerContext, symbols: Sequence[Symbol]) -> dict[str, list[str]]:
    """Each symbol's lines (by id), each file read once."""
    texts: dict[str, list[str]] = {}
    out: dict[str, list[str]] = {}
    for s in symbols:
        if s.file_id not in texts:
            texts[s.file_id] = (ctx.lode.store.documents.content(s.file_id) or "").splitlines()
        out[s.id] = texts[s.file_id][s.start_line - 1 : s.end_line]
    return out


def _many(projects: Sequence[str]) -> bool:
    return len(set(projects)) > 1


def _symbol_footer(found: SymbolList, budget: int) -> Callable[[Fitted], str]:
    def footer(fitted: Fitted) -> str:
        notes = []
        if fitted.headers_only:
            notes.append(f"[{fitted.headers_only} shown without their code to fit max_tokens={budget}]")
        left = fitted.left_out + found.total - len(found.symbols)
        if left:
            notes.append(
                f"[{left} more definitions left out: narrow with kind, project or a qualified name "
                "(or a larger max_tokens)]"
            )
        if not fitted.shown and not left:
            notes.append(
                f"[no definition of {quote(found.name, 40)} ({found.match}): try match=fuzzy, or search]"
            )
        return "\n".join(notes)

    return footer


def render_symbols(ctx: ServerContext, found: SymbolList, budget: int, fmt: str, near: bool) -> str:
    """Definitions with their code, nearest first, within ``budget`` tokens."""
    code = _code(ctx, [r.symbol for r in found.symbols])
    many = _many([r.project for r in found.symbols])
    counter = ctx.token_counter()
    if fmt == "json":
        items = [_symbol_item(r, code[r.symbol.id]) for r in found.symbols]

        def wrap(kept: list[Any], left: int) -> dict[str, Any]:
            return {"results": kept, "left_out": left + found.total - len(found.symbols)}

        return fit_json(counter, items, budget, wrap)[0]
    blocks = [
        Block(
            _header(r, near, many),
            tuple(numbered(code[r.symbol.id], r.symbol.start_line)),
            read_on(r.symbol.file_path, r.symbol.start_line, r.symbol.end_line),
        )
        for r in found.symbols
    ]
    return fit_blocks(counter, "", blocks, budget, _symbol_footer(found, budget)).text


def _symbol_item(ranked: RankedSymbol, lines: list[str] | None = None) -> dict[str, Any]:
    s = ranked.symbol
    item = {
        "project": ranked.project, "path": s.file_path, "start_line": s.start_line, "end_line": s.end_line,
        "kind": s.kind, "name": s.qualified_name, "language": s.language, "signature": s.signature,
        "proximity": ranked.proximity,
    }  # fmt: skip
    if lines is not None:
        item["code"] = "\n".join(lines)
    return item


def _caller_units(ctx: ServerContext, callers: Sequence[Caller]) -> dict[tuple[str, str, str], Symbol]:
    """The definition of each caller's unit, by (project, path, qualified name), read in one query."""
    store = ctx.lode.store
    ids = {p.name: p.id for p in store.projects.all()}
    wanted = {(c.project, c.file_path, c.container) for c in callers if c.container}
    names = sorted({container.rsplit(".", 1)[-1] for _, _, container in wanted})
    project_ids = sorted({ids[p] for p, _, _ in wanted if p in ids})
    by_id = {v: k for k, v in ids.items()}
    out: dict[tuple[str, str, str], Symbol] = {}
    for s in store.symbols.definitions(names, project_ids=project_ids, limit=20_000) if names else []:
        key = (by_id.get(s.project_id, ""), s.file_path, s.qualified_name)
        if key in wanted:
            out.setdefault(key, s)
    return out


def _caller_block(caller: Caller, unit: Symbol | None, near: bool, many: bool) -> Block:
    if unit is not None:
        where = span(caller.file_path, unit.start_line, unit.end_line)
        what = f"{unit.kind} {unit.qualified_name}"
    else:
        where = caller.file_path
        what = f"{caller.container_kind} {caller.container}".strip() if caller.container else "top level"
    parts = [where, what]
    if near:
        parts.append(f"[{caller.proximity}]")
    if many:
        parts.append(f"[{caller.project}]")
    width = len(str(caller.sites[-1].line)) if caller.sites else 1
    body = tuple(f"{site.line:>{width}}  {site.text}" for site in caller.sites)

    def note(kept: int) -> str:
        return f"… {len(caller.sites) - kept} more uses in this unit: read path={caller.file_path}"

    return Block("  ".join(parts), body, note)


def _references_head(found: References, near: bool) -> str:
    many = _many([r.project for r in found.definitions])
    lines = [f"defined: {_header(r, near, many)}" for r in found.definitions[:_DEFINITIONS_SHOWN]]
    if len(found.definitions) > _DEFINITIONS_SHOWN:
        lines.append(f"… {len(found.definitions) - _DEFINITIONS_SHOWN} more definitions: find_symbol")
    lines.append(f"{found.total_sites} uses in {found.total_callers} callers")
    return "\n".join(lines)


def _references_footer(found: References, budget: int) -> Callable[[Fitted], str]:
    def footer(fitted: Fitted) -> str:
        left = fitted.left_out + found.total_callers - len(found.callers)
        if left:
            return (
                f"[{left} more callers left out to fit max_tokens={budget}: a larger max_tokens, "
                "or narrow with project]"
            )
        return "" if fitted.shown else f"[no use of {quote(found.name, 40)} found]"

    return footer


def render_references(ctx: ServerContext, found: References, budget: int, fmt: str, near: bool) -> str:
    """The definitions, then each caller with its lines using the name, within ``budget`` tokens."""
    units = _caller_units(ctx, found.callers)
    counter = ctx.token_counter()
    if fmt == "json":
        items = [_caller_item(c, units.get((c.project, c.file_path, c.container))) for c in found.callers]
        definitions = [_symbol_item(r) for r in found.definitions[:_DEFINITIONS_SHOWN]]

        def wrap(kept: list[Any], left: int) -> dict[str, Any]:
            return {"definitions": definitions, "total_sites": found.total_sites, "results": kept,
                    "left_out": left + found.total_callers - len(found.callers)}  # fmt: skip

        while definitions and counter.count(json.dumps(wrap([], 99_999))) > budget // 2:
            definitions.pop()  # the callers' room: definitions are find_symbol's answer
        return fit_json(counter, items, budget, wrap)[0]
    many = _many([c.project for c in found.callers])
    blocks = [
        _caller_block(c, units.get((c.project, c.file_path, c.container)), near, many) for c in found.callers
    ]
    head = _references_head(found, near)
    return fit_blocks(counter, head, blocks, budget, _references_footer(found, budget)).text


def _caller_item(caller: Caller, unit: Symbol | None) -> dict[str, Any]:
    return {
        "project": caller.project, "path": caller.file_path,
        "start_line": unit.start_line if unit else None, "end_line": unit.end_line if unit else None,
        "kind": caller.container_kind, "name": caller.container, "proximity": caller.proximity,
        "sites": [{"line": s.line, "text": s.text} for s in caller.sites],
    }  # fmt: skip


def _limit(budget: int) -> int:
    """Results fetched for a budget: what it can show, at least as headers."""
    return min(1000, max(10, budget // 40))


def _find_symbol(ctx: ServerContext, args: dict[str, Any], budget: int) -> str:
    query = symbol_query(
        args["name"], args["match"], args["kind"], None, args["project"], args["from_path"], _limit(budget)
    )
    found = ctx.lode.symbols(query)
    return render_symbols(ctx, found, budget, args["format"], bool(args["from_path"]))


def _find_references(ctx: ServerContext, args: dict[str, Any], budget: int) -> str:
    query = reference_query(args["name"], None, args["project"], args["from_path"], _limit(budget))
    found = ctx.lode.references(query)
    return render_references(ctx, found, budget, args["format"], bool(args["from_path"]))


TOOLS = (
    Tool("find_symbol", FIND_SYMBOL_DESCRIPTION, SYMBOL_PARAMS, _find_symbol),
    Tool("find_references", FIND_REFERENCES_DESCRIPTION, REFERENCE_PARAMS, _find_references),
)
