"""Scores of ``search_content``: ``semantic × 1.5^terms``, reported as a relevance in [0, 1].

**Semantic score.** The cosine similarity of the chunk to the concept; with several
concepts, the mean of the best and the average similarity (a chunk about one concept
counts, a chunk about all of them counts more). An exact-terms-only query has no
semantic side: every chunk gets ``EXACT_ONLY_SEMANTIC`` (0.3), so one term present
scores like a typical relevant semantic match (0.45) and each further term ranks higher;
so does a matching chunk whose vector is not computed yet.

**Boost.** ``boosted = semantic × 1.5^n`` for ``n`` distinct exact terms present.

**Relevance.** ``relevance = 1 − exp(−max(0, boosted − 0.12) / 0.36)``: increasing, 0 at
or below 0.12 (the median similarity of unrelated code), approaching 1 without reaching
it, so boosted scores stay apart instead of piling up at 1.0. It reads: 0.5 ≈ cosine 0.37
(a borderline match), 0.7 ≈ 0.55 (a typical right answer), 0.8 ≈ 0.70, 0.9 ≈ 0.95
(only reached with exact terms present). ``min_score`` filters on it.

**Calibration** (``benchmarks/calibrate_content.py``, all-MiniLM-L6-v2): 300 doc-comment
sentences of click, commander and cobra against their blanked code, and 16 short
concepts ("embedding cache", "debounce file events"…) against lode's own source.
Cosine of the right chunk: sentences p5 0.34 / p10 0.38 / median 0.56; short concepts
p5 0.43 / median 0.53. Unrelated chunks: sentences median 0.17 / p90 0.34; short
concepts median 0.05 / p95 0.26 / p99 0.36. The default ``min_score`` 0.35 (cosine ≥
0.275) keeps 98.7% of right answers to sentences and all 16 concept answers, and drops
80% of unrelated chunks for sentences and 96% for short concepts; 0.5 keeps 92% / 100%
and drops 93% / 99%; 0.8 is reached by 10% of right answers on meaning alone.
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np

from indexer.search.content._request import DEFAULT_MIN_SCORE

__all__ = [
    "DEFAULT_MIN_SCORE",
    "EXACT_ONLY_SEMANTIC",
    "FLOOR",
    "SCALE",
    "TERM_BOOST",
    "boosted_score",
    "combine_concepts",
    "to_relevance",
]

#: Multiplier per distinct exact term present.
TERM_BOOST: Final = 1.5
#: Boosted scores at or below this map to relevance 0 (median similarity of unrelated code).
FLOOR: Final = 0.12
#: Spread of the relevance map: relevance 1 − 1/e ≈ 0.63 at FLOOR + SCALE.
SCALE: Final = 0.36
#: The semantic score of every chunk of an exact-terms-only query (and of an unembedded chunk).
EXACT_ONLY_SEMANTIC: Final = 0.3


def combine_concepts(similarities: np.ndarray) -> float:
    """One semantic score from a chunk's similarity to each concept: mean of the best and the average."""
    return float(0.5 * (np.max(similarities) + np.mean(similarities)))


def boosted_score(semantic: float, terms_present: int) -> float:
    """``semantic × 1.5^terms_present``."""
    return semantic * TERM_BOOST**terms_present


def to_relevance(boosted: float) -> float:
    """The boosted score as a relevance in [0, 1): ``1 − exp(−max(0, boosted − FLOOR) / SCALE)``."""
    return 1.0 - math.exp(-max(0.0, boosted - FLOOR) / SCALE)
