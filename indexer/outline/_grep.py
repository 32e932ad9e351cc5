"""``grep``: a regular expression over the text under a node, capped.

Patterns run on RE2 (``google-re2``): linear time in the text whatever the pattern, so a
pattern such as ``(a+)+$`` cannot stall the server (Python's ``re`` backtracks
exponentially on it). RE2 has no backreferences or lookaround; such a pattern is
a 400 naming ``pattern``.

Files are read from the store a few at a time and the scan stops at the cap (or after a
time budget), so a pattern over a large project never builds an unbounded answer. Each
match names the innermost node holding its line.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from indexer.errors import ValidationError
from indexer.limits import MAX_REGEX_CHARS, quote
from indexer.limits import clip as cut_short
from indexer.outline._limits import LIMITS, check_range
from indexer.outline._model import FILE_KIND, GrepMatch, GrepResult, OutlineNode
from indexer.outline._text import clip

if TYPE_CHECKING:
    from indexer.outline._outline import Outline

__all__ = ["MAX_PATTERN_CHARS", "compile_pattern", "grep"]

#: Longest pattern accepted.
MAX_PATTERN_CHARS = MAX_REGEX_CHARS
_MAX_LINE = 2_000
_BATCH = 32
_SECONDS = 10.0
_PREVIEW = 200
#: Memory RE2 may use for one compiled pattern (a bigger automaton is a 400).
_MAX_PATTERN_MEMORY = 8 << 20


def compile_pattern(pattern: str, ignore_case: bool = False) -> Any:
    """The compiled RE2 pattern, or a ValidationError naming ``pattern``."""
    import re2

    if not pattern:
        raise ValidationError("pattern", "is empty")
    shown = quote(pattern)
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ValidationError("pattern", f"{shown} is longer than {MAX_PATTERN_CHARS} characters")
    if "\x00" in pattern:
        raise ValidationError("pattern", "must not contain NUL characters")
    options = re2.Options()
    options.log_errors = False
    options.case_sensitive = not ignore_case
    options.max_mem = _MAX_PATTERN_MEMORY
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        first = exc.args[0] if exc.args else exc
        reason = first.decode("utf-8", "replace") if isinstance(first, bytes) else first
        raise ValidationError(
            "pattern",
            f"{shown} is not a valid regular expression for RE2 ({cut_short(str(reason))}; RE2 has no "
            "backreferences or lookaround)",
        ) from None


def _innermost(node: OutlineNode, line: int) -> OutlineNode:
    current = node
    while True:
        inside = next((c for c in current.children if c.start_line <= line <= c.end_line), None)
        if inside is None:
            return current
        current = inside


def _preview(line: str, start: int) -> str:
    if len(line) <= _PREVIEW:
        return line.strip()
    left = max(0, start - _PREVIEW // 4)
    return clip(line[left : left + _PREVIEW], _PREVIEW)


def _targets(outline: Outline, node: OutlineNode) -> list[tuple[OutlineNode, int, int]]:
    """(file node, first line, last line) of every file range under ``node``."""
    if node.is_text:
        file = outline.nodes[node.path]
        return [(file, node.start_line if node.kind != FILE_KIND else 1, node.end_line or 1 << 30)]
    return [(n, 1, 1 << 30) for n in node.walk() if n.kind == FILE_KIND]


def grep(
    outline: Outline, pattern: str, node: str | None = None, limit: int = 50, ignore_case: bool = False
) -> GrepResult:
    """Lines matching ``pattern`` under a node, at most ``limit`` (``truncated`` says when cut)."""
    regex = compile_pattern(pattern, ignore_case)
    check_range("limit", limit, 1, LIMITS["grep_limit"][1])
    start = outline.node(node)
    targets = _targets(outline, start)
    matches: list[GrepMatch] = []
    searched = 0
    deadline = time.monotonic() + _SECONDS
    for first_file in range(0, len(targets), _BATCH):
        batch = targets[first_file : first_file + _BATCH]
        texts = outline.read_files([file.path for file, _, _ in batch])
        for file, first, last in batch:
            searched += 1
            lines = texts.get(file.path, "").splitlines()
            for number in range(first, min(last, len(lines)) + 1):
                found = regex.search(lines[number - 1][:_MAX_LINE])
                if found is None:
                    continue
                if len(matches) == limit:
                    return GrepResult(pattern, start.id, tuple(matches), searched, True)
                holder = _innermost(file, number)
                preview = _preview(lines[number - 1], found.start())
                matches.append(GrepMatch(holder.id, holder.title, file.path, number, preview))
            if time.monotonic() > deadline:
                return GrepResult(pattern, start.id, tuple(matches), searched, True)
    return GrepResult(pattern, start.id, tuple(matches), searched, False)
