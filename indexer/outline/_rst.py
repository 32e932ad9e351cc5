"""reStructuredText sections: titles underlined (optionally overlined) with punctuation.

The chunker gives ``.rst`` files line windows; their lines are put back together by line
number and the titles read from them. A title's level is the order in which its
adornment style (character, with or without overline) first appears, as docutils does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from indexer.models import Chunk

__all__ = ["RstSection", "rst_sections"]

_ADORNMENT = re.compile(r"([=\-`:'\"~^_*+#<>.!$%&,/;?@\\|])\1{2,}\s*")

#: (title, heading path, first line, last line, text: the title line then the body).
RstSection = tuple[str, tuple[str, ...], int, int, str]


def _lines(chunks: Sequence[Chunk]) -> list[str]:
    """The file's lines (0-based) rebuilt from its chunks; lines in no chunk are blank."""
    last = max((c.end_line for c in chunks), default=0)
    lines = [""] * last
    for chunk in chunks:
        for offset, line in enumerate(chunk.content.split("\n")):
            index = chunk.start_line - 1 + offset
            if index < last:
                lines[index] = line
    return lines


def _titles(lines: list[str]) -> list[tuple[int, int, str, int]]:
    """``(first line, body line, title, level)`` of every section title (0-based lines)."""
    styles: list[tuple[str, bool]] = []
    found: list[tuple[int, int, str, int]] = []
    i = 0
    while i + 1 < len(lines):
        text, under = lines[i], lines[i + 1]
        is_title = text.strip() and not _ADORNMENT.fullmatch(text) and _ADORNMENT.fullmatch(under)
        if not is_title or len(under.rstrip()) < len(text.strip()) or text.startswith(" "):
            i += 1
            continue
        over = i > 0 and lines[i - 1].rstrip() == under.rstrip()
        style = (under[0], over)
        if style not in styles:
            styles.append(style)
        found.append((i - 1 if over else i, i + 2, text.strip(), styles.index(style) + 1))
        i += 2
    return found


def rst_sections(chunks: Sequence[Chunk]) -> tuple[list[RstSection], str]:
    """The sections of a reStructuredText file, and its text before the first title."""
    lines = _lines(chunks)
    titles = _titles(lines)
    sections: list[RstSection] = []
    stack: list[tuple[int, str]] = []
    for index, (first, body, title, level) in enumerate(titles):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        end = titles[index + 1][0] if index + 1 < len(titles) else len(lines)
        while end > body and not lines[end - 1].strip():
            end -= 1
        text = "\n".join([title, *lines[body:end]])
        sections.append((title, tuple(t for _, t in stack), first + 1, max(end, first + 1), text))
    preamble = "\n".join(lines[: titles[0][0]] if titles else lines)
    return sections, preamble
