"""Outline latency: ``ls`` and ``locate`` on the largest quality corpus.

The corpus (the one with the most chunks in ``results/quality.json``, else serde_json) is
indexed lexically (no vectors: the outline does not use them) in a temporary store. The
first call builds the outline and the first ``locate`` its BM25 index (both timed once);
then ``ls`` runs on the root and on every node with children, ``locate`` on questions made
from the corpus's own summaries and titles, each through ``Lode.outline`` as a route would
call it (project lookup and index-version check included). ``--big`` also times the
≥ 100k-chunk store of ``bench_search`` when it is already built. Writes
``benchmarks/results/outline.json``.

Targets (2-core machine): ``ls`` and ``locate`` p50 ≤ 20 ms.

Example:
    .venv/bin/python -m benchmarks.bench_outline --quick
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.quality.corpora import CORPORA, CorpusSpec, cache_dir, fetch_corpus, read_corpus
from indexer.api import Lode
from indexer.config import load_config
from indexer.embed import FakeEmbedder

RESULTS = Path(__file__).parent / "results"
TARGET_P50_MS = 20.0


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def largest_corpus() -> CorpusSpec:
    """The corpus with the most chunks in the last quality run (serde_json without one)."""
    by_name = {spec.name: spec for spec in CORPORA}
    try:
        runs = json.loads((RESULTS / "quality.json").read_text())["corpora"]
        name = max(runs, key=lambda c: c.get("chunks", 0))["name"]
    except (OSError, KeyError, ValueError):
        name = "serde_json"
    return by_name.get(name, by_name["serde_json"])


def timed(calls: list[Callable[[], Any]], repeat: int) -> dict[str, float]:
    """p50/p95/mean in ms of running every call ``repeat`` times."""
    times: list[float] = []
    for _ in range(repeat):
        for call in calls:
            started = time.perf_counter()
            call()
            times.append((time.perf_counter() - started) * 1000)
    return {
        "calls": len(times),
        "p50_ms": round(percentile(times, 0.5), 2),
        "p95_ms": round(percentile(times, 0.95), 2),
        "mean_ms": round(statistics.fmean(times), 2),
    }


def questions(lode: Lode, project: str, count: int) -> list[str]:
    """Fact-like questions from node summaries and titles, plus a few overview questions."""
    outline = lode.outline(project)
    texts = [n.summary for n in outline.root.walk() if n.summary and n.is_text]
    titles = [n.title.replace("_", " ") for n in outline.root.walk() if n.is_text and n.children]
    mixed = [q for pair in zip(texts, titles, strict=False) for q in pair] or ["main entry point"]
    step = max(1, len(mixed) // count)
    return ["what is this project about", "overview", *mixed[::step][: count - 2]]


def measure(lode: Lode, project: str, count: int, repeat: int) -> dict[str, Any]:
    """Cold build times, then warm ls and locate latencies of one indexed project."""
    started = time.perf_counter()
    outline = lode.outline(project)
    build_ms = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    assert outline.index.nodes is not None  # builds the BM25 index
    index_ms = (time.perf_counter() - started) * 1000
    nodes = [n.id for n in outline.root.walk() if n.children][:count]
    asked = questions(lode, project, count)
    ls_calls = [lambda node=node: lode.outline(project).ls(node) for node in nodes]
    locate_calls = [lambda q=q: lode.outline(project).locate(q) for q in asked]
    return {
        "nodes": len(outline.nodes),
        "files": sum(1 for n in outline.nodes.values() if n.kind == "file"),
        "build_ms": round(build_ms, 1),
        "bm25_index_ms": round(index_ms, 1),
        "ls": timed(ls_calls, repeat),
        "locate": timed(locate_calls, repeat),
    }


def corpus_run(spec: CorpusSpec, full: bool, count: int, repeat: int) -> dict[str, Any]:
    """Index one corpus lexically in a temporary store and measure its outline."""
    files = read_corpus(fetch_corpus(spec), spec, full)
    with tempfile.TemporaryDirectory(prefix="lode-bench-outline-") as tmp:
        root = Path(tmp) / "corpus"
        for rel, data in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data)
        lode = Lode(load_config(overrides={"db": Path(tmp) / "db"}), embedder=FakeEmbedder())
        try:
            report = lode.index(root, name=spec.name, embed=False)
            row = measure(lode, spec.name, count, repeat)
        finally:
            lode.close()
    return {"corpus": spec.name, "chunks": report.chunks_written, **row}


def big_run(count: int, repeat: int) -> dict[str, Any] | None:
    """The same on bench_search's big store, when it is already built (never builds it)."""
    marker = cache_dir() / "bigstore-quick" / "built.json"
    if not marker.exists():
        return None
    facts = json.loads(marker.read_text())
    lode = Lode(load_config(overrides={"db": marker.parent / "db"}))
    try:
        row = measure(lode, "bigstore", count, repeat)
    finally:
        lode.close()
    return {"corpus": "bigstore-quick", "chunks": facts["chunks"], **row}


def main() -> int:
    """Index the largest corpus, time the outline, write the results."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="quick corpus profile, 100 calls each (default)")
    group.add_argument("--full", action="store_true", help="full corpus profile, 200 calls each, 3 rounds")
    parser.add_argument("--big", action="store_true", help="also time bench_search's big store if built")
    args = parser.parse_args()
    count, repeat = (200, 3) if args.full else (100, 1)
    rows = [corpus_run(largest_corpus(), args.full, count, repeat)]
    if args.big:
        big = big_run(count, repeat)
        if big is None:
            print("no big store built yet (run benchmarks.bench_search first); skipped", file=sys.stderr)
        else:
            rows.append(big)
    result = {
        "benchmark": "outline",
        "profile": "full" if args.full else "quick",
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "targets": {"ls_p50_ms": TARGET_P50_MS, "locate_p50_ms": TARGET_P50_MS},
        "results": rows,
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "outline.json").write_text(json.dumps(result, indent=2) + "\n")
    print("| corpus | chunks | nodes | build ms | ls p50/p95 ms | locate p50/p95 ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['corpus']} | {row['chunks']} | {row['nodes']} | {row['build_ms']} | "
            f"{row['ls']['p50_ms']}/{row['ls']['p95_ms']} | {row['locate']['p50_ms']}/{row['locate']['p95_ms']} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
