"""What the editor operations take and return (plain frozen dataclasses).

Their positions are LSP's (``indexer.positions``): 0-based lines, UTF-16 columns, ranges
whose end is exclusive. The candidate definitions they carry keep the symbol index's own
1-based ``start_line``/``end_line``.
"""

from __future__ import annotations

from dataclasses import dataclass

from indexer.positions import Position, Range
from indexer.symbols import RankedSymbol

__all__ = ["ChunkAt", "FileText", "PositionQuery", "SymbolAt", "TextQuery"]


@dataclass(frozen=True, slots=True)
class TextQuery:
    """Read lines of an indexed file (``GET /api/v1/files/text``)."""

    path: str
    """Relative to its project's root, absolute inside a project's root, or a ``file://`` URI."""
    project: str | None = None
    """Project name or id (needed only for a relative path several projects index)."""
    start_line: int | None = None
    """First line (0-based, inclusive); default 0."""
    end_line: int | None = None
    """Line after the last (0-based, exclusive, like an LSP range ending at (end_line, 0));
    default: the file's end."""


@dataclass(frozen=True, slots=True)
class FileText:
    """Lines of a file as indexed, and the hash of the whole file."""

    uri: str
    """The file's ``file://`` URI."""
    project: str
    project_id: str
    path: str
    """Relative to the project's root."""
    start_line: int
    """First line returned (0-based)."""
    end_line: int
    """Line after the last returned (0-based, exclusive)."""
    total_lines: int
    """Lines of the whole file (a final line ending starts no line)."""
    text: str
    """Lines ``start_line``..``end_line - 1`` with their line endings."""
    content_hash: str
    """blake3 (hex) of the whole file's bytes as indexed: equal to the hash of the editor's
    buffer when the index holds what it shows."""


@dataclass(frozen=True, slots=True)
class PositionQuery:
    """What is at a position of a file (``GET /api/v1/symbols/at``)."""

    path: str
    """As ``TextQuery.path``."""
    line: int
    """0-based line."""
    column: int
    """UTF-16 code units from the line's start (LSP's ``Position.character``)."""
    project: str | None = None
    limit: int = 20
    """Candidate definitions returned."""


@dataclass(frozen=True, slots=True)
class ChunkAt:
    """The chunk of the index holding a line."""

    id: str
    start_line: int
    """1-based, as every chunk's."""
    end_line: int
    node_type: str
    node_name: str


@dataclass(frozen=True, slots=True)
class SymbolAt:
    """The identifier at a position, its candidate definitions nearest first, and the unit
    and chunk the position is in."""

    uri: str
    project: str
    project_id: str
    path: str
    position: Position
    """The position asked (LSP)."""
    name: str
    """The identifier there ('' when the position is on none: a blank, an operator, a number)."""
    range: Range | None
    """Where the identifier stands (LSP; None without one)."""
    definitions: tuple[RankedSymbol, ...]
    """Definitions named so in the file's project, nearest first (same file, same folder,
    imported by the file, elsewhere)."""
    total: int
    """Candidates found before the limit."""
    truncated: bool
    enclosing: RankedSymbol | None
    """The innermost unit (function, method, class…) whose lines hold the position."""
    chunk: ChunkAt | None
    """The chunk holding the position's line (None on a line no chunk holds, e.g. blank)."""
