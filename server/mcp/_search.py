"""The ``search`` MCP tool: hybrid search with every filter, answered as
``path:start-end  kind name  (score)`` and the unit's numbered code, best first, cut to
``max_tokens`` with the offset that continues.

Its filters are the table ``FILTERS``: each is passed by name to ``SearchOptions``, so a
new search filter is one line there (and a field of ``SearchOptions``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from indexer.errors import ValidationError
from indexer.limits import quote
from indexer.search import ChunkHit, DocumentHit, SearchOptions, SearchResponse
from server.context import ServerContext
from server.mcp._answer import Block, Fitted, fit_blocks, fit_json, numbered, read_on, span
from server.mcp._params import FORMAT, MAX_TOKENS, Param, Strs, Tool

__all__ = ["FILTERS", "SEARCH_DESCRIPTION", "TOOL", "hit_header", "unit_name"]

#: Every filter of ``search``, passed to ``SearchOptions`` under its own name (lists as tuples).
FILTERS: tuple[Param, ...] = (
    Param("languages", Strs, [], "e.g. python, go"),
    Param("path_include", Strs, [], "Globs: src/**/*.py"),
    Param("path_exclude", Strs, [], ""),
    Param("node_types", Strs, [], "function, class, section..."),
    Param("node_name_pattern", str | None, None, "Glob on unit names"),
    Param("parent_context_pattern", str | None, None, "Glob on the enclosing scope"),
    Param("scope_depth", list[int] | None, None, "[min, max]"),
    Param("has_definitions", Strs, [], "Defines one of these names"),
    Param("has_references", Strs, [], "Uses one of these names"),
    Param("roles", Strs, [], "implementation, test, docs..."),
    Param("exclude_roles", Strs, [], ""),
)

PARAMS: tuple[Param, ...] = (
    Param("query", str, ..., ""),
    Param("projects", Strs, [], ""),
    Param("granularity", Literal["chunk", "document"], "chunk", ""),
    Param("mode", Literal["hybrid", "semantic", "lexical"], "hybrid", ""),
    *FILTERS,
    Param("limit", int | None, None, "Default: what fits"),
    Param("offset", int, 0, ""),
    MAX_TOKENS(2000),
    FORMAT,
    Param("ids", bool, False, ""),
)

SEARCH_DESCRIPTION = (
    "Find code or docs by meaning or name ('where are tokens refreshed', 'parseRequest'): "
    "'path:start-end  kind name  (score)' and numbered code per unit, best first, within max_tokens. "
    "granularity=document ranks files."
)


def unit_name(hit: ChunkHit) -> str:
    """A unit's qualified name: ``Cart.remove_item``, ``Guide/Sessions`` for a section."""
    parts = [p for p in hit.scope_path if p]
    if not parts:
        return hit.node_name
    return ("/" if hit.node_type == "section" else ".").join(parts)


def hit_header(hit: ChunkHit, *, project: bool = False, ids: bool = False) -> str:
    """``path:start-end  kind name  (score)``, with ``[project]`` and the id when asked."""
    name = unit_name(hit)
    parts = [span(hit.file_path, hit.start_line, hit.end_line), f"{hit.node_type} {name}".strip()]
    if hit.role != "implementation":
        parts.append(hit.role)
    if hit.folded_pieces:  # a long unit: where it all is
        parts.append(f"unit {hit.unit_start_line}-{hit.unit_end_line}")
    parts.append(f"({hit.relevance_score:.2f})")
    if project:
        parts.append(f"[{hit.project}]")
    if ids:
        parts.append(f"id={hit.id}")
    return "  ".join(parts)


def _chunk_block(hit: ChunkHit, many: bool, ids: bool) -> Block:
    body = numbered(hit.content.splitlines(), hit.start_line)
    return Block(
        hit_header(hit, project=many, ids=ids),
        tuple(body),
        read_on(hit.file_path, hit.start_line, hit.end_line),
    )


def _document_block(doc: DocumentHit, many: bool, ids: bool) -> Block:
    header = f"{doc.file_path}  file  ({doc.relevance_score:.2f})  {doc.chunk_count} units"
    if many:
        header += f"  [{doc.project}]"
    if ids:
        header += f"  id={doc.id}"
    body: list[str] = []
    for hit in doc.chunks:
        body.append("  " + hit_header(hit, ids=ids))
        body += numbered(hit.content.splitlines(), hit.start_line)
    return Block(header, tuple(body))


