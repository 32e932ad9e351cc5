"""Positions as the Language Server Protocol counts them: a 0-based line, and a column in
UTF-16 code units from the line's start (a character outside the Basic Multilingual Plane,
such as 😀, counts two; é and 中 count one).

Lines end at ``\\n`` (a ``\\r\\n`` ending is one ending, its ``\\r`` not part of the line's
columns), as the index numbers them. The index's own line fields (``start_line``,
``end_line``, a reference site's ``line``) stay 1-based; every ``Position`` and ``Range``
here is LSP's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "MAX_RANGES",
    "Position",
    "Range",
    "from_utf16",
    "identifier_at",
    "line_texts",
    "name_ranges",
    "term_ranges",
    "to_utf16",
    "utf16_length",
]

#: Most ranges one text gets (a term in every line of a big chunk stops here).
MAX_RANGES = 200
#: Where a word or an identifier's part starts (after a non-alphanumeric, or a camelCase hump).
_WORD_START = r"(?:(?<![A-Za-z0-9])|(?<=[a-z])(?=[A-Z]))"


@dataclass(frozen=True, slots=True)
class Position:
    """A place in a file: LSP's ``Position``."""

    line: int
    """0-based line."""
    character: int
    """UTF-16 code units from the line's start (0-based)."""


@dataclass(frozen=True, slots=True)
class Range:
    """A span of a file: LSP's ``Range`` (``end`` is exclusive)."""

    start: Position
    end: Position


def utf16_length(text: str) -> int:
    """``text``'s length in UTF-16 code units."""
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def to_utf16(line: str, index: int) -> int:
    """The UTF-16 column of code point ``index`` of ``line``."""
    return utf16_length(line[:index])


def from_utf16(line: str, character: int) -> int:
    """The code point index of UTF-16 column ``character`` of ``line`` (past the end: the
    line's length, as LSP says; inside a surrogate pair: that character's start)."""
    if line.isascii():
        return max(0, min(character, len(line)))
    units = 0
    for index, ch in enumerate(line):
        units += 2 if ord(ch) > 0xFFFF else 1
        if units > character:
            return index
    return len(line)


def line_texts(text: str) -> list[str]:
    """``text``'s lines without their endings (``\\n``, or ``\\r\\n``)."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch in "_$"


def identifier_at(line: str, index: int) -> tuple[int, int] | None:
    """(start, end) code point indexes of the identifier at ``index`` of ``line`` (or just
    before it: a cursor after a name is on it); None on anything else (a number, an
    operator, a blank)."""
    if not 0 <= index <= len(line):
        return None
    if (index == len(line) or not _is_word(line[index])) and index > 0 and _is_word(line[index - 1]):
        index -= 1
    if index >= len(line) or not _is_word(line[index]):
        return None
    start, end = index, index + 1
    while start > 0 and _is_word(line[start - 1]):
        start -= 1
    while end < len(line) and _is_word(line[end]):
        end += 1
    if line[start].isdigit():
        return None
    return start, end


def _span(line_no: int, line: str, start: int, end: int) -> Range:
    first = to_utf16(line, start)
    return Range(Position(line_no, first), Position(line_no, first + utf16_length(line[start:end])))


def name_ranges(line_no: int, line: str, name: str) -> list[Range]:
    """Where ``name`` stands on ``line`` as a whole identifier (not inside a longer one)."""
    if not name:
        return []
    pattern = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
    return [_span(line_no, line, m.start(), m.end()) for m in pattern.finditer(line)][:MAX_RANGES]


def term_ranges(
    text: str, first_line: int, terms: Iterable[str], case_sensitive: Iterable[str] = ()
) -> tuple[Range, ...]:
    """Where any of ``terms`` (any case, at the start of a word or of an identifier's part:
    ``item`` in ``item_count``, ``addItem`` and ``items``, not in ``listitem``) or of
    ``case_sensitive`` (exact case, anywhere) occurs in ``text``, whose first line is line
    ``first_line`` (0-based) of its file; in file order, overlapping matches merged."""
    words = [re.escape(t) for t in sorted(set(terms), key=len, reverse=True) if t]
    exact = [re.escape(t) for t in sorted(set(case_sensitive), key=len, reverse=True) if t]
    patterns = [re.compile(_WORD_START + "(?i:" + "|".join(words) + ")")] if words else []
    patterns += [re.compile("|".join(exact))] if exact else []
    if not patterns:
        return ()
    found: list[Range] = []
    for offset, line in enumerate(line_texts(text)):
        spans = sorted({(m.start(), m.end()) for p in patterns for m in p.finditer(line)})
        merged: list[list[int]] = []
        for start, end in spans:
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        found.extend(_span(first_line + offset, line, s, e) for s, e in merged)
        if len(found) >= MAX_RANGES:
            return tuple(found[:MAX_RANGES])
    return tuple(found)
