"""Reading chunk text: prose sentences with their lines, doc comments, code signatures."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

__all__ = [
    "PROSE_LANGUAGES",
    "Sentence",
    "code_signature",
    "doc_summary",
    "doc_text",
    "is_prose",
    "sentences",
]

#: Languages whose chunks are read as prose (sentences), not code.
PROSE_LANGUAGES: Final = frozenset({"markdown", "rst", "text", "latex"})

# A sentence ends at . ! ? before a capital or digit, not after an initial or e.g./i.e./etc./vs.
_SPLIT = re.compile(
    r"(?<=[.!?])(?<!\b[A-Z]\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\betc\.)(?<!\bvs\.)\s+(?=[\"'(`\[*_]?[A-Z0-9])"
)
_HEADING = re.compile(r"^\s{0,3}(#{1,6}\s|={3,}\s*$|-{3,}\s*$|\.\.\s)")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"(\*\*|__)(.+?)\1")
_COMMENT = re.compile(r"^\s*(?://[/!]?|#(?![!\[])|--|\*(?!/)|/\*\*?|;+)\s?")
_DOC_QUOTES = re.compile(r'^\s*[rbuRBU]?("""|\'\'\')')
_SKIP_LINE = re.compile(r"^\s*(?:@|#\[|\[|$)")


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence of prose and the (absolute) lines it spans."""

    text: str
    start_line: int
    end_line: int
    position: int
    """Index of the sentence within its chunk (0 = first)."""

    @property
    def words(self) -> int:
        """Number of words."""
        return len(self.text.split())


def is_prose(language: str, node_type: str = "") -> bool:
    """True for documentation chunks (markdown sections, text windows of prose files)."""
    return language in PROSE_LANGUAGES or (node_type == "section" and not language)


def _clean(text: str) -> str:
    text = _LINK.sub(r"\1", text)
    text = _EMPHASIS.sub(r"\2", text)
    return " ".join(text.split())


def _paragraphs(content: str, first_line: int) -> list[list[tuple[int, str]]]:
    """Prose paragraphs as (line number, text) lists; headings, fences and tables split them."""
    out: list[list[tuple[int, str]]] = []
    current: list[tuple[int, str]] = []
    fenced = False
    for offset, line in enumerate(content.splitlines()):
        number = first_line + offset
        fence = line.lstrip().startswith(("```", "~~~"))
        fenced = fenced != fence
        markup = _HEADING.match(line) or line.lstrip().startswith(("|", "<"))
        if fence or fenced or markup or not line.strip():
            if current:
                out.append(current)
            current = []
            continue
        if _LIST_ITEM.match(line) and current:
            out.append(current)
            current = []
        current.append((number, _LIST_ITEM.sub("", line, count=1)))
    if current:
        out.append(current)
    return out


def sentences(content: str, first_line: int = 1) -> list[Sentence]:
    """The sentences of a prose chunk, with the lines each one spans."""
    out: list[Sentence] = []
    for paragraph in _paragraphs(content, first_line):
        joined = ""
        starts: list[tuple[int, int]] = []  # (char offset, line number)
        for number, text in paragraph:
            starts.append((len(joined), number))
            joined += text.strip() + " "
        cursor = 0
        for piece in _SPLIT.split(joined.strip()):
            begin = joined.find(piece, cursor)
            cursor = begin + len(piece)
            lines = [n for off, n in starts if off <= begin] or [paragraph[0][0]]
            last = [n for off, n in starts if off < cursor] or lines
            text = _clean(piece)
            if text:
                out.append(Sentence(text, lines[-1], last[-1], len(out)))
    return out


def _docstring(lines: list[str]) -> list[str]:
    """The text of a docstring opening the first non-blank line of ``lines`` ([] if none)."""
    body = [line for line in lines if line.strip()][:1]
    if not body:
        return []
    quotes = _DOC_QUOTES.match(body[0])
    if not quotes:
        return []
    mark = quotes.group(1)
    start = lines.index(body[0])
    first = body[0][quotes.end() :]
    if mark in first:
        return [first.split(mark)[0]]
    out = [first]
    for line in lines[start + 1 : start + 30]:
        if mark in line:
            out.append(line.split(mark)[0])
            break
        if not line.strip() and any(t.strip() for t in out):
            break
        out.append(line)
    return out


def _leading_comments(lines: list[str]) -> list[str]:
    out: list[str] = []
    for line in lines:
        match = _COMMENT.match(line)
        if line.strip().startswith("*/"):
            continue
        if match:
            out.append(line[match.end() :].replace("*/", ""))
        elif not _SKIP_LINE.match(line):
            out = []
    return out


def doc_summary(content: str) -> str:
    """The first sentence of a code unit's doc comment or docstring ('' when there is none)."""
    lines = content.splitlines()
    _, first, last = code_signature(content)
    text = _leading_comments(lines[:first]) or _docstring(lines[last + 1 :])
    joined = _clean(" ".join(t.strip() for t in text if not t.strip().startswith("@")))
    return _SPLIT.split(joined)[0] if joined else ""


def doc_text(content: str) -> str:
    """Only the comment and docstring text of code, each on its own line (other lines blank),
    so ``sentences`` reads it as prose with the right line numbers."""
    out: list[str] = []
    mark: str | None = None
    for line in content.splitlines():
        if mark is not None:
            out.append(line.split(mark)[0])
            mark = None if mark in line else mark
            continue
        quotes = _DOC_QUOTES.match(line)
        if quotes:
            rest = line[quotes.end() :]
            out.append(rest.split(quotes.group(1))[0])
            mark = None if quotes.group(1) in rest else quotes.group(1)
            continue
        match = _COMMENT.match(line)
        keep = match is not None and not line.strip().startswith("*/")
        out.append(line[match.end() :].replace("*/", "") if match and keep else "")
    return "\n".join(out)


def code_signature(content: str, max_lines: int = 3) -> tuple[str, int, int]:
    """A code unit's signature (declaration line(s), body opener cut) and its first and last
    line offsets within the chunk."""
    lines = content.splitlines()
    in_comment = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if in_comment:
            in_comment = "*/" not in stripped
            continue
        if stripped.startswith("/*") and "*/" not in stripped:
            in_comment = True
            continue
        if (
            _SKIP_LINE.match(line)
            or _COMMENT.match(line)
            or _DOC_QUOTES.match(line)
            or stripped.startswith("*/")
        ):
            continue
        parts = [stripped]
        depth = stripped.count("(") - stripped.count(")")
        for extra in lines[i + 1 : i + max_lines]:
            if depth <= 0:
                break
            parts.append(extra.strip())
            depth += extra.count("(") - extra.count(")")
        signature = " ".join(parts).rstrip("{").rstrip()
        return (signature[:200], i, i + len(parts) - 1)
    return ("", 0, -1)
