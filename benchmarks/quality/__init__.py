"""Retrieval-quality benchmark: real corpora, doc-comment queries, ranked-retrieval metrics.

``corpora`` downloads pinned packages, ``pairs`` turns their doc comments into queries
(and blanks them), ``metrics`` scores rankings, ``evaluate`` runs lode on them and
``report`` formats the result.

The whole-repository benchmark (complete upstream trees) lives beside it: ``repo_corpora``
pins the trees, ``roles`` says which files are implementation code, ``changes`` mines
change-description pairs from history, ``repo_sets`` builds the three query sets,
``bm25`` is the reference ranking, ``repo_metrics`` scores answers, ``repo_evaluate``
runs lode and ``repo_report`` formats the result.
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
from benchmarks.quality.repo_corpora import REPO_CORPORA, RepoCorpus
from benchmarks.quality.repo_evaluate import RepoRun, evaluate_repo
from benchmarks.quality.repo_report import build_repo_result, compare_repo_runs, repo_markdown
from benchmarks.quality.report import build_result, compare_runs, to_markdown
from benchmarks.quality.roles import file_role

__all__ = [
    "CORPORA",
    "METRICS",
    "MODES",
    "REPO_CORPORA",
    "CorpusRun",
    "CorpusSpec",
    "Estimate",
    "Pair",
    "PairSet",
    "PairedEstimate",
    "RepoCorpus",
    "RepoRun",
    "blank_source",
    "bootstrap",
    "build_repo_result",
    "build_result",
    "cache_dir",
    "compare_repo_runs",
    "compare_runs",
    "evaluate_corpus",
    "evaluate_repo",
    "extract_pairs",
    "fetch_corpus",
    "file_role",
    "index_and_ask",
    "macro_bootstrap",
    "metric_values",
    "paired_bootstrap",
    "read_corpus",
    "repo_markdown",
    "sample_pairs",
    "to_markdown",
]
