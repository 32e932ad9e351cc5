"""The symbol index's rows of one file: a definition per unit, a reference per site.

A reference site is an identifier (a name used, not declared) on one line, listed once
per line; its enclosing unit is the innermost unit whose lines hold it. Names declared
inside that unit (its parameters and locals, and the unit's own name) are left out: they
refer to nothing outside it. Names are matched as text, like ctags: no type resolution.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from indexer.chunker._source import Source, UnitDef
from indexer.chunker._symbols import Symbols
from indexer.models import Chunk, SymbolSite

__all__ = ["MAX_REFERENCE_SITES", "symbol_sites"]

#: Reference sites recorded per file (a generated file must not flood the index).
MAX_REFERENCE_SITES = 5000
_MAX_TEXT = 200


class _ChunkLines:
    """Which chunk holds a line (chunks are in file order and do not overlap)."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self.starts = [c.start_line for c in chunks]
        self.chunks = chunks

    def at(self, line: int) -> int:
        """Index of the chunk holding 1-based ``line`` (the nearest one before it if none)."""
        index = max(0, bisect_right(self.starts, line) - 1)
        return self.chunks[index].chunk_index if self.chunks else 0


def _innermost(defs: Sequence[UnitDef], line_count: int) -> list[int]:
    """For every line (0-based), the index in ``defs`` of the innermost unit holding it, or -1."""
    owner = [-1] * line_count
    order = sorted(range(len(defs)), key=lambda i: (defs[i].start, -defs[i].end))
    for index in order:
        unit = defs[index]
        for line in range(unit.start, min(unit.end, line_count - 1) + 1):
            owner[line] = index
    return owner


def _name_parts(unit: UnitDef) -> set[str]:
    return {unit.name, *unit.name.replace("::", ".").split(".")}


def _definitions(defs: Sequence[UnitDef], lines: _ChunkLines) -> list[SymbolSite]:
    kinds = {d.scope: d.node_type for d in defs}
    return [
        SymbolSite(
            role="definition",
            name=d.name,
            kind=d.node_type,
            container=".".join(d.scope[:-1]),
            container_kind=kinds.get(d.scope[:-1], ""),
            scope_path=d.scope,
            signature=d.signature,
            text="",
            start_line=d.start + 1,
            end_line=d.end + 1,
            chunk_index=lines.at(d.start + 1),
        )
        for d in defs
    ]


def _references(
    source: Source, defs: Sequence[UnitDef], symbols: Symbols, lines: _ChunkLines
) -> list[SymbolSite]:
    owner = _innermost(defs, source.line_count)
    local: dict[int, set[str]] = {}
    seen: set[tuple[str, int]] = set()
    out: list[SymbolSite] = []
    for start, name in symbols.uses():
        line = source.line_of(start)
        index = owner[line]
        if index >= 0:
            unit = defs[index]
            if index not in local:
                # its parameters and locals, and its own name (``impl Shape for Circle``
                # does not refer to Circle, ``namespace A.B;`` not to A)
                local[index] = symbols.defined_in(unit.start_byte, unit.end_byte) | _name_parts(unit)
            if name in local[index]:
                continue
        if (name, line) in seen:
            continue
        seen.add((name, line))
        unit_def = defs[index] if index >= 0 else None
        text = source.text(source.line_start(line), source.line_end(line)).strip()
        out.append(
            SymbolSite(
                role="reference",
                name=name,
                kind="reference",
                container=".".join(unit_def.scope) if unit_def else "",
                container_kind=unit_def.node_type if unit_def else "",
                scope_path=unit_def.scope if unit_def else (),
                signature=unit_def.signature if unit_def else "",
                text=text[:_MAX_TEXT],
                start_line=line + 1,
                end_line=line + 1,
                chunk_index=lines.at(line + 1),
            )
        )
        if len(out) >= MAX_REFERENCE_SITES:
            break
    return out


def symbol_sites(
    source: Source, defs: Sequence[UnitDef], symbols: Symbols | None, chunks: Sequence[Chunk]
) -> tuple[SymbolSite, ...]:
    """Definitions (file order) then reference sites (file order) of one file."""
    lines = _ChunkLines(chunks)
    ordered = sorted(defs, key=lambda d: (d.start, -d.end))
    found = _definitions(ordered, lines)
    if symbols is not None:
        found += _references(source, ordered, symbols, lines)
    return tuple(found)
