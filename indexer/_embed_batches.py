"""Phase 2's batches: model calls cut by count and length, and the writes they make."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from indexer.models import StoredChunk

__all__ = ["Batch", "batch_of", "merge_batches", "model_batches"]

#: A model call takes at most this many characters of chunk text, each text counted up to
#: ``_TEXT_CHARS`` (about the model's 256-token window, past which it truncates): its
#: activations grow with the texts' length, so short texts still go 64 at a time, texts of
#: full length 16 (figures: docs/performance.md, "Memory and disk").
_BATCH_CHARS = 16_384
_TEXT_CHARS = 1_024


@dataclass(slots=True)
class Batch:
    """Vectors to write: the chunks they go to, the texts' hashes and what the run learned."""

    ids: list[str]
    vectors: np.ndarray
    text_hashes: list[str]
    """The hash of the embedding text each vector was made from."""
    new: dict[str, np.ndarray]
    file_ids: list[str]
    done_files: list[tuple[str, str]]


def model_batches(
    groups: Sequence[Sequence[StoredChunk]], size: int, budget: int = _BATCH_CHARS
) -> Iterator[list[Sequence[StoredChunk]]]:
    """Consecutive runs of ``groups`` (chunks sharing one text, sorted by its length) for one
    model call each: at most ``size`` texts and ``budget`` characters, each text counted up
    to ``_TEXT_CHARS``; never empty, a text longer than the budget goes alone."""
    part: list[Sequence[StoredChunk]] = []
    chars = 0
    for group in groups:
        length = min(len(group[0].chunk.content), _TEXT_CHARS)
        if part and (len(part) >= size or chars + length > budget):
            yield part
            part, chars = [], 0
        part.append(group)
        chars += length
    if part:
        yield part


def merge_batches(batches: list[Batch]) -> Batch | None:
    """One write for several batches."""
    if not batches:
        return None
    if len(batches) == 1:
        return batches[0]
    return Batch(
        [i for b in batches for i in b.ids],
        np.concatenate([b.vectors for b in batches]),
        [h for b in batches for h in b.text_hashes],
        {k: v for b in batches for k, v in b.new.items()},
        sorted({f for b in batches for f in b.file_ids}),
        sorted({d for b in batches for d in b.done_files}),
    )


def batch_of(
    chunks: list[StoredChunk],
    texts: dict[str, tuple[str, str]],
    vectors: dict[str, np.ndarray],
    new: dict[str, np.ndarray],
    bad_paths: set[str],
) -> Batch | None:
    """A write for the chunks that got a vector (``vectors`` by text hash; ``texts``: chunk
    id → its embedding text and hash); files with a failed chunk keep their error."""
    ok = [c for c in chunks if texts[c.id][1] in vectors]
    if not ok:
        return None
    hashes = [texts[c.id][1] for c in ok]
    matrix = np.stack([vectors[h] for h in hashes])
    done = sorted({(c.project_id, c.file_path) for c in ok if c.file_path not in bad_paths})
    return Batch([c.id for c in ok], matrix, hashes, new, sorted({c.file_id for c in ok}), done)
