"""The symbol answers as JSON-ready dicts: the shape the HTTP API and ``lode symbols
--json`` / ``lode refs --json`` print (a candidate is one flat object)."""

from __future__ import annotations

from typing import Any

import msgspec

from indexer.symbols._model import RankedSymbol, References, SymbolDetail, SymbolList

__all__ = ["detail_json", "list_json", "references_json", "symbol_json"]

#: A candidate's keys, in order: the symbol's fields, its project's name, its proximity and
#: its file's URI.
_SYMBOL_KEYS = (
    "id", "project", "project_id", "file_path", "language", "name", "qualified_name", "kind", "container",
    "container_kind", "scope_path", "signature", "start_line", "end_line", "chunk_id", "proximity", "uri",
)  # fmt: skip


def symbol_json(ranked: RankedSymbol) -> dict[str, Any]:
    """One candidate definition, flat: the symbol's fields, its project's name, its proximity."""
    own = {"project": ranked.project, "proximity": ranked.proximity, "uri": ranked.uri}
    return {k: own[k] if k in own else msgspec.to_builtins(getattr(ranked.symbol, k)) for k in _SYMBOL_KEYS}


def list_json(found: SymbolList) -> dict[str, Any]:
    """``find_symbols``'s answer."""
    return {**msgspec.to_builtins(found), "symbols": [symbol_json(r) for r in found.symbols]}


def detail_json(detail: SymbolDetail) -> dict[str, Any]:
    """``get_symbol``'s answer."""
    return {
        "symbol": symbol_json(RankedSymbol(detail.symbol, detail.project, "elsewhere", detail.uri)),
        "role": detail.symbol.role,
        "text": detail.symbol.text,
        "code": detail.code,
        "truncated": detail.truncated,
    }


def references_json(found: References) -> dict[str, Any]:
    """``find_references``'s answer (callers and their sites as their fields are)."""
    return {**msgspec.to_builtins(found), "definitions": [symbol_json(r) for r in found.definitions]}
