"""HTTP types of the editor routes (``GET /api/v1/files/text``, ``GET /api/v1/symbols/at``):
positions as LSP counts them (0-based lines, UTF-16 columns); the candidate definitions
they carry keep the symbol routes' 1-based ``start_line``/``end_line``."""

from __future__ import annotations

from typing import Annotated

import msgspec

from server.http.schemas._fields import ChunkId, FilePath, NodeName, NodeType, ProjectId, ProjectName
from server.http.schemas._fields import describe as _d
from server.http.schemas._positions import FileUri, PositionOut, RangeOut
from server.http.schemas.symbols import SymbolOut

__all__ = ["ChunkAtOut", "FileTextOut", "SymbolAtOut"]


class FileTextOut(msgspec.Struct):
    """Lines of an indexed file as indexed, and the hash of the whole file."""

    uri: FileUri
    project: ProjectName
    project_id: ProjectId
    path: FilePath
    start_line: Annotated[int, _d("First line returned (0-based, LSP)")]
    end_line: Annotated[int, _d("Line after the last one returned (0-based, exclusive, LSP)")]
    total_lines: Annotated[int, _d("Lines of the whole file (a final line ending starts no line)")]
    text: Annotated[str, _d("Lines start_line to end_line - 1, with their line endings")]
    content_hash: Annotated[
        str, _d("blake3 (hex) of the whole file's bytes as indexed: compare it with the editor's buffer")
    ]


class ChunkAtOut(msgspec.Struct):
    """The chunk of the index holding a line."""

    id: ChunkId
    start_line: Annotated[int, _d("Its first line (1-based, as every chunk's; not LSP)")]
    end_line: Annotated[int, _d("Its last line (1-based, inclusive; not LSP)")]
    node_type: NodeType
    node_name: NodeName


class SymbolAtOut(msgspec.Struct):
    """The identifier at a position, its candidate definitions nearest first, and the unit
    and chunk holding the position."""

    uri: FileUri
    project: ProjectName
    project_id: ProjectId
    path: FilePath
    position: Annotated[PositionOut, _d("The position asked (LSP: 0-based line, UTF-16 column)")]
    name: Annotated[str, _d("The identifier there ('' on none: a blank, an operator, a number)")]
    range: Annotated[RangeOut | None, _d("Where the identifier stands (LSP; null without one)")]
    definitions: Annotated[
        list[SymbolOut],
        _d(
            "Definitions named so in the file's project, nearest first (same_file, same_module, "
            "imported, elsewhere); their start_line/end_line are 1-based"
        ),
    ]
    total: Annotated[int, _d("Candidates found before the limit")]
    truncated: Annotated[bool, _d("True when the limit left candidates out")]
    enclosing: Annotated[
        SymbolOut | None, _d("The innermost unit (function, class…) holding the position (null at top level)")
    ]
    chunk: Annotated[ChunkAtOut | None, _d("The chunk holding the line (null on a line no chunk holds)")]
