"""Rank fusion: reciprocal-rank fusion of candidate lists, scored in [0, 1].

A fused score is ``Σ wᵢ / (k + rankᵢ)`` over the lists a candidate appears in, divided
by its largest possible value ``Σ wᵢ / (k + 1)``: a candidate ranked first everywhere
scores 1.0, whatever the query, so scores mean the same across pages and queries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["RRF_K", "Ranked", "fuse"]

#: The rank offset of reciprocal-rank fusion (60 in the original paper).
RRF_K = 60


@dataclass(frozen=True, slots=True)
class Ranked:
    """A candidate list: ids best first, and the weight of the list."""

    ids: Sequence[str]
    weight: float = 1.0


def fuse(lists: Mapping[str, Ranked], k: int = RRF_K) -> list[tuple[str, float]]:
    """Fuse ranked lists into (id, score in [0, 1]) best first; ties by id, so stable."""
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
