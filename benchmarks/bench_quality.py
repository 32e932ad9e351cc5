"""Retrieval quality on real code (CodeSearchNet protocol): MRR@10, Recall@1/10, nDCG@10.

Downloads the pinned corpora once (``$LODE_BENCH_CACHE``, default ``~/.cache/lode-bench``),
blanks their doc comments, indexes each with lode and asks the doc comments' first
sentences in every mode (lexical, semantic, hybrid). Writes
``benchmarks/results/quality.json`` and prints markdown tables with bootstrap 95%
intervals. ``--quick`` asks at most 150 pairs per corpus over the smaller slices;
``--full`` asks every pair over the larger slices.

Example:
    .venv/bin/python -m benchmarks.bench_quality --quick
    .venv/bin/python -m benchmarks.bench_quality --full --baseline old-quality.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.quality._fetch import DownloadError
from benchmarks.quality.corpora import CORPORA
from benchmarks.quality.evaluate import MODES, CorpusRun, evaluate_corpus
from benchmarks.quality.report import build_result, compare_runs, to_markdown

QUICK_PAIRS = 150
RESULTS = Path(__file__).parent / "results"


def _git_commit() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        )
        dirty = subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    profile = parser.add_mutually_exclusive_group()
    profile.add_argument(
        "--quick", action="store_true", help="smaller slices, ≤150 pairs per corpus (default)"
    )
    profile.add_argument("--full", action="store_true", help="larger slices, every pair")
    parser.add_argument(
        "--corpus", action="append", choices=[c.name for c in CORPORA], help="only these corpora"
    )
    parser.add_argument("--mode", action="append", choices=MODES, help="only these modes")
    parser.add_argument("--limit", type=int, help="pairs asked per corpus (default: 150 quick, all full)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the pair sample and the bootstrap")
    parser.add_argument("--baseline", type=Path, help="an earlier quality.json to compare with (paired)")
    parser.add_argument("--output", type=Path, default=RESULTS / "quality.json")
    parser.add_argument(
        "--fresh-vectors",
        action="store_true",
        help="embed every chunk again instead of reusing the vectors of earlier runs",
    )
    return parser.parse_args()


def main() -> int:
    """Run the quality benchmark, write its JSON and print its tables."""
    args = _parse_args()
    started = time.perf_counter()
    full = bool(args.full)
    limit = args.limit if args.limit is not None else (None if full else QUICK_PAIRS)
    specs = [c for c in CORPORA if not args.corpus or c.name in args.corpus]
    modes = tuple(args.mode or MODES)

    from indexer.config import load_config
    from indexer.embed import load_embedder

    config = load_config()
    embedder: Any = load_embedder(config.embed)
    if not args.fresh_vectors:
        from benchmarks._vector_cache import CachedEmbedder
        from benchmarks.quality.corpora import cache_dir

        embedder = CachedEmbedder(
            embedder, cache_dir() / "vectors" / "quality.sqlite", config.embed.vector_encoder
        )
    model_seconds = round(time.perf_counter() - started, 2)
    runs: list[CorpusRun] = []
    missing: dict[str, str] = {}
    for spec in specs:
        try:
            runs.append(evaluate_corpus(spec, embedder, full=full, limit=limit, seed=args.seed, modes=modes))
        except DownloadError as exc:
            missing[spec.name] = str(exc)
            print(f"{spec.name}: SKIPPED, {exc}", file=sys.stderr)
    meta: dict[str, Any] = {
        "profile": "full" if full else "quick",
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "lode_commit": _git_commit(),
        "python": platform.python_version(),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
        "model": embedder.model_id,
        "chunker": asdict(config.chunker),
        "pairs_per_corpus": limit,
        "model_load_seconds": model_seconds,
        "missing_corpora": missing,
        "vectors_reused": getattr(embedder, "hits", 0),
        "vectors_computed": getattr(embedder, "misses", None),
    }
    result = build_result(runs, seed=args.seed, meta=meta)
    if args.baseline:
        old = json.loads(args.baseline.read_text(encoding="utf-8"))
        result["baseline"] = {"path": str(args.baseline), "modes": compare_runs(result, old, seed=args.seed)}
    result["seconds"] = round(time.perf_counter() - started, 1)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(to_markdown(result))
    print(f"quality ({meta['profile']}): {result['seconds']} s; wrote {args.output}")
    return 1 if missing else 0


if __name__ == "__main__":
    raise SystemExit(main())