def ranked_hits(response: SearchResponse) -> list[ChunkHit]:
    """Chunk hits best first (the engine groups them by file)."""
    hits = [hit for group in response.groups for hit in group.chunks]
    return sorted(hits, key=lambda h: -h.relevance_score)


@dataclass(frozen=True, slots=True)
class _Page:
    """One search's results as the answer sees them."""

    blocks: list[Block]
    items: list[dict[str, Any]]
    more: int
    """Results beyond the ones fetched (the engine has more)."""


def _page(response: SearchResponse, ids: bool) -> _Page:
    document = response.granularity == "document"
    projects = {h.project for h in response.documents} | {g.project for g in response.groups}
    many = len(projects) > 1
    if document:
        blocks = [_document_block(d, many, ids) for d in response.documents]
        items = [_document_item(d, ids) for d in response.documents]
        fetched = len(response.documents)
    else:
        hits = ranked_hits(response)
        blocks = [_chunk_block(h, many, ids) for h in hits]
        items = [_hit_item(h, ids) for h in hits]
        fetched = len(hits)
    more = max(0, response.total - response.offset - fetched) if response.has_more else 0
    return _Page(blocks, items, more)


def _hit_item(hit: ChunkHit, ids: bool) -> dict[str, Any]:
    item = {
        "project": hit.project, "path": hit.file_path, "start_line": hit.start_line,
        "end_line": hit.end_line, "kind": hit.node_type, "name": unit_name(hit),
        "language": hit.language, "score": round(hit.relevance_score, 4), "code": hit.content,
    }  # fmt: skip
    if ids:
        item["id"] = hit.id
    return item


def _document_item(doc: DocumentHit, ids: bool) -> dict[str, Any]:
    item: dict[str, Any] = {
        "project": doc.project, "path": doc.file_path, "score": round(doc.relevance_score, 4),
        "units": doc.chunk_count, "languages": list(doc.languages),
        "chunks": [_hit_item(h, ids) for h in doc.chunks],
    }  # fmt: skip
    if ids:
        item["id"] = doc.id
    return item


def _footer(offset: int, more: int, budget: int) -> Callable[[Fitted], str]:
    def footer(fitted: Fitted) -> str:
        notes = []
        if fitted.headers_only:
            notes.append(
                f"[{fitted.headers_only} results shown without their code to fit max_tokens={budget}: "
                "read them by path and lines]"
            )
        left = fitted.left_out + more
        if left:
            notes.append(
                f"[{left} more results left out: search again with offset={offset + fitted.shown} "
                "(or a larger max_tokens)]"
            )
        if not fitted.shown and not left:
            notes.append("[no results: try other words, another mode, or fewer filters]")
        return "\n".join(notes)

    return footer


def render_search(
    ctx: ServerContext, response: SearchResponse, budget: int, fmt: str, ids: bool = False
) -> str:
    """A search's answer as text (or JSON) within ``budget`` tokens."""
    page = _page(response, ids)
    counter = ctx.token_counter()
    if fmt == "json":

        def wrap(kept: list[Any], left: int) -> dict[str, Any]:
            left += page.more
            out: dict[str, Any] = {"results": kept, "left_out": left}
            if left:
                out["next_offset"] = response.offset + len(kept)
            if response.warnings:
                out["warnings"] = list(response.warnings)
            return out

        return fit_json(counter, page.items, budget, wrap)[0]
    head = "\n".join(f"[warning: {w}]" for w in response.warnings)
    return fit_blocks(counter, head, page.blocks, budget, _footer(response.offset, page.more, budget)).text


def _options(args: dict[str, Any], budget: int) -> SearchOptions:
    filters: dict[str, Any] = {}
    for param in FILTERS:
        value = args[param.name]
        filters[param.name] = tuple(value) if isinstance(value, list) else value
    depth = filters.get("scope_depth")
    if depth is not None and len(depth) != 2:
        raise ValidationError("scope_depth", f"must be [min, max] (got {quote(list(depth))})")
    limit = args["limit"]
    if limit is None:  # as many as the budget can show, at least as headers
        limit = min(100, max(10, budget // 50))
    document = args["granularity"] == "document"
    return SearchOptions(
        query=args["query"], projects=tuple(args["projects"]), granularity=args["granularity"],
        mode=args["mode"], limit=limit, file_limit=limit if document else 5, offset=args["offset"],
        **filters,
    )  # fmt: skip


def _search(ctx: ServerContext, args: dict[str, Any], budget: int) -> str:
    response = ctx.search(_options(args, budget))
    return render_search(ctx, response, budget, args["format"], args["ids"])


TOOL = Tool("search", SEARCH_DESCRIPTION, PARAMS, _search)
