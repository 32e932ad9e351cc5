"""Last steps on the pieces of a file: merge tiny neighbours, trim, sort, fill coverage gaps."""

from __future__ import annotations

from dataclasses import replace

from indexer.chunker._source import Piece, Source
from indexer.chunker._spans import line_spans, merge_spans
from indexer.config import ChunkerConfig

__all__ = ["ensure_coverage", "merge_small"]

_MERGEABLE = frozenset({"block", "constant", "variable"})


def _container_scope(piece: Piece) -> tuple[str, ...]:
    if piece.node_type == "block" or not piece.name:
        return piece.scope
    return piece.scope[:-1]


def _combine(run: list[Piece]) -> Piece:
    first = run[0]
    if len(run) == 1:
        return first
    names = tuple(dict.fromkeys(n for p in run for n in (p.name, *p.extra_defs) if n))
    types = {p.node_type for p in run}
    if len(types) == 1 and first.node_type != "block":
        return replace(
            first,
            end_byte=run[-1].end_byte,
            extra_defs=names[1:] if first.name else names,
            unit_start=-1,
            unit_end=-1,
        )
    return Piece(
        first.start_byte,
        run[-1].end_byte,
        "block",
        "",
        first.parent_context,
        _container_scope(first),
        names,
    )


def merge_small(
    pieces: list[Piece], groups: list[int], tokens: list[int], config: ChunkerConfig
) -> list[Piece]:
    """Merge runs of adjacent ``block``/``constant``/``variable`` pieces of one container.

    Two neighbours merge when one of them is under ``min_chunk_tokens`` and together
    they stay within ``max_chunk_tokens``; functions and classes never merge.
    """
    low, high = config.min_chunk_tokens, config.max_chunk_tokens
    result: list[Piece] = []
    index = 0
    while index < len(pieces):
        piece = pieces[index]
        index += 1
        if piece.node_type not in _MERGEABLE:
            result.append(piece)
            continue
        run, total = [piece], tokens[index - 1]
        while (
            index < len(pieces)
            and pieces[index].node_type in _MERGEABLE
            and groups[index] == groups[index - 1]
        ):
            size = tokens[index]
            if (total >= low and size >= low) or total + size > high:
                break
            run.append(pieces[index])
            total += size
            index += 1
        result.append(_combine(run))
    return result


def _trimmed(source: Source, pieces: list[Piece]) -> list[Piece]:
    out: list[Piece] = []
    for piece in pieces:
        bounds = source.trim(piece.start_byte, piece.end_byte)
        if bounds is None:
            continue
        same = bounds == (piece.start_byte, piece.end_byte)
        out.append(piece if same else replace(piece, start_byte=bounds[0], end_byte=bounds[1]))
    return out


def _gaps(source: Source, pieces: list[Piece]) -> list[tuple[int, int]]:
    gaps: list[tuple[int, int]] = []
    covered = -1
    for piece in pieces:
        first = source.line_of(piece.start_byte)
        if first > covered + 1:
            gaps.append((covered + 1, first - 1))
        covered = max(covered, source.line_of(max(piece.start_byte, piece.end_byte - 1)))
    if covered < source.line_count - 1:
        gaps.append((covered + 1, source.line_count - 1))
    return gaps


def ensure_coverage(source: Source, pieces: list[Piece], config: ChunkerConfig) -> list[Piece]:
    """Trim pieces to their text, sort them, and add ``block`` pieces for any uncovered line."""
    ordered = sorted(_trimmed(source, pieces), key=lambda p: (p.start_byte, -p.end_byte))
    extra: list[Piece] = []
    limit = config.max_chunk_tokens
    for first, last in _gaps(source, ordered):
        if not source.has_text(*source.span(first, last)):
            continue
        spans = merge_spans(line_spans(source, first, last, config.max_line_bytes, limit), limit)
        extra.extend(Piece(s, e, "block") for s, e, _ in spans)
    if not extra:
        return ordered
    return sorted(ordered + _trimmed(source, extra), key=lambda p: (p.start_byte, -p.end_byte))
