"""Markdown cut into heading sections: ``scope_path`` is the heading path.

A line-based reader (ATX ``#`` headings and setext underlines, fenced code skipped) is
enough here and much cheaper than a full parse. Text before the first heading is a
``block``; a section over the token limit is split at blank lines.
"""

from __future__ import annotations

import re
from dataclasses import replace

from indexer.chunker._source import Piece, Source
from indexer.chunker._spans import segment_spans
from indexer.config import ChunkerConfig

__all__ = ["markdown_pieces"]

_ATX = re.compile(rb" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*\Z")
_SETEXT = re.compile(rb" {0,3}(=+|-+)[ \t]*\Z")
_FENCE = re.compile(rb" {0,3}(`{3,}|~{3,})")
_LIST_OR_QUOTE = re.compile(rb" {0,3}(?:[-*+>]|\d+[.)])(?:[ \t]|\Z)")


def _headings(source: Source) -> list[tuple[int, int, str]]:
    """``(line, level, title)`` of every heading; a setext heading starts on its text line."""
    found: list[tuple[int, int, str]] = []
    data = source.data
    fence = b""
    previous_text = False
    for line in range(_front_matter_end(source), source.line_count):
        start, end = source.span(line, line)
        text = data[start:end]
        marker = _FENCE.match(text)
        if marker is not None and (not fence or marker.group(1).startswith(fence)):
            fence = b"" if fence else marker.group(1)
            previous_text = False
            continue
        if fence:
            continue
        atx = _ATX.match(text)
        setext = _SETEXT.match(text)
        if atx is not None:
            title = (atx.group(2) or b"").decode("utf-8", errors="replace").strip()
            found.append((line, len(atx.group(1)), title))
        elif setext is not None and previous_text:
            title = source.text(*source.span(line - 1, line - 1)).strip()
            found.append((line - 1, 1 if setext.group(1)[:1] == b"=" else 2, title))
        previous_text = atx is None and bool(text.strip()) and not _LIST_OR_QUOTE.match(text)
    return found


def _front_matter_end(source: Source) -> int:
    """First line after a YAML front matter block (``---`` … ``---``), else 0."""
    if not source.data.startswith(b"---") or source.text(*source.span(0, 0)).strip() != "---":
        return 0
    for line in range(1, min(source.line_count, 200)):
        if source.text(*source.span(line, line)).strip() in ("---", "..."):
            return line + 1
    return 0


def _paragraph_cuts(source: Source, first: int, last: int) -> list[int]:
    return [
        line
        for line in range(first + 1, last + 1)
        if source.is_blank_line(line - 1) and not source.is_blank_line(line)
    ]


def _emit(source: Source, config: ChunkerConfig, lines: tuple[int, int], meta: Piece) -> list[Piece]:
    first, last = lines
    cuts = _paragraph_cuts(source, first, last)
    spans = segment_spans(
        source, first, last, cuts, limit=config.max_chunk_tokens, max_line_bytes=config.max_line_bytes
    )
    return [replace(meta, start_byte=s, end_byte=e) for s, e, _ in spans]


def markdown_pieces(source: Source, config: ChunkerConfig) -> list[Piece]:
    """Sections of a Markdown file, one piece each (more when a section is too big)."""
    headings = _headings(source)
    pieces: list[Piece] = []
    first_heading = headings[0][0] if headings else source.line_count
    if first_heading > 0:
        pieces.extend(_emit(source, config, (0, first_heading - 1), Piece(0, 0, "block")))
    stack: list[tuple[int, str]] = []
    for index, (line, level, title) in enumerate(headings):
        while stack and stack[-1][0] >= level:
            stack.pop()
        parent = f"{'#' * stack[-1][0]} {stack[-1][1]}" if stack else ""
        stack.append((level, title))
        last = headings[index + 1][0] - 1 if index + 1 < len(headings) else source.line_count - 1
        meta = Piece(0, 0, "section", title, parent, tuple(t for _, t in stack))
        pieces.extend(_emit(source, config, (line, last), meta))
    return pieces
