"""Stage 4: broad discovery (every expansion across the filtered projects), then near-duplicate
removal and maximal marginal relevance on the chunks' embeddings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from indexer.search.discover._config import BroadConfig
from indexer.search.discover._models import ProjectRef, ScoredChunk
from indexer.search.discover._retrieve import Retriever

__all__ = ["BroadResult", "broad_discovery", "mmr_select", "remove_near_duplicates"]


@dataclass(frozen=True, slots=True)
class BroadResult:
    """The chunks MMR selected (in selection order) and the pool size at each step."""

    chunks: tuple[ScoredChunk, ...]
    found: int
    after_threshold: int
    after_dedup: int


def _matrix(chunks: Sequence[ScoredChunk], vectors: Mapping[str, np.ndarray]) -> np.ndarray:
    """Unit rows of the chunks' vectors; a chunk without one gets a zero row (similar to nothing)."""
    dim = next((len(v) for v in vectors.values()), 1)
    out = np.zeros((len(chunks), dim), dtype=np.float32)
    for i, chunk in enumerate(chunks):
        vec = vectors.get(chunk.key)
        if vec is not None:
            norm = float(np.linalg.norm(vec))
            out[i] = vec / norm if norm > 0 else vec
    return out


def remove_near_duplicates(
    chunks: Sequence[ScoredChunk], vectors: Mapping[str, np.ndarray], threshold: float
) -> list[ScoredChunk]:
    """Best first, drop every chunk whose embedding is more similar than ``threshold`` to a
    better one (or whose text equals a better one's), so the higher-scored copy stays."""
    ordered = sorted(chunks, key=lambda c: (-c.score, c.key))
    matrix = _matrix(ordered, vectors)
    kept: list[int] = []
    texts: set[str] = set()
    for i, chunk in enumerate(ordered):
        text = " ".join(chunk.content.split())
        if text and text in texts:
            continue
        if kept and float(np.max(matrix[kept] @ matrix[i])) > threshold:
            continue
        kept.append(i)
        texts.add(text)
    return [ordered[i] for i in kept]


def mmr_select(
    chunks: Sequence[ScoredChunk], vectors: Mapping[str, np.ndarray], k: int, mmr_lambda: float
) -> list[ScoredChunk]:
    """Maximal marginal relevance: repeatedly take the chunk maximising
    ``λ·score − (1 − λ)·max cosine similarity to the chunks already taken``."""
    ordered = sorted(chunks, key=lambda c: (-c.score, c.key))
    if not ordered or k <= 0:
        return []
    matrix = _matrix(ordered, vectors)
    relevance = np.array([c.score for c in ordered], dtype=np.float64)
    taken = [0]
    closest = matrix @ matrix[0]
    while len(taken) < min(k, len(ordered)):
        marginal = mmr_lambda * relevance - (1.0 - mmr_lambda) * closest
        marginal[taken] = -np.inf
        best = int(np.argmax(marginal))
        taken.append(best)
        closest = np.maximum(closest, matrix @ matrix[best])
    return [ordered[i] for i in taken]


def broad_discovery(
    retriever: Retriever, projects: Sequence[ProjectRef], config: BroadConfig | None = None
) -> BroadResult:
    """Hybrid search of every query across ``projects``, similarity threshold, near-duplicate
    removal, then MMR down to ``broad_k`` chunks."""
    config = config or BroadConfig()
    if not projects:
        return BroadResult((), 0, 0, 0)
    pool = retriever.pool(tuple(p.id for p in projects), config.k_per_query, "broad")
    kept = [c for c in pool if c.similarity is None or c.similarity >= config.similarity_threshold]
    vectors = {c.key: v for c in kept if (v := retriever.vector(c.id)) is not None}
    unique = (
        remove_near_duplicates(kept, vectors, config.dedup_threshold) if config.enable_deduplication else kept
    )
    selected = mmr_select(unique, vectors, config.broad_k, config.mmr_lambda)
    return BroadResult(tuple(retriever.complete(selected)), len(pool), len(kept), len(unique))
