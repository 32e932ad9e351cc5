"""What is under an editor's cursor: the identifier at a position, its candidate
definitions nearest first, and the unit and chunk holding the position.

Like the symbol operations, by name (ctags, zoekt's ``sym:``), not by a language server:
every definition named so in the file's project is a candidate, ranked by proximity to the
file (same file, same folder, imported by it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from indexer.editor._model import ChunkAt, PositionQuery, SymbolAt
from indexer.editor._read import open_text
from indexer.errors import ValidationError
from indexer.locations import file_uri
from indexer.positions import Position, Range, from_utf16, identifier_at, to_utf16
from indexer.store import Store
from indexer.symbols import RankedSymbol, definitions_near

__all__ = ["Gather", "symbol_at"]

#: Runs independent store reads at once (``Searcher.gather``): name → call, to name → answer.
Gather = Callable[[dict[str, Callable[[], Any]]], dict[str, Any]]


def _one_by_one(calls: dict[str, Callable[[], Any]]) -> dict[str, Any]:
    return {name: call() for name, call in calls.items()}


def _check(query: PositionQuery) -> None:
    for field, value in (("line", query.line), ("column", query.column)):
        if value < 0:
            raise ValidationError(field, f"must be 0 or more (positions are 0-based) (got {value})")
    if not 1 <= query.limit <= 1000:
        raise ValidationError("limit", f"must be between 1 and 1000 (got {query.limit})")


def symbol_at(store: Store, query: PositionQuery, gather: Gather = _one_by_one) -> SymbolAt:
    """The identifier at ``query``'s position (0-based line, UTF-16 column) of an indexed
    file, its definitions in the file's project nearest first, and the innermost unit and
    the chunk holding the position (the three read at once through ``gather``). A position
    on no identifier (or past the file's end) answers an empty name and no definitions."""
    _check(query)
    project, text = open_text(store, query.path, query.project)
    uri = file_uri(project.root, text.file_path)
    lines = text.lines
    line = lines[query.line].removesuffix("\r") if query.line < len(lines) else ""
    span = identifier_at(line, from_utf16(line, query.column)) if query.line < len(lines) else None
    name = line[span[0] : span[1]] if span is not None else ""
    read = gather(
        {
            "definitions": lambda: (
                definitions_near(store, name, project, text.file_path, "\n".join(lines), query.limit)
                if name
                else None
            ),
            "unit": lambda: store.symbols.enclosing(text.document_id, query.line + 1),
            "chunk": lambda: store.chunks.at_line(text.document_id, query.line + 1),
        }
    )
    found, unit, chunk = read["definitions"], read["unit"], read["chunk"]
    return SymbolAt(
        uri=uri,
        project=project.name,
        project_id=project.id,
        path=text.file_path,
        position=Position(query.line, query.column),
        name=name,
        range=(
            Range(
                Position(query.line, to_utf16(line, span[0])), Position(query.line, to_utf16(line, span[1]))
            )
            if span is not None
            else None
        ),
        definitions=found.symbols if found is not None else (),
        total=found.total if found is not None else 0,
        truncated=found.truncated if found is not None else False,
        enclosing=RankedSymbol(unit, project.name, "same_file", uri) if unit is not None else None,
        chunk=ChunkAt(**chunk) if chunk is not None else None,
    )
