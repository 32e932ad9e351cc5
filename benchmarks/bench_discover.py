"""End-to-end latency and relevance of ``discover`` on the quality corpora.

Indexes the five quality corpora (click, cobra, serde_json, commander, java.util) as five
projects of one store with the real model (kept under ``$LODE_BENCH_CACHE``, so later runs
only re-check files), then asks 20 realistic questions per corpus without naming a project,
as a user would. Reports end-to-end p50/p95 (query embedding included), p50 per stage, and
relevance: how often the prompt cites one of the files a good answer needs, how often the
first focus project is the right corpus. Writes ``benchmarks/results/discover.json``.

Target (2-core machine): end-to-end p50 ≤ 300 ms, p95 ≤ 450 ms.

Example:
    .venv/bin/python -m benchmarks.bench_discover --quick
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks._discover_questions import QUESTIONS
from benchmarks.quality.corpora import CORPORA, CorpusSpec, cache_dir, fetch_corpus, read_corpus
from indexer.api import Lode
from indexer.config import EmbedConfig, load_config
from indexer.embed import Embedder, load_embedder
from indexer.search.discover import DiscoverResult, discover

RESULTS = Path(__file__).parent / "results"
TARGETS = {"p50_ms": 300, "p95_ms": 450}


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _write_corpus(spec: CorpusSpec, target: Path, full: bool) -> None:
    """The corpus files of a profile under ``target`` (unchanged files are left alone)."""
    files = read_corpus(fetch_corpus(spec), spec, full)
    for rel, data in files.items():
        out = target / rel
        if not out.is_file() or out.read_bytes() != data:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)


def open_store(profile: str, embedder: Embedder) -> tuple[Lode, dict[str, Any]]:
    """The benchmark store with every corpus indexed as a project (built once, then reused)."""
    root = cache_dir() / "discover" / profile
    lode = Lode(load_config(overrides={"db": root / "index"}), embedder=embedder)
    started = time.perf_counter()
    for spec in CORPORA:
        folder = root / "corpora" / spec.name
        _write_corpus(spec, folder, profile == "full")
        lode.index(folder, name=spec.name)
    stats = lode.store.stats()
    facts = {
        "chunks": stats["chunks"],
        "documents": stats["documents"],
        "index_seconds": round(time.perf_counter() - started, 1),
    }
    return lode, facts


def _cites(result: DiscoverResult, project: str, files: tuple[str, ...]) -> tuple[bool, bool]:
    cited = [b for s in result.plan.sections for b in s.bullets]
    hit = [b.project == project and b.file_path in files for b in cited]
    return any(hit), bool(hit) and hit[0]


def ask(lode: Lode, questions: list[tuple[str, str, tuple[str, ...]]]) -> list[dict[str, Any]]:
    """Every question once, timed end to end."""
    for warm in ("what is this project", "how are options parsed"):
        discover(lode, warm)
    rows = []
    for corpus, question, files in questions:
        started = time.perf_counter()
        result = discover(lode, question)
        took = (time.perf_counter() - started) * 1000
        cited, first = _cites(result, corpus, files)
        m = result.metrics
        rows.append(
            {
                "corpus": corpus,
                "question": question,
                "ms": round(took, 2),
                "stage_ms": m.stage_ms,
                "cited_expected_file": cited,
                "first_bullet_expected": first,
                "focus_first_project": m.focus_projects[0] if m.focus_projects else None,
                "chunks_found": m.chunks_found,
                "chunks_after_dedup": m.chunks_after_dedup,
                "bullets": m.bullets,
                "prompt_tokens": m.prompt_tokens,
            }
        )
    return rows


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Percentiles, stage medians and relevance rates."""
    times = [r["ms"] for r in rows]
    stages = sorted({s for r in rows for s in r["stage_ms"]})
    share = lambda key: round(sum(1 for r in rows if r[key]) / len(rows), 3)  # noqa: E731
    return {
        "questions": len(rows),
        "p50_ms": round(percentile(times, 0.5), 1),
        "p95_ms": round(percentile(times, 0.95), 1),
        "mean_ms": round(statistics.fmean(times), 1),
        "stage_p50_ms": {
            s: round(percentile([r["stage_ms"].get(s, 0.0) for r in rows], 0.5), 2) for s in stages
        },
        "cited_expected_file": share("cited_expected_file"),
        "first_bullet_expected": share("first_bullet_expected"),
        "focus_on_right_project": round(
            sum(1 for r in rows if r["focus_first_project"] == r["corpus"]) / len(rows), 3
        ),
        "mean_bullets": round(statistics.fmean(r["bullets"] for r in rows), 1),
        "mean_prompt_tokens": round(statistics.fmean(r["prompt_tokens"] for r in rows), 1),
    }


def _report(result: dict[str, Any]) -> None:
    """Print the markdown table of the results."""
    store, overall, per_corpus = result["store"], result["overall"], result["per_corpus"]
    rows = result["questions"]
    print(f"discover on {store['chunks']} chunks in {len(QUESTIONS)} projects, {len(rows)} questions")
    print(
        "| corpus | p50 ms | p95 ms | cites expected file | right focus project |\n|---|---:|---:|---:|---:|"
    )
    for name, s in [*per_corpus.items(), ("all", overall)]:
        print(
            f"| {name} | {s['p50_ms']} | {s['p95_ms']} | {s['cited_expected_file']} | {s['focus_on_right_project']} |"
        )
    print("stage p50 ms:", json.dumps(overall["stage_p50_ms"]))
    ok = overall["p50_ms"] <= TARGETS["p50_ms"] and overall["p95_ms"] <= TARGETS["p95_ms"]
    print("targets met" if ok else f"targets missed: {TARGETS}")


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="the quick slices of the corpora (default)")
    group.add_argument("--full", action="store_true", help="the full slices of the corpora")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads for the model (default 1: small query batches are fastest on one thread "
        "when other processes share the CPU; 0 = torch's default)",
    )
    return parser.parse_args()


def main() -> int:
    """Build or reuse the store, ask every question, write the results."""
    args = _parse_args()
    profile = "full" if args.full else "quick"
    lode, store = open_store(profile, load_embedder(EmbedConfig(threads=args.threads or None)))
    try:
        questions = [(c, q, files) for c, items in QUESTIONS.items() for q, files in items]
        rows = ask(lode, questions)
    finally:
        lode.close()
    overall = summarize(rows)
    per_corpus = {c: summarize([r for r in rows if r["corpus"] == c]) for c in QUESTIONS}
    result = {
        "benchmark": "discover",
        "profile": profile,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "torch_threads": args.threads,
            "load_average_1m_at_end": round(os.getloadavg()[0], 2),
        },
        "store": store,
        "targets": TARGETS,
        "overall": overall,
        "per_corpus": per_corpus,
        "questions": rows,
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "discover.json").write_text(json.dumps(result, indent=2) + "\n")
    _report(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
