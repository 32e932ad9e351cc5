"""search_content latency: first pages and continuation pages, in-process.

Queries are drawn from the store itself: a unit's name as an exact term, the words of
another unit's name as a concept, in three shapes (concept + term, concept only, term
only). For each query the first page is timed (including embedding the concepts, whose
vectors are forgotten first), then the second page through its continuation token (the
search runs again over the same fixed pool; the concepts' vectors are remembered).
Writes ``benchmarks/results/content.json``.

Targets (≥ 100k chunks, 2-core machine): first page p50 ≤ 50 ms; a continuation page
≤ the first page + 10 ms.

Stores: by default the shared ≥ 100k-chunk store of ``benchmarks/_bigstore.py`` (its quick
profile, the one ``bench_search`` uses), ``--db PATH --project NAME`` (an existing index;
its model is loaded, or a fake embedder of the same id and dimension for synthetic
stores), or ``--fixture`` (a small store of the fixture repository copied ``--copies``
times, fake model).

Example:
    .venv/bin/python -m benchmarks.bench_content --quick
    .venv/bin/python -m benchmarks.bench_content --full --queries 300
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from indexer.api import Lode
from indexer.config import DEFAULT_MODEL, load_config
from indexer.embed import Embedder, FakeEmbedder, load_embedder
from indexer.lexicon import identifier_words, iter_identifiers
from indexer.search import ContentRequest
from indexer.store import read_store_info

RESULTS = Path(__file__).parent / "results"
FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "data" / "repo"
SHAPES = ("hybrid", "semantic", "exact")


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def embedder_for(db: Path) -> Embedder:
    """The store's model, or a deterministic stand-in of the same id and size for synthetic stores."""
    info = read_store_info(db)
    if info.get("model_id", DEFAULT_MODEL) == DEFAULT_MODEL:
        return load_embedder()
    return FakeEmbedder(int(info["dimension"]), info["model_id"])


def sample_requests(lode: Lode, project: str, count: int, seed: int = 0) -> list[ContentRequest]:
    """Requests built from the names of units the store holds, cycling through the shapes."""
    store = lode.store
    pid = store.projects.get(project).id
    docs, _ = store.documents.page(pid, 0, 100_000)
    rng = random.Random(seed)
    picked = rng.sample(docs, min(len(docs), count * 2))
    names = []
    for stored in store.chunks.of_files([d.id for d in picked]):
        longest = sorted(iter_identifiers(stored.chunk.content), key=len)[-1:]
        named = stored.chunk.node_name or (longest[0] if longest else "")
        if len(named) > 3:
            names.append(named)
    rng.shuffle(names)
    requests = []
    for i in range(count):
        term, concept = names[(2 * i) % len(names)], identifier_words(names[(2 * i + 1) % len(names)])
        shape = SHAPES[i % len(SHAPES)]
        concepts = (concept,) if shape != "exact" else ()
        terms = (term,) if shape != "semantic" else ()
        requests.append(ContentRequest(concepts, terms, project=project, min_score=0.0, limit=10))
    return requests


def measure(lode: Lode, requests: list[ContentRequest]) -> dict[str, Any]:
    """p50/p95 per shape and overall ("hybrid first", "all continuation"…) of first pages
    and continuation pages."""
    times: dict[str, dict[str, list[float]]] = {}
    lode.search_content(requests[0])  # warm up: model, tables, caches of the OS
    for request in requests:
        lode.searcher._vectors.clear()
        started = time.perf_counter()
        first = lode.search_content(request)
        first_ms = (time.perf_counter() - started) * 1000
        token = first.continuation.next_token
        shape = (
            "exact" if not request.semantic_concepts else "semantic" if not request.exact_terms else "hybrid"
        )
        bucket = times.setdefault(shape, {"first": [], "continuation": []})
        bucket["first"].append(first_ms)
        if token is None:
            continue
        started = time.perf_counter()
        lode.search_content(ContentRequest(limit=10, continuation_token=token))
        bucket["continuation"].append((time.perf_counter() - started) * 1000)
    every = {k: [v for b in times.values() for v in b[k]] for k in ("first", "continuation")}
    return {
        f"{shape} {page}": stats
        for shape, bucket in {**times, "all": every}.items()
        for page, stats in _summary(bucket).items()
    }


def _summary(bucket: dict[str, list[float]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, values in bucket.items():
        if values:
            out[name] = {
                "n": len(values),
                "p50_ms": round(percentile(values, 0.5), 2),
                "p95_ms": round(percentile(values, 0.95), 2),
                "mean_ms": round(statistics.fmean(values), 2),
            }
    return out


def _fixture_store(base: Path, copies: int) -> tuple[Path, str]:
    for i in range(copies):
        shutil.copytree(FIXTURE, base / "src" / f"copy_{i:03d}")
    lode = Lode(load_config(env={}, overrides={"db": base / "db"}), embedder=FakeEmbedder(384, "fake-384"))
    try:
        lode.index(base / "src", name="fixture")
    finally:
        lode.close()
    return base / "db", "fixture"


def _store(args: argparse.Namespace, tmp: Path) -> tuple[Path, str, str]:
    """The index to query: (db, project, what it is)."""
    if args.db:
        return args.db, args.project or "", str(args.db)
    if args.fixture:
        db, project = _fixture_store(tmp, args.copies)
        return db, project, f"fixture x{args.copies}"
    from benchmarks._bigstore import open_big_store

    big = open_big_store("quick")  # the model loads only if the store must be built
    return big.db, big.project, "bigstore"


def run(db: Path, project: str, count: int) -> dict[str, Any]:
    """Sample ``count`` requests from the store and time them."""
    lode = Lode(load_config(env={}, overrides={"db": db}), embedder=embedder_for(db))
    try:
        started = time.perf_counter()
        requests = sample_requests(lode, project, count)
        return {
            "model": lode.store.model_id,
            "chunks": lode.store.chunks.count(lode.store.projects.get(project).id),
            "queries": len(requests),
            "latency": measure(lode, requests),
            "seconds": round(time.perf_counter() - started, 1),
        }
    finally:
        lode.close()


def main() -> int:
    """Run the benchmark and write its JSON."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", type=Path, help="An existing index")
    parser.add_argument("--project", help="Project of --db to query")
    parser.add_argument("--fixture", action="store_true", help="Query a small fixture store (fake model)")
    parser.add_argument("--queries", type=int, help="Queries (default: 30 quick, 150 full)")
    parser.add_argument("--copies", type=int, default=40, help="Fixture copies for the default store")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="30 queries (default)")
    group.add_argument("--full", action="store_true", help="150 queries")
    parser.add_argument("--output", type=Path, default=RESULTS / "content.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lode-bench-content-") as tmp:
        db, project, label = _store(args, Path(tmp))
        result = run(db, project, args.queries or (150 if args.full else 30))
    report = {
        "machine": platform.machine(),
        "python": platform.python_version(),
        "profile": "full" if args.full else "quick",
        "store": label,
        **result,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    print(
        json.dumps({k: v for k, v in report["latency"].items() if k.startswith("all")}, indent=2),
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
