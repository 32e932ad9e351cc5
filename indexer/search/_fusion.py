"""Rank fusion.

Chunks are ranked by a weighted sum of min-max normalised scores: each candidate list
(cosine similarities, BM25 over the text, BM25 over the unit's name, exact identifiers)
is scaled to [0, 1] over its own candidates, weighted, summed, and divided by the total
weight of the lists that found anything. A chunk first in every list scores 1.0; scores
are computed over the whole candidate pool, so they mean the same on every page.
Weights were tuned on the quality benchmark's corpora (``benchmarks/quality``).

Files (document granularity) are ranked by reciprocal-rank fusion, ``Σ wᵢ / (k + rankᵢ)``
over the lists a file appears in, divided by its largest possible value ``Σ wᵢ / (k + 1)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["RRF_K", "Ranked", "Scored", "fuse", "fuse_scores"]

#: The rank offset of reciprocal-rank fusion (60 in the original paper).
RRF_K = 60


@dataclass(frozen=True, slots=True)
class Ranked:
    """A candidate list: ids best first, and the weight of the list."""

    ids: Sequence[str]
    weight: float = 1.0


@dataclass(frozen=True, slots=True)
class Scored:
    """A candidate list with raw scores (higher is better), and the weight of the list."""

    scores: Sequence[tuple[str, float]]
    weight: float = 1.0


def fuse(lists: Mapping[str, Ranked], k: int = RRF_K) -> list[tuple[str, float]]:
    """Reciprocal-rank fusion into (id, score in [0, 1]) best first; ties by id, so stable."""
    active = {name: lst for name, lst in lists.items() if lst.weight > 0}
    best = sum(lst.weight / (k + 1) for lst in active.values())
    if best <= 0:
        return []
    scores: dict[str, float] = {}
    for lst in active.values():
        seen: set[str] = set()
        for rank, item in enumerate(lst.ids, start=1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + lst.weight / (k + rank)
    fused = [(item, min(1.0, score / best)) for item, score in scores.items()]
    fused.sort(key=lambda pair: (-pair[1], pair[0]))
    return fused


def fuse_scores(lists: Mapping[str, Scored]) -> list[tuple[str, float]]:
    """Weighted sum of min-max normalised scores, in [0, 1], best first; ties by id."""
    active = [lst for lst in lists.values() if lst.weight > 0 and lst.scores]
    total = sum(lst.weight for lst in active)
    if total <= 0:
        return []
    fused: dict[str, float] = {}
    for lst in active:
        best: dict[str, float] = {}
        for item, score in lst.scores:
            best[item] = max(score, best.get(item, score))
        low, high = min(best.values()), max(best.values())
        span = high - low
        for item, score in best.items():
            norm = (score - low) / span if span > 0 else 1.0
            fused[item] = fused.get(item, 0.0) + lst.weight * norm
    ranked = [(item, min(1.0, score / total)) for item, score in fused.items()]
    ranked.sort(key=lambda pair: (-pair[1], pair[0]))
    return ranked
