"""Extractive summaries: a unit's doc comment or docstring, a section's first paragraph.

Nothing is generated: a summary is the first paragraph of text the author wrote, with
comment markers and light Markdown markup removed, clipped to ``SUMMARY_CHARS``.
"""

from __future__ import annotations

import re

from indexer.outline._text import clip

__all__ = ["SUMMARY_CHARS", "code_summary", "prose_summary"]

#: The longest summary kept on a node.
SUMMARY_CHARS = 240

_COMMENT_START = re.compile(r"\s*(?://|/\*|\*|#(?![\[!]|include|define|if|pragma|undef|import)|--|;)")
_MARKER = re.compile(r"^\s*(?:/\*+!?|\*+/|///?!?|#+|--+|;+|\*+(?!/))\s?")
_DOC_TAG = re.compile(r"^\s*(?:@\w+|:param|:return|:raises|Args:|Returns:|Raises:|Parameters\b)")
_DOCSTRING = re.compile(r"^\s*[rRuUbB]{0,2}(\"\"\"|'''|\"|')")
_LEGAL = re.compile(r"copyright|licen[cs]e|spdx", re.IGNORECASE)
_HEADER_SKIP = re.compile(r"\s*(?:#!|#.*coding[:=]|@|#\[)")


def _paragraph(lines: list[str]) -> str:
    """The first paragraph (non-blank run, stopping at doc tags) of cleaned lines."""
    out: list[str] = []
    for line in lines:
        text = line.strip()
        if not text:
            if out:
                break
            continue
        if _DOC_TAG.match(text):
            break
        out.append(text)
    return " ".join(out)


def _comment_block(lines: list[str], start: int) -> tuple[str, int]:
    """The cleaned text of the comment block at ``start`` and the index after it."""
    block: list[str] = []
    i = start
    while i < len(lines) and lines[i].strip() and _COMMENT_START.match(lines[i]):
        block.append(_MARKER.sub("", lines[i].rstrip()).rstrip("*/ "))
        i += 1
    return _paragraph(block), i


def _leading_comment(lines: list[str]) -> str:
    """The first comment block before any code (licence headers skipped)."""
    i = 0
    while i < len(lines):
        if not lines[i].strip() or _HEADER_SKIP.match(lines[i]):
            i += 1
            continue
        if not _COMMENT_START.match(lines[i]):
            return ""
        text, i = _comment_block(lines, i)
        if text and not _LEGAL.search(text):
            return text
    return ""


def _docstring(lines: list[str], module: bool) -> str:
    """A Python-style docstring: the first statement of a body (or of a module)."""
    i = 0
    if not module:
        while i < len(lines) and not lines[i].split("#")[0].rstrip().endswith(":"):
            i += 1
        i += 1
    while i < len(lines) and (not lines[i].strip() or lines[i].lstrip().startswith("#")):
        i += 1
    if i >= len(lines) or i > 40:
        return ""
    match = _DOCSTRING.match(lines[i])
    if match is None:
        return ""
    quote = match.group(1)
    first = lines[i][match.end() :]
    body = [first.split(quote)[0]] if quote in first else [first]
    if quote not in first:
        for line in lines[i + 1 : i + 60]:
            body.append(line.split(quote)[0])
            if quote in line:
                break
    return _paragraph(body)


def code_summary(content: str, *, module: bool = False) -> str:
    """A unit's (or, with ``module``, a file's) doc comment or docstring, clipped."""
    lines = content.splitlines()
    text = _leading_comment(lines) or _docstring(lines, module)
    return clip(_unmark(text), SUMMARY_CHARS) if text else ""


_FENCE = re.compile(r"\s{0,3}(```|~~~)")
_SKIP_PROSE = re.compile(
    r"\s*(?:#|\[!\[|!\[|<!--|<img|<p\b|</?div|\.\. |:[\w-]+:|\||=+\s*$|-{3,}\s*$|\*{3,}\s*$)"
)
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MARKUP = re.compile(r"(\*\*|__|`+|<[^>]+>|\{@\w+\s*|\})")


def _unmark(text: str) -> str:
    return _MARKUP.sub("", _LINK.sub(r"\1", text))


def prose_summary(lines: list[str]) -> str:
    """The first paragraph of Markdown or reStructuredText lines (headings, fences,
    badges, tables and directives skipped), clipped."""
    out: list[str] = []
    fence = False
    if lines and lines[0].strip() == "---":  # YAML front matter
        end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() in ("---", "...")), 0)
        lines = lines[end + 1 :]
    for line in lines:
        if _FENCE.match(line):
            fence = not fence
            if out:
                break
            continue
        if fence:
            continue
        if not line.strip() or (not out and _SKIP_PROSE.match(line)):
            if out:
                break
            continue
        out.append(line.strip())
    return clip(_unmark(" ".join(out)), SUMMARY_CHARS)
