"""Retrieval-quality benchmark: real corpora, doc-comment queries, ranked-retrieval metrics.

``corpora`` downloads pinned packages, ``pairs`` turns their doc comments into queries
(and blanks them), ``metrics`` scores rankings, ``evaluate`` runs lode on them and
``report`` formats the result.
"""

from benchmarks.quality.corpora import CORPORA, CorpusSpec, cache_dir, fetch_corpus, read_corpus
from benchmarks.quality.evaluate import MODES, CorpusRun, evaluate_corpus, index_and_ask
from benchmarks.quality.metrics import (
    METRICS,
    Estimate,
    PairedEstimate,
    bootstrap,
    macro_bootstrap,
    metric_values,
    paired_bootstrap,
)
from benchmarks.quality.pairs import Pair, PairSet, blank_source, extract_pairs, sample_pairs
from benchmarks.quality.report import build_result, compare_runs, to_markdown

__all__ = [
    "CORPORA",
    "METRICS",
    "MODES",
    "CorpusRun",
    "CorpusSpec",
    "Estimate",
    "Pair",
    "PairSet",
    "PairedEstimate",
    "blank_source",
    "bootstrap",
    "build_result",
    "cache_dir",
    "compare_runs",
    "evaluate_corpus",
    "extract_pairs",
    "fetch_corpus",
    "index_and_ask",
    "macro_bootstrap",
    "metric_values",
    "paired_bootstrap",
    "read_corpus",
    "sample_pairs",
    "to_markdown",
]
