"""HTTP types of the symbol routes (``/api/v1/symbols…``), their examples, and the
conversions from ``indexer.symbols`` answers."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from indexer.symbols import References, SymbolDetail, SymbolList, detail_json, list_json, references_json
from server._fields import ChunkId, EndLine, FilePath, ProjectId, ProjectName, StartLine
from server._fields import describe as _d

__all__ = [
    "EXAMPLES",
    "CallerOut",
    "ReferenceSiteOut",
    "ReferencesOut",
    "SymbolDetailOut",
    "SymbolListOut",
    "SymbolOut",
    "to_detail",
    "to_list",
    "to_references",
]

_PROXIMITY = "same_file, same_module (same folder), imported (by from_path's imports) or elsewhere"


class SymbolOut(msgspec.Struct):
    """A definition: a unit of the index named so."""

    id: Annotated[str, _d("Symbol id (stable while the file keeps the definition)")]
    project: ProjectName
    project_id: ProjectId
    file_path: FilePath
    language: Annotated[str, _d("Language of the file")]
    name: Annotated[str, _d("The defined name")]
    qualified_name: Annotated[str, _d("Its scope path joined by '.' (Stack.push)")]
    kind: Annotated[str, _d("Node type: function, method, class, struct, namespace, macro…")]
    container: Annotated[str, _d("Scope of the unit it is declared in, joined by '.' ('' at top level)")]
    container_kind: Annotated[str, _d("Node type of that unit ('' when none)")]
    scope_path: Annotated[list[str], _d("Enclosing scopes, outermost first, ending with its name")]
    signature: Annotated[str, _d("Its header as written (def push(self, item))")]
    start_line: StartLine
    end_line: EndLine
    chunk_id: ChunkId
    proximity: Annotated[str, _d(f"How near it is to from_path: {_PROXIMITY}")]


class SymbolListOut(msgspec.Struct):
    """Definitions of a name, nearest to from_path first, then exact names, then types and
    functions before variables."""

    name: Annotated[str, _d("The name asked")]
    match: Annotated[str, _d("exact, prefix, glob or fuzzy")]
    symbols: Annotated[list[SymbolOut], _d("Candidates, best first (at most limit)")]
    total: Annotated[int, _d("Candidates found before the limit")]
    truncated: Annotated[bool, _d("True when the limit left candidates out")]


class SymbolDetailOut(msgspec.Struct):
    """One row of the symbol index (a definition or a reference site) with its code."""

    symbol: Annotated[SymbolOut, _d("The symbol (proximity is always elsewhere here)")]
    role: Annotated[str, _d("definition or reference")]
    text: Annotated[str, _d("A reference's line, trimmed ('' for a definition)")]
    code: Annotated[str, _d("Lines start_line..end_line of the file as indexed")]
    truncated: Annotated[bool, _d("True when the code was cut at 40,000 characters")]


class ReferenceSiteOut(msgspec.Struct):
    """A line where the name is used."""

    id: Annotated[str, _d("Symbol id of the site (GET /api/v1/symbols/{id} shows it)")]
    line: Annotated[int, _d("Line (1-based)")]
    text: Annotated[str, _d("The line, trimmed")]
    chunk_id: ChunkId


class CallerOut(msgspec.Struct):
    """The uses of the name inside one unit (the caller), or at a file's top level."""

    project: ProjectName
    file_path: FilePath
    language: Annotated[str, _d("Language of the file")]
    container: Annotated[str, _d("The unit's scope joined by '.' ('' at file level)")]
    container_kind: Annotated[str, _d("Its node type ('' at file level)")]
    signature: Annotated[str, _d("Its header as written ('' at file level)")]
    proximity: Annotated[str, _d(f"How near the file is to from_path: {_PROXIMITY}")]
    sites: Annotated[list[ReferenceSiteOut], _d("The lines, in order")]


class ReferencesOut(msgspec.Struct):
    """Every use of a name grouped by the unit it is used in, with its candidate definitions."""

    name: Annotated[str, _d("The name asked")]
    definitions: Annotated[list[SymbolOut], _d("Where it may be defined (several when ambiguous)")]
    callers: Annotated[list[CallerOut], _d("Units using it, nearest first (at most limit)")]
    total_sites: Annotated[int, _d("Lines using it")]
    total_callers: Annotated[int, _d("Units using it, before the limit")]
    truncated: Annotated[bool, _d("True when the limit (or the 20,000-site cap) left some out")]


def to_list(found: SymbolList) -> SymbolListOut:
    """``find_symbols``'s answer as its HTTP schema."""
    return msgspec.convert(list_json(found), SymbolListOut)


def to_detail(detail: SymbolDetail) -> SymbolDetailOut:
    """``get_symbol``'s answer as its HTTP schema."""
    return msgspec.convert(detail_json(detail), SymbolDetailOut)


def to_references(found: References) -> ReferencesOut:
    """``find_references``'s answer as its HTTP schema."""
    return msgspec.convert(references_json(found), ReferencesOut)


_SYMBOL = {
    "id": "9f931ee84314082ae533eef9c570b4da",
    "project": "shop",
    "project_id": "0190a4b2-7c3e-7d51-9a2f-3b8c6e1d4f20",
    "file_path": "src/shop/cart.py",
    "language": "python",
    "name": "add_item",
    "qualified_name": "Cart.add_item",
    "kind": "method",
    "container": "Cart",
    "container_kind": "class",
    "scope_path": ["Cart", "add_item"],
    "signature": "def add_item(self, sku: str, quantity: int = 1) -> None",
    "start_line": 14,
    "end_line": 18,
    "chunk_id": "0190a4b2-8d11-7c42-b5e0-2f9a7c3d6e81",
    "proximity": "same_module",
}
_SITE = {
    "id": "4c1f0b8e2d7a9e3f5b6c8d0a1e2f3a4b",
    "line": 9,
    "text": "cart.add_item(sku, 2)",
    "chunk_id": "0190a4b2-8d11-7c42-b5e0-2f9a7c3d6e99",
}

#: One example answer per route.
EXAMPLES: dict[str, Any] = {
    "list": {"name": "add_item", "match": "exact", "symbols": [_SYMBOL], "total": 1, "truncated": False},
    "detail": {
        "symbol": {**_SYMBOL, "proximity": "elsewhere"},
        "role": "definition",
        "text": "",
        "code": "    def add_item(self, sku: str, quantity: int = 1) -> None:\n        …",
        "truncated": False,
    },
    "references": {
        "name": "add_item",
        "definitions": [{**_SYMBOL, "proximity": "elsewhere"}],
        "callers": [
            {
                "project": "shop",
                "file_path": "src/shop/checkout.py",
                "language": "python",
                "container": "checkout",
                "container_kind": "function",
                "signature": "def checkout(cart: Cart, sku: str) -> int",
                "proximity": "elsewhere",
                "sites": [_SITE],
            }
        ],
        "total_sites": 1,
        "total_callers": 1,
        "truncated": False,
    },
}
