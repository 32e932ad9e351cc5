"""Cutting line ranges into spans that fit the token limit.

A span is ``(start_byte, end_byte, tokens)``; spans of one range are contiguous and in
order, so adjacent ones can be merged greedily while the sum stays under the limit.
"""

from __future__ import annotations

from indexer.chunker._source import Source

__all__ = ["Span", "cut_line", "line_spans", "merge_spans", "segment_spans"]

Span = tuple[int, int, int]


def cut_line(source: Source, start: int, end: int, max_bytes: int, limit: int) -> list[Span]:
    """Cut one long line into pieces of at most ``max_bytes``, never inside a UTF-8 character."""
    data = source.data
    spans: list[Span] = []
    pos = start
    while pos < end:
        stop = min(pos + max_bytes, end)
        back = stop
        while back > pos + 1 and back < end and (data[back] & 0xC0) == 0x80:
            back -= 1
        if back > pos + 1:
            stop = back
        spans.append((pos, stop, limit + 1))
        pos = stop
    return spans


def line_spans(source: Source, first: int, last: int, max_line_bytes: int, limit: int) -> list[Span]:
    """Spans of whole lines within ``limit`` covering ``first..last``; long lines are cut.

    The range is cut into as many equal parts (in lines) as its tokens need, and parts
    still too big are cut again, so the estimate runs only a few times per range.
    """
    start, end = source.span(first, last)
    tokens = source.tokens(start, end)
    if first == last:
        if end - start > max_line_bytes:
            return cut_line(source, start, end, max_line_bytes, limit)
        return [(start, end, tokens)]
    if tokens <= limit and end - start <= max_line_bytes * (last - first + 1):
        return [(start, end, tokens)]
    parts = min(last - first + 1, max(2, -(-tokens // limit)))
    step = (last - first + 1) / parts
    bounds = sorted({first + int(step * i) for i in range(parts)} | {last + 1})
    spans: list[Span] = []
    for index in range(len(bounds) - 1):
        spans.extend(line_spans(source, bounds[index], bounds[index + 1] - 1, max_line_bytes, limit))
    return spans


def merge_spans(spans: list[Span], limit: int) -> list[Span]:
    """Merge adjacent spans greedily while their token sum stays within ``limit``."""
    merged: list[Span] = []
    for span in spans:
        if merged and merged[-1][2] + span[2] <= limit:
            start, _, tokens = merged[-1]
            merged[-1] = (start, span[1], tokens + span[2])
        else:
            merged.append(span)
    return merged


def segment_spans(
    source: Source, first: int, last: int, cuts: list[int], *, limit: int, max_line_bytes: int
) -> list[Span]:
    """Cut lines ``first..last`` at the rows ``cuts`` (sorted), then merge up to ``limit``.

    A segment still over the limit falls back to one span per line.
    """
    bounds = [first, *(c for c in cuts if first < c <= last), last + 1]
    spans: list[Span] = []
    for index in range(len(bounds) - 1):
        a, b = bounds[index], bounds[index + 1] - 1
        if a > b:
            continue
        start, end = source.span(a, b)
        tokens = source.tokens(start, end)
        if tokens <= limit or (a == b and end - start <= max_line_bytes):
            spans.append((start, end, tokens))
        else:
            spans.extend(line_spans(source, a, b, max_line_bytes, limit))
    return merge_spans(spans, limit)
