"""Ranked-retrieval metrics with one relevant item per query, and bootstrap intervals.

A query's outcome is the 1-based rank of its first hit, or ``None`` when no hit is in the
top ``k``. With one relevant item, nDCG@k is ``1 / log2(rank + 1)`` (the ideal DCG is 1).
Intervals are percentile bootstraps over queries; the macro average resamples queries
within each corpus (stratified) and averages the corpus means; the paired bootstrap
resamples the same queries for both configurations.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "METRICS",
    "Estimate",
    "K",
    "PairedEstimate",
    "bootstrap",
    "first_hit_rank",
    "macro_bootstrap",
    "metric_values",
    "paired_bootstrap",
]

K = 10
#: Metric names, in table order.
METRICS = ("mrr@10", "recall@1", "recall@10", "ndcg@10")
_SAMPLES = 2000


@dataclass(frozen=True, slots=True)
class Estimate:
    """A mean and its bootstrap interval."""

    mean: float
    low: float
    high: float

    def as_dict(self) -> dict[str, float]:
        """JSON form, rounded to 4 places."""
        return {"mean": round(self.mean, 4), "low": round(self.low, 4), "high": round(self.high, 4)}


@dataclass(frozen=True, slots=True)
class PairedEstimate:
    """The mean difference A − B, its bootstrap interval and a two-sided p-value."""

    delta: float
    low: float
    high: float
    p_value: float

    def as_dict(self) -> dict[str, float]:
        """JSON form, rounded to 4 places."""
        return {
            "delta": round(self.delta, 4),
            "low": round(self.low, 4),
            "high": round(self.high, 4),
            "p_value": round(self.p_value, 4),
        }


def first_hit_rank(hits: Sequence[bool], k: int = K) -> int | None:
    """1-based rank of the first ``True`` among the first ``k`` results, else None."""
    for rank, hit in enumerate(hits[:k], start=1):
        if hit:
            return rank
    return None


def metric_values(ranks: Sequence[int | None], k: int = K) -> dict[str, list[float]]:
    """Per-query values of every metric in ``METRICS`` (``k`` must be 10 for their names)."""
    inside = [r if r is not None and 1 <= r <= k else None for r in ranks]
    return {
        "mrr@10": [1.0 / r if r else 0.0 for r in inside],
        "recall@1": [1.0 if r == 1 else 0.0 for r in inside],
        "recall@10": [1.0 if r else 0.0 for r in inside],
        "ndcg@10": [1.0 / math.log2(r + 1) if r else 0.0 for r in inside],
    }


def _interval(stats: np.ndarray, alpha: float) -> tuple[float, float]:
    low, high = np.quantile(stats, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def bootstrap(
    values: Sequence[float], *, samples: int = _SAMPLES, seed: int = 0, alpha: float = 0.05
) -> Estimate:
    """The mean of ``values`` with a percentile bootstrap interval (deterministic for a seed)."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return Estimate(math.nan, math.nan, math.nan)
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(samples, data.size))].mean(axis=1)
    return Estimate(float(data.mean()), *_interval(means, alpha))


def macro_bootstrap(
    groups: Sequence[Sequence[float]], *, samples: int = _SAMPLES, seed: int = 0, alpha: float = 0.05
) -> Estimate:
    """The mean of the group means, with queries resampled within each group."""
    arrays = [np.asarray(g, dtype=float) for g in groups if len(g)]
    if not arrays:
        return Estimate(math.nan, math.nan, math.nan)
    rng = np.random.default_rng(seed)
    totals = np.zeros(samples)
    for data in arrays:
        totals += data[rng.integers(0, data.size, size=(samples, data.size))].mean(axis=1)
    point = float(np.mean([a.mean() for a in arrays]))
    return Estimate(point, *_interval(totals / len(arrays), alpha))


def paired_bootstrap(
    a: Sequence[Sequence[float]],
    b: Sequence[Sequence[float]],
    *,
    samples: int = _SAMPLES,
    seed: int = 0,
    alpha: float = 0.05,
) -> PairedEstimate:
    """Macro mean of A − B over the same queries, given per corpus (``[values]`` for one corpus).

    The p-value (two-sided) is twice the smaller share of resampled differences on either
    side of 0.
    """
    if len(a) != len(b) or any(len(x) != len(y) for x, y in zip(a, b, strict=True)):
        raise ValueError("a paired bootstrap needs the same queries on both sides")
    diffs = [np.asarray(x, dtype=float) - np.asarray(y, dtype=float) for x, y in zip(a, b, strict=True)]
    diffs = [d for d in diffs if d.size]
    if not diffs:
        return PairedEstimate(math.nan, math.nan, math.nan, math.nan)
    rng = np.random.default_rng(seed)
    totals = np.zeros(samples)
    for d in diffs:
        totals += d[rng.integers(0, d.size, size=(samples, d.size))].mean(axis=1)
    totals /= len(diffs)
    point = float(np.mean([d.mean() for d in diffs]))
    p_value = min(1.0, 2 * min(float(np.mean(totals <= 0)), float(np.mean(totals >= 0))))
    return PairedEstimate(point, *_interval(totals, alpha), p_value)
