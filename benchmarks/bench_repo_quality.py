"""Retrieval quality on whole repositories (tests, docs, examples, changelogs included).

Downloads five pinned upstream trees once (``$LODE_BENCH_CACHE``, default
``~/.cache/lode-bench``), indexes each as a user would (the whole folder, default ignore
rules) and asks its query sets in every mode (lexical, semantic, hybrid), beside a
plain BM25-over-files reference: (a) doc comment → unit and (d) the same doc comments of
functions rewritten as plain-English questions, on the tree with every doc comment
blanked; (b) change description (commit subject after the pin) → changed files,
(c) identifier → defining unit and (e) real bug report (issue title and body) → the files
its fix changed, with (e') the same reports restricted by hand to implementation files
as the reference line, on the original tree. Prints markdown tables with
bootstrap 95% intervals and writes ``benchmarks/results/repo_quality.json``. See
docs/quality-benchmark.md.

``--quick`` asks at most 100 queries per set and corpus; ``--full`` asks them all.

Example:
    .venv/bin/python -m benchmarks.bench_repo_quality --quick
    .venv/bin/python -m benchmarks.bench_repo_quality --quick \\
        --baseline benchmarks/results/repo_quality_before.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.bench_quality import _git_commit
from benchmarks.quality._fetch import DownloadError
from benchmarks.quality.evaluate import MODES
from benchmarks.quality.repo_corpora import REPO_CORPORA
from benchmarks.quality.repo_evaluate import DEEP, RepoRun, evaluate_repo
from benchmarks.quality.repo_report import build_repo_result, compare_repo_runs, dump_result, repo_markdown
from benchmarks.quality.repo_sets import SETS

QUICK_QUERIES = 100
RESULTS = Path(__file__).parent / "results"


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    profile = parser.add_mutually_exclusive_group()
    profile.add_argument("--quick", action="store_true", help="≤100 queries per set and corpus (default)")
    profile.add_argument("--full", action="store_true", help="every query")
    parser.add_argument(
        "--corpus", action="append", choices=[c.name for c in REPO_CORPORA], help="only these"
    )
    parser.add_argument("--mode", action="append", choices=MODES, help="only these modes")
    parser.add_argument("--set", action="append", choices=SETS, dest="sets", help="only these query sets")
    parser.add_argument("--limit", type=int, help="queries per set and corpus (default: 100 quick, all full)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the query sample and the bootstrap")
    parser.add_argument("--baseline", type=Path, help="an earlier repo_quality JSON to compare with (paired)")
    parser.add_argument("--output", type=Path, default=RESULTS / "repo_quality.json")
    parser.add_argument(
        "--fresh-vectors",
        action="store_true",
        help="embed every chunk again instead of reusing cached vectors",
    )
    return parser.parse_args()


def main() -> int:
    """Run the whole-repository benchmark, write its JSON and print its tables."""
    args = _parse_args()
    started = time.perf_counter()
    full = bool(args.full)
    limit = args.limit if args.limit is not None else (None if full else QUICK_QUERIES)
    corpora = [c for c in REPO_CORPORA if not args.corpus or c.name in args.corpus]
    modes = tuple(args.mode or MODES)
    sets = tuple(args.sets or SETS)

    from indexer.config import load_config
    from indexer.embed import load_embedder

    config = load_config()
    embedder: Any = load_embedder(config.embed)
    if not args.fresh_vectors:
        from benchmarks._vector_cache import CachedEmbedder
        from benchmarks.quality.corpora import cache_dir

        embedder = CachedEmbedder(
            embedder, cache_dir() / "vectors" / "repo_quality.sqlite", config.embed.vector_encoder
        )
    model_seconds = round(time.perf_counter() - started, 2)
    runs: list[RepoRun] = []
    missing: dict[str, str] = {}
    for corpus in corpora:
        try:
            runs.append(evaluate_repo(corpus, embedder, limit=limit, seed=args.seed, modes=modes, sets=sets))
        except DownloadError as exc:
            missing[corpus.name] = str(exc)
            print(f"{corpus.name}: SKIPPED, {exc}", file=sys.stderr)
    meta: dict[str, Any] = {
        "profile": "full" if full else "quick",
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "lode_commit": _git_commit(),
        "python": platform.python_version(),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
        "model": embedder.model_id,
        "chunker": asdict(config.chunker),
        "queries_per_set": limit,
        "deep_chunk_limit": DEEP,
        "model_load_seconds": model_seconds,
        "missing_corpora": missing,
        "vectors_reused": getattr(embedder, "hits", 0),
        "vectors_computed": getattr(embedder, "misses", None),
    }
    result = build_repo_result(runs, modes=modes, seed=args.seed, meta=meta)
    if args.baseline:
        old = json.loads(args.baseline.read_text(encoding="utf-8"))
        result["baseline"] = {
            "path": str(args.baseline),
            "sets": compare_repo_runs(result, old, seed=args.seed),
        }
    result["seconds"] = round(time.perf_counter() - started, 1)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(dump_result(result), encoding="utf-8")
    print(repo_markdown(result))
    print(f"repo_quality ({meta['profile']}): {result['seconds']} s; wrote {args.output}")
    return 1 if missing else 0


if __name__ == "__main__":
    raise SystemExit(main())
