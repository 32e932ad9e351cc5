"""Wire types of positions, ranges and file URIs (LSP's conventions), shared by every
answer that says where something is."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

from indexer.limits import MAX_TEXT_CHARS
from server.http.schemas._fields import NO_NUL
from server.http.schemas._fields import describe as _d

__all__ = ["FileArgument", "FileUri", "Matches", "PositionOut", "RangeOut"]

#: A file argument: relative to its project's root, absolute inside it, or a ``file://`` URI
#: (``indexer.locations`` reads it; one outside every root is a 400 naming the field).
FileArgument = Annotated[str, Meta(min_length=1, max_length=MAX_TEXT_CHARS, pattern=NO_NUL)]

#: A file's absolute ``file://`` URI.
FileUri = Annotated[str, _d("The file's absolute file:// URI (its project's root joined with its path)")]


class PositionOut(msgspec.Struct):
    """A place in a file, as LSP's Position: 0-based line, UTF-16 column."""

    line: Annotated[int, _d("Line (0-based, LSP)")]
    character: Annotated[
        int, _d("Column in UTF-16 code units from the line's start (0-based, LSP's Position.character)")
    ]


class RangeOut(msgspec.Struct):
    """A span of a file, as LSP's Range (0-based lines, UTF-16 columns; end exclusive)."""

    start: Annotated[PositionOut, _d("First position (inclusive)")]
    end: Annotated[PositionOut, _d("Position after the last character (exclusive)")]


#: Where the query's terms stand in a hit's text.
Matches = Annotated[
    list[RangeOut],
    _d(
        "Where the query's words and exact terms stand in this text, as ranges of the file "
        "(LSP: 0-based lines, UTF-16 columns), in file order"
    ),
]
