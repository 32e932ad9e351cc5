"""What every MCP tool answer shares: plain text with line numbers, cut to an exact token
budget at whole-result boundaries, with a footer saying what was left out and how to get it.

An answer is a head (one line or none), then blocks in rank order, then the footer. A
block is one result: a header line (``path:start-end  kind name  (score)``) and its body
(numbered lines). Blocks are taken whole while they fit; one that does not fit keeps its
header only (the agent can ``read`` it); the first block is clipped at a line boundary
rather than dropped. The budget is counted with a named tokenizer (``TokenCounter``) and
checked on the final text, so an answer never costs more than ``max_tokens``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from indexer.embed import TokenCounter

__all__ = ["Block", "Fitted", "fit_blocks", "fit_json", "fit_text", "numbered", "read_on", "span"]

#: Longest line kept in an answer (minified code would spend a budget on one line).
MAX_LINE_CHARS = 400


def fit_text(counter: TokenCounter, text: str, budget: int, mark: str = "…") -> str:
    """``text`` within ``budget`` tokens: whole when it fits, else its longest prefix that
    fits with ``mark`` after it (the prefix found by halving, each try counted)."""
    if counter.count(text) <= budget:
        return text
    low, high = 0, len(text)  # the longest prefix (in characters) that fits with the mark
    while low < high:
        mid = (low + high + 1) // 2
        if counter.count(text[:mid] + mark) <= budget:
            low = mid
        else:
            high = mid - 1
    return text[:low] + mark if low or counter.count(mark) <= budget else ""


def span(path: str, start: int, end: int) -> str:
    """``path:start-end`` (``path:start`` for one line, the path alone for no lines)."""
    if start <= 0:
        return path
    return f"{path}:{start}" if end <= start else f"{path}:{start}-{end}"


def numbered(lines: Sequence[str], first: int) -> list[str]:
    """``lines`` with their 1-based numbers (``first`` is the first one's), right-aligned."""
    width = len(str(first + len(lines) - 1))
    out = []
    for offset, line in enumerate(lines):
        text = line.rstrip("\r\n")
        if len(text) > MAX_LINE_CHARS:
            text = text[:MAX_LINE_CHARS] + "…"
        out.append(f"{first + offset:>{width}}  {text}")
    return out


def read_on(path: str, start: int, end: int) -> Callable[[int], str]:
    """The cut note of lines ``start``-``end`` of ``path`` shown in part: how to read the rest."""

    def note(kept: int) -> str:
        first = start + kept
        return f"… lines {first}-{end} not shown: read path={path} start_line={first}"

    return note


@dataclass(frozen=True, slots=True)
class Block:
    """One result of an answer: its header line and its body lines."""

    header: str
    body: tuple[str, ...] = ()
    cut_note: Callable[[int], str] | None = None
    """The line that replaces the body after its first ``n`` lines when it is clipped."""


@dataclass(slots=True)
class Fitted:
    """What fitting an answer to its budget kept."""

    text: str
    tokens: int
    shown: int = 0
    """Blocks in the answer (whole, clipped or header only)."""
    headers_only: int = 0
    """Blocks shown by their header alone."""
    clipped: bool = False
    """True when the first block's body was cut."""
    left_out: int = 0
    """Blocks of the candidates not in the answer at all."""
    notes: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Costed:
    block: Block
    header: int
    lines: list[int]

    @property
    def full(self) -> int:
        return self.header + sum(self.lines)


def _cost(counter: TokenCounter, blocks: Sequence[Block]) -> list[_Costed]:
    texts = [text for b in blocks for text in (b.header, *b.body)]
    counts = counter.count_many(texts)
    out, at = [], 0
    for block in blocks:
        n = len(block.body)
        out.append(_Costed(block, counts[at], counts[at + 1 : at + 1 + n]))
        at += 1 + n
    return out


def _clip(item: _Costed, room: int, counter: TokenCounter) -> list[str] | None:
    """The first block's header and as many body lines as fit ``room`` (with the cut
    note); None when not even the header fits."""
    block = item.block
    used = item.header
    kept: list[str] = []
    for line, cost in zip(block.body, item.lines, strict=True):
        note = block.cut_note(len(kept) + 1) if block.cut_note else ""
        if used + cost + counter.count(note) > room:
            break
        kept.append(line)
        used += cost
    note = block.cut_note(len(kept)) if block.cut_note else ""
    if used + counter.count(note) > room:
        return None if item.header > room else [block.header]
    return [block.header, *kept, *([note] if note else [])]


def fit_blocks(
    counter: TokenCounter,
    head: str,
    blocks: Sequence[Block],
    budget: int,
    footer: Callable[[Fitted], str],
) -> Fitted:
    """The answer ``head`` + ``blocks`` + ``footer(fitted)`` within ``budget`` tokens."""
    costed = _cost(counter, blocks)
    worst = Fitted("", 0, shown=99_999, headers_only=99_999, left_out=99_999)
    tail = counter.count(footer(worst)) + 2
    head = fit_text(counter, head, max(0, budget - tail))  # a head longer than the budget is cut
    reserve = counter.count(head) + tail
    kept: list[tuple[int, list[str]]] = []
    used = reserve
    for index, item in enumerate(costed):
        if used + item.full <= budget:
            kept.append((index, [item.block.header, *item.block.body]))
            used += item.full
        elif not kept:
            clipped = _clip(item, budget - used, counter)
            if clipped is None:
                break
            kept.append((index, clipped))
            used += counter.count("\n".join(clipped))
        elif used + item.header <= budget:
            kept.append((index, [item.block.header]))
            used += item.header
        else:
            break
    kept = _top_up(counter, head, costed, kept, footer, budget)
    while True:
        fitted = _assemble(counter, head, costed, kept, footer)
        if not kept and fitted.tokens > budget:  # only notes left, and they quote too much
            fitted.text = fit_text(counter, fitted.text, budget)
            fitted.tokens = counter.count(fitted.text)
        if fitted.tokens <= budget or not kept:
            return fitted
        index, lines = kept.pop()  # the footer cost more than reserved: give back a block
        if len(lines) > 1 and index > 0:
            kept.append((index, lines[:1]))


def _top_up(
    counter: TokenCounter,
    head: str,
    costed: Sequence[_Costed],
    kept: list[tuple[int, list[str]]],
    footer: Callable[[Fitted], str],
    budget: int,
) -> list[tuple[int, list[str]]]:
    """``kept`` and the headers of the next blocks while the answer, with its real footer,
    fits: the first pass reserved room for the longest footer there could be."""
    while kept and kept[-1][0] + 1 < len(costed):
        index = kept[-1][0] + 1
        more = [*kept, (index, [costed[index].block.header])]
        if _assemble(counter, head, costed, more, footer).tokens > budget:
            break
        kept = more
    return kept


def _assemble(
    counter: TokenCounter,
    head: str,
    costed: Sequence[_Costed],
    kept: Sequence[tuple[int, list[str]]],
    footer: Callable[[Fitted], str],
) -> Fitted:
    fitted = Fitted("", 0, shown=len(kept))
    for index, lines in kept:
        block = costed[index].block
        if block.body and len(lines) == 1:
            fitted.headers_only += 1
        elif len(lines) < 1 + len(block.body):
            fitted.clipped = True
    fitted.left_out = len(costed) - len(kept)
    parts = [head] if head else []
    parts += [line for _, lines in kept for line in lines]
    tail = footer(fitted)
    if tail:
        parts.append(tail)
    fitted.text = "\n".join(parts)
    fitted.tokens = counter.count(fitted.text)
    return fitted


def fit_json(
    counter: TokenCounter, items: Sequence[Any], budget: int, wrap: Callable[[list[Any], int], dict[str, Any]]
) -> tuple[str, int]:
    """Compact JSON of ``wrap(kept_items, left_out)`` within ``budget`` tokens, keeping whole
    items in order (at least none); returns (text, items kept)."""
    costs = counter.count_many([_dumps(item) for item in items])
    base = counter.count(_dumps(wrap([], 99_999))) + 2
    keep, used = 0, base
    for cost in costs:
        if used + cost + 1 > budget:
            break
        used += cost + 1
        keep += 1
    while True:
        text = _dumps(wrap(list(items[:keep]), len(items) - keep))
        if counter.count(text) <= budget or keep == 0:
            return text, keep
        keep -= 1


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
