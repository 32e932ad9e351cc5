"""The bytes of one file with a line index, and ``Piece``: a span that becomes a chunk.

Everything is measured in bytes of the original file; line numbers here are 0-based
(``Chunk`` turns them 1-based). A line's end excludes its ``\\n`` and a ``\\r`` before it.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate

from indexer.chunker._tokens import classify_bytes, count_tokens

__all__ = ["Piece", "Source", "UnitDef"]

_NON_BLANK = re.compile(rb"[^ \t\r\n\x0b\x0c]")


@dataclass(frozen=True, slots=True)
class Piece:
    """A byte span of the file that becomes one chunk, with its metadata."""

    start_byte: int
    end_byte: int
    node_type: str
    name: str = ""
    parent_context: str = ""
    scope: tuple[str, ...] = ()
    extra_defs: tuple[str, ...] = ()
    unit_start: int = -1
    """First line (0-based) of the unit the piece belongs to; -1: the piece's own lines."""
    unit_end: int = -1
    """Last line (0-based, inclusive) of that unit; -1: the piece's own lines."""
    signature: str = ""
    """The unit's header (``def parse(self, data)``), '' for top-level code."""


@dataclass(frozen=True, slots=True)
class UnitDef:
    """A unit the walker found: what the symbol index records as one definition."""

    name: str
    node_type: str
    scope: tuple[str, ...]
    signature: str
    start: int
    """The declaration's first line (0-based; after its doc comment and attributes)."""
    end: int
    """Its last line (0-based, inclusive)."""
    start_byte: int
    end_byte: int


class Source:
    """A file's bytes with the start of every line."""

    __slots__ = ("_classes", "data", "line_starts", "size")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.size = len(data)
        lengths = map(len, data.split(b"\n"))
        starts = list(accumulate(map((1).__add__, lengths), initial=0))
        starts.pop()
        self.line_starts = starts
        self._classes: bytes | None = None

    @property
    def line_count(self) -> int:
        """Number of lines (a final line without ``\\n`` counts; a trailing ``\\n`` opens an empty one)."""
        return len(self.line_starts)

    def line_start(self, line: int) -> int:
        """Byte offset where ``line`` starts."""
        return self.line_starts[line]

    def line_end(self, line: int) -> int:
        """Byte offset just past the text of ``line`` (before ``\\r\\n`` or ``\\n``)."""
        if line + 1 < len(self.line_starts):
            end = self.line_starts[line + 1] - 1
            if end > self.line_starts[line] and self.data[end - 1] == 13:
                end -= 1
            return end
        return self.size

    def line_of(self, offset: int) -> int:
        """The line holding byte ``offset``."""
        return bisect_right(self.line_starts, offset) - 1

    def has_text(self, start: int, end: int) -> bool:
        """True when ``data[start:end]`` holds a non-whitespace byte."""
        return _NON_BLANK.search(self.data, start, end) is not None

    def is_blank_line(self, line: int) -> bool:
        """True when ``line`` holds only whitespace."""
        return not self.has_text(self.line_starts[line], self.line_end(line))

    def tokens(self, start: int, end: int) -> int:
        """Estimated word-pieces of ``data[start:end]``."""
        if self._classes is None:
            self._classes = classify_bytes(self.data)
        return count_tokens(self._classes, start, end)

    def span(self, first: int, last: int) -> tuple[int, int]:
        """Byte range of lines ``first..last`` (inclusive), without the final newline."""
        return self.line_starts[first], self.line_end(last)

    def text(self, start: int, end: int) -> str:
        """``data[start:end]`` decoded (invalid UTF-8 replaced by U+FFFD)."""
        return self.data[start:end].decode("utf-8", errors="replace")

    def trim(self, start: int, end: int) -> tuple[int, int] | None:
        """Shrink ``[start, end)`` to whole lines from its first to its last non-blank line.

        The start moves back to its line start only over indentation; ``None`` when the
        range holds no text.
        """
        first = _NON_BLANK.search(self.data, start, end)
        if first is None:
            return None
        begin = first.start()
        line_start = self.line_starts[self.line_of(begin)]
        if line_start >= start:
            begin = line_start
        stop = end
        data = self.data
        while stop > begin and data[stop - 1] in b" \t\r\n\x0b\x0c":
            stop -= 1
        return begin, stop
