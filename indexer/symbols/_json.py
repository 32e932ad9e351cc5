"""The symbol answers as JSON-ready dicts: the shape the HTTP API and ``lode symbols
--json`` / ``lode refs --json`` print (a candidate is one flat object)."""

from __future__ import annotations

from typing import Any

from indexer.symbols._model import Caller, RankedSymbol, References, SymbolDetail, SymbolList

__all__ = ["detail_json", "list_json", "references_json", "symbol_json"]


def symbol_json(ranked: RankedSymbol) -> dict[str, Any]:
    """One candidate definition, flat: the symbol's fields, its project's name, its proximity."""
    s = ranked.symbol
    return {
        "id": s.id,
        "project": ranked.project,
        "project_id": s.project_id,
        "file_path": s.file_path,
        "language": s.language,
        "name": s.name,
        "qualified_name": s.qualified_name,
        "kind": s.kind,
        "container": s.container,
        "container_kind": s.container_kind,
        "scope_path": list(s.scope_path),
        "signature": s.signature,
        "start_line": s.start_line,
        "end_line": s.end_line,
        "chunk_id": s.chunk_id,
        "proximity": ranked.proximity,
    }


def list_json(found: SymbolList) -> dict[str, Any]:
    """``find_symbols``'s answer."""
    return {
        "name": found.name,
        "match": found.match,
        "symbols": [symbol_json(r) for r in found.symbols],
        "total": found.total,
        "truncated": found.truncated,
    }


def detail_json(detail: SymbolDetail) -> dict[str, Any]:
    """``get_symbol``'s answer."""
    return {
        "symbol": symbol_json(RankedSymbol(detail.symbol, detail.project, "elsewhere")),
        "role": detail.symbol.role,
        "text": detail.symbol.text,
        "code": detail.code,
        "truncated": detail.truncated,
    }


def _caller(caller: Caller) -> dict[str, Any]:
    return {
        "project": caller.project,
        "file_path": caller.file_path,
        "language": caller.language,
        "container": caller.container,
        "container_kind": caller.container_kind,
        "signature": caller.signature,
        "proximity": caller.proximity,
        "sites": [{"id": s.id, "line": s.line, "text": s.text, "chunk_id": s.chunk_id} for s in caller.sites],
    }


def references_json(found: References) -> dict[str, Any]:
    """``find_references``'s answer."""
    return {
        "name": found.name,
        "definitions": [symbol_json(r) for r in found.definitions],
        "callers": [_caller(c) for c in found.callers],
        "total_sites": found.total_sites,
        "total_callers": found.total_callers,
        "truncated": found.truncated,
    }
