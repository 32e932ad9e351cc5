"""HTTP types of the symbol routes (``/api/v1/symbols…``), converted from the JSON of
``indexer.symbols`` answers."""

from __future__ import annotations

from typing import Annotated

import msgspec

from server.http.schemas._choices import Match, Proximity, SymbolKind, SymbolRole
from server.http.schemas._fields import ChunkId, EndLine, FilePath, ProjectId, ProjectName, StartLine
from server.http.schemas._fields import describe as _d
from server.http.schemas._positions import FileUri, RangeOut

__all__ = [
    "CallerOut",
    "ReferenceSiteOut",
    "ReferencesOut",
    "SymbolDetailOut",
    "SymbolListOut",
    "SymbolOut",
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
    kind: Annotated[
        SymbolKind, _d("Node type: function, method, class, struct, namespace, macro… (reference for a site)")
    ]
    container: Annotated[str, _d("Scope of the unit it is declared in, joined by '.' ('' at top level)")]
    container_kind: Annotated[str, _d("Node type of that unit ('' when none)")]
    scope_path: Annotated[list[str], _d("Enclosing scopes, outermost first, ending with its name")]
    signature: Annotated[str, _d("Its header as written (def push(self, item))")]
    start_line: StartLine
    end_line: EndLine
    chunk_id: ChunkId
    proximity: Annotated[Proximity, _d(f"How near it is to from_path: {_PROXIMITY}")]
    uri: FileUri


class SymbolListOut(msgspec.Struct):
    """Definitions of a name, nearest to from_path first, then exact names, then types and
    functions before variables."""

    name: Annotated[str, _d("The name asked")]
    match: Annotated[Match, _d("exact, prefix, glob or fuzzy")]
    symbols: Annotated[list[SymbolOut], _d("Candidates, best first (at most limit)")]
    total: Annotated[int, _d("Candidates found before the limit")]
    truncated: Annotated[bool, _d("True when the limit left candidates out")]


class SymbolDetailOut(msgspec.Struct):
    """One row of the symbol index (a definition or a reference site) with its code."""

    symbol: Annotated[SymbolOut, _d("The symbol (proximity is always elsewhere here)")]
    role: Annotated[SymbolRole, _d("definition or reference")]
    text: Annotated[str, _d("A reference's line, trimmed ('' for a definition)")]
    code: Annotated[str, _d("Lines start_line..end_line of the file as indexed")]
    truncated: Annotated[bool, _d("True when the code was cut at 40,000 characters")]


class ReferenceSiteOut(msgspec.Struct):
    """A line where the name is used."""

    id: Annotated[str, _d("Symbol id of the site (GET /api/v1/symbols/{id} shows it)")]
    line: Annotated[int, _d("Line (1-based, as start_line; ranges holds LSP positions)")]
    text: Annotated[str, _d("The line, trimmed")]
    chunk_id: ChunkId
    ranges: Annotated[
        list[RangeOut],
        _d(
            "Each use of the name on the line as a whole identifier (LSP: 0-based line, UTF-16 "
            "columns; by text, so a use in a comment or string counts too)"
        ),
    ]


class CallerOut(msgspec.Struct):
    """The uses of the name inside one unit (the caller), or at a file's top level."""

    project: ProjectName
    file_path: FilePath
    language: Annotated[str, _d("Language of the file")]
    container: Annotated[str, _d("The unit's scope joined by '.' ('' at file level)")]
    container_kind: Annotated[str, _d("Its node type ('' at file level)")]
    signature: Annotated[str, _d("Its header as written ('' at file level)")]
    proximity: Annotated[Proximity, _d(f"How near the file is to from_path: {_PROXIMITY}")]
    sites: Annotated[list[ReferenceSiteOut], _d("The lines, in order")]
    uri: FileUri


class ReferencesOut(msgspec.Struct):
    """Every use of a name grouped by the unit it is used in, with its candidate definitions."""

    name: Annotated[str, _d("The name asked")]
    definitions: Annotated[list[SymbolOut], _d("Where it may be defined (several when ambiguous)")]
    callers: Annotated[list[CallerOut], _d("Units using it, nearest first (at most limit)")]
    total_sites: Annotated[int, _d("Lines using it")]
    total_callers: Annotated[int, _d("Units using it, before the limit")]
    truncated: Annotated[bool, _d("True when the limit (or the 20,000-site cap) left some out")]
