"""Tune lode's ranking on the whole-repository benchmark's corpora (never on held-out data).

Indexes each corpus's two trees once (kept under ``$LODE_BENCH_CACHE/tune``, rebuilt with
``--reindex``), then asks every query of the three sets in every mode under each ranking
variant (``VARIANTS``: role priors, unit folding, the document lists' weight, the fusion
weights) and prints macro figures per variant, set and mode, so variants are compared on
the same indexes in one run. A variant's figures are those ``bench_repo_quality`` would
report with it as the default; the benchmark itself remains the measure of record.

Example:
    .venv/bin/python -m benchmarks.tune_ranking --variant base --variant prior
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.quality.corpora import cache_dir
from benchmarks.quality.evaluate import MODES
from benchmarks.quality.repo_corpora import REPO_CORPORA
from benchmarks.quality.repo_evaluate import _answer, _write_tree, prepare_repo
from benchmarks.quality.repo_metrics import query_values
from benchmarks.quality.repo_sets import SETS, SOURCE_ONLY
from benchmarks.quality.roles import IMPLEMENTATION, file_role
from indexer.api import Lode, known_languages
from indexer.config import load_config
from indexer.search import Searcher
from indexer.search._priors import ROLE_PRIOR
from indexer.search._ranking import RankingConfig

_NO_PRIOR = dict.fromkeys(ROLE_PRIOR, 1.0)
#: Sets asked against the tree whose doc comments are blanked (the others: the original).
BLANKED_SETS = frozenset({"doc", "question"})

#: Ranking variants by name (each a change of the default ``RankingConfig``).
_STRONG = {**ROLE_PRIOR, "test": 0.35, "docs": 0.45, "example": 0.45, "changelog": 0.2}
_STRONGER = {
    **ROLE_PRIOR, "test": 0.25, "docs": 0.35, "example": 0.35, "config": 0.45, "build": 0.45,
    "changelog": 0.15, "generated": 0.25, "vendored": 0.3,
}  # fmt: skip


def _names(semantic: float) -> Callable[[RankingConfig], RankingConfig]:
    """The strong prior, no document lists, and ``semantic`` as the vector list's weight for
    queries that name something."""

    def variant(c: RankingConfig) -> RankingConfig:
        weights = {"semantic": semantic, "lexical": 0.4, "name": 0.2}
        return replace(c, role_prior=_STRONG, document_signal_weight=0.0, name_weights=weights)

    return variant


def _report(prior: float) -> Callable[[RankingConfig], RankingConfig]:
    """The default ranking with ``prior`` as a bug report's extra prior on other roles."""

    def variant(c: RankingConfig) -> RankingConfig:
        return replace(c, report_prior=prior)

    return variant


def _report_weights(semantic: float, lexical: float, name: float) -> Callable[[RankingConfig], RankingConfig]:
    """The default ranking with these list weights for bug reports."""

    def variant(c: RankingConfig) -> RankingConfig:
        return replace(c, report_weights={"semantic": semantic, "lexical": lexical, "name": name})

    return variant


VARIANTS: dict[str, Callable[[RankingConfig], RankingConfig]] = {
    "rw-lex": _report_weights(0.4, 0.6, 0.2),
    "rw-lex2": _report_weights(0.3, 0.7, 0.2),
    "rw-sem": _report_weights(0.9, 0.3, 0.2),
    "rw-even": _report_weights(0.55, 0.55, 0.2),
    "rw-noname": _report_weights(0.7, 0.4, 0.0),
    **{f"report{w}": _report(w / 10) for w in (2, 3, 4, 5, 7, 10)},
    "none": lambda c: replace(c, role_prior=_NO_PRIOR, fold_units=False, document_signal_weight=0.5),
    "base": lambda c: c,
    "prior": lambda c: replace(c, fold_units=False),
    "fold": lambda c: replace(c, role_prior=_NO_PRIOR),
    "nodocs": lambda c: replace(c, document_signal_weight=0.0),
    "strong": lambda c: replace(
        c, role_prior={**ROLE_PRIOR, "test": 0.35, "docs": 0.45, "example": 0.45, "changelog": 0.2}
    ),
    "strong-nodocs": lambda c: replace(
        c,
        role_prior={**ROLE_PRIOR, "test": 0.35, "docs": 0.45, "example": 0.45, "changelog": 0.2},
        document_signal_weight=0.0,
    ),
    **{f"names-sem{w}": _names(w / 10) for w in (1, 2, 3, 4)},
    "stronger-nodocs": lambda c: replace(c, role_prior=_STRONGER, document_signal_weight=0.0),
    "strong-nodocs-names": lambda c: replace(
        c,
        role_prior=_STRONG,
        document_signal_weight=0.0,
        name_weights={"semantic": 0.3, "lexical": 0.4, "name": 0.4},
    ),
    "strong-nodocs-names2": lambda c: replace(
        c,
        role_prior=_STRONG,
        document_signal_weight=0.0,
        name_weights={"semantic": 0.15, "lexical": 0.4, "name": 0.6},
    ),
}


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _open_trees(
    reindex: bool, limit: int, corpora: list[str] | None = None, sets: list[str] | None = None
) -> list[dict[str, Any]]:
    """Per corpus (of ``corpora``, default all): its queries, file roles and an indexed
    ``Lode`` per tree that ``sets`` (default all) ask."""
    from benchmarks._vector_cache import CachedEmbedder
    from indexer.embed import load_embedder

    # the benchmark's model with its vector cache: the trees' chunks are embedded already
    embedder = CachedEmbedder(
        load_embedder(load_config().embed), cache_dir() / "vectors" / "repo_quality.sqlite"
    )
    trees = []
    for corpus in REPO_CORPORA:
        if corpora and corpus.name not in corpora:
            continue
        run, files, blanked, roles = prepare_repo(corpus, limit=limit, seed=0)
        entry: dict[str, Any] = {
            "name": corpus.name,
            "run": run,
            "roles": roles,
            "corpus": corpus,
            "lodes": {},
        }
        for tree_name, texts in (("blanked", blanked), ("original", files)):
            if sets and not any((s in BLANKED_SETS) == (tree_name == "blanked") for s in sets):
                continue
            base = cache_dir() / "tune" / f"{corpus.name}-{tree_name}"
            lode = Lode(load_config(overrides={"db": base / "db"}), embedder=embedder)
            if reindex or not (base / "db").exists() or not lode.store.projects.all():
                tree = base / "tree" / corpus.name
                if not tree.exists():
                    _write_tree(texts, tree)
                started = time.perf_counter()
                lode.index(tree, name=corpus.name)
                _log(f"{corpus.name} ({tree_name}) indexed in {time.perf_counter() - started:.0f} s")
            entry["lodes"][tree_name] = lode
        trees.append(entry)
    return trees


