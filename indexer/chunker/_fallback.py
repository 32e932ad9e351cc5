"""Line windows for text without a grammar, minified files and unusable syntax trees."""

from __future__ import annotations

from indexer.chunker._source import Piece, Source
from indexer.chunker._spans import line_spans, merge_spans
from indexer.config import ChunkerConfig

__all__ = ["is_minified", "window_pieces"]


def is_minified(source: Source, config: ChunkerConfig) -> bool:
    """True when lines longer than ``max_line_bytes`` hold most of the file."""
    limit = config.max_line_bytes
    if source.size <= limit:
        return False
    starts = source.line_starts
    ends = [*starts[1:], source.size + 1]
    long_bytes = sum(e - s for s, e in zip(starts, ends, strict=True) if e - s > limit)
    return long_bytes * 2 > source.size


def window_pieces(
    source: Source, config: ChunkerConfig, first: int = 0, last: int | None = None
) -> list[Piece]:
    """``text`` pieces of at most ``fallback_window_lines`` lines and ``max_chunk_tokens`` each."""
    stop = source.line_count - 1 if last is None else last
    size, limit = config.fallback_window_lines, config.max_chunk_tokens
    pieces: list[Piece] = []
    for window in range(first, stop + 1, size):
        end_line = min(window + size - 1, stop)
        start, end = source.span(window, end_line)
        if not source.has_text(start, end):
            continue
        if end - start <= size * config.max_line_bytes and source.tokens(start, end) <= limit:
            pieces.append(Piece(start, end, "text"))
            continue
        spans = merge_spans(line_spans(source, window, end_line, config.max_line_bytes, limit), limit)
        pieces.extend(Piece(s, e, "text") for s, e, _ in spans)
    return pieces