def _evaluate(
    trees: list[dict[str, Any]], config: RankingConfig, modes: list[str], sets: list[str] | None = None
) -> dict[str, Any]:
    """Macro means per set and mode: {set: {mode: {figure: value}}}."""
    per_corpus: dict[str, dict[str, list[dict[str, float]]]] = {}
    for entry in trees:
        roles: Mapping[str, str] = entry["roles"]
        corpus = entry["corpus"]

        def is_impl(path: str, roles: Mapping[str, str] = roles, corpus: Any = corpus) -> bool:
            return (roles.get(path) or file_role(path, b"", corpus.roles)) == IMPLEMENTATION

        for set_name, queries in entry["run"].queries.items():
            if sets and set_name not in sets:
                continue
            lode = entry["lodes"]["blanked" if set_name in BLANKED_SETS else "original"]
            source_only = set_name in SOURCE_ONLY
            for mode in modes:
                searcher = Searcher(lode.store, lode.embedder, known_languages(), ranking=config)
                try:
                    values = [
                        query_values(q, _answer(searcher, entry["name"], q.text, mode, source_only), is_impl)
                        for q in queries
                    ]
                finally:
                    searcher.close()
                means = {k: statistics.fmean(v[k] for v in values) for k in values[0]} if values else {}
                per_corpus.setdefault(set_name, {}).setdefault(mode, []).append(means)
    return {
        s: {
            m: {k: round(statistics.fmean(c[k] for c in corpora), 3) for k in corpora[0]}
            for m, corpora in by_mode.items()
        }
        for s, by_mode in per_corpus.items()
    }


def main() -> int:
    """Evaluate the chosen variants and print (and save) their macro figures."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--variant", action="append", choices=sorted(VARIANTS), help="variants to compare")
    parser.add_argument("--mode", action="append", choices=MODES, help="modes (default: all three)")
    parser.add_argument("--set", action="append", choices=SETS, help="sets (default: all)")
    parser.add_argument("--limit", type=int, default=100, help="queries per set and corpus")
    parser.add_argument("--corpus", action="append", help="corpora (default: all)")
    parser.add_argument("--reindex", action="store_true", help="index the trees again")
    parser.add_argument("--output", type=Path, default=cache_dir() / "tune" / "variants.json")
    args = parser.parse_args()
    trees = _open_trees(args.reindex, args.limit, args.corpus, args.set)
    modes = args.mode or list(MODES)
    results: dict[str, Any] = {}
    for name in args.variant or ["base"]:
        started = time.perf_counter()
        results[name] = _evaluate(trees, VARIANTS[name](RankingConfig()), modes, args.set)
        _log(f"variant {name}: {time.perf_counter() - started:.0f} s")
    figures = ("chunk_mrr", "file_mrr", "best_file_mrr", "acc@5", "any@5", "nonimpl@5", "nonimpl_chunks@5")
    for set_name in args.set or SETS:
        print(f"\n## {set_name}\n\n| variant | mode | " + " | ".join(figures) + " |")
        print("|---|---|" + "---:|" * len(figures))
        for name, result in results.items():
            for mode in modes:
                row = result.get(set_name, {}).get(mode, {})
                cells = " | ".join(str(row.get(f, "–")) for f in figures)
                print(f"| {name} | {mode} | {cells} |")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=1))
    for entry in trees:
        for lode in entry["lodes"].values():
            lode.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
