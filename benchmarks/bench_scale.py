"""Scale-out and size: an index on object storage against a local folder, readers side by
side, and what a search costs as the index grows. Writes ``benchmarks/results/scale.json``
and ``benchmarks/results/scale.png``.

Three parts (``--parts``; all by default):

- ``s3``: one corpus (the ``.py`` files of some installed packages, pinned by
  ``constraints.txt``) indexed in the same run into a local folder and into a local S3
  server (moto's, on this machine: ``benchmarks._local_s3``): index throughput (phase 1,
  walk-chunk-write; phase 2, embedding), search p50/p95 as a reader sees it (opened
  read-only, with the default consistency window; hybrid, chunk and document
  granularity), and the object-store requests a search makes once warm.
- ``readers``: searches per second and p50/p95 of concurrent clients against one and then
  two ``lode serve --read-only`` processes over that S3 index.
- ``size``: stores of 100k, 300k and 1M chunks (``--full``; quick: 25k, 75k, 250k) in a
  local folder: search p50/p95 (hybrid; chunk and document granularity) in a process of
  its own that searches as a search process of ``lode serve`` does (query embedded by the
  cached ONNX graph, store opened read-only), that process's RSS, and bytes on disk per
  chunk (the current version only). Target: p50 at the largest size ≤ 3× p50 at the
  smallest.

How the size stores are made: the corpus is indexed once with the real model
(``copy_000/…``), then copied ``k - 1`` times beside it and indexed again without phase 2
(text and metadata). Every chunk of copies 1…k-1 then gets the first copy's vector of the
same text (lode's embedding cache: same text, same vector), perturbed, v' = (v + σg)/|v + σg| with
g ~ N(0, I/d) and σ = 0.15 (cosine ≈ 0.99 to the real vector; seeded per copy), and its
document the mean of its chunks' vectors again; an optimize folds the new vectors into the
vector index. So the vectors spread like real ones around real ones, not as identical
copies (which an IVF index would find in one partition). Built once per size under
``$LODE_BENCH_CACHE`` and reused.

Every latency here is a timing: run it on a quiet machine (the moto server, the readers
and the clients share its cores). ``--small`` only checks that everything runs.

Example:
    .venv/bin/python -m benchmarks.bench_scale --small
    .venv/bin/python -m benchmarks.bench_scale --full --parts size
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from benchmarks._bigstore import refresh_store
from benchmarks._local_s3 import count_requests, moto_server, new_bucket, s3_env
from benchmarks.quality.corpora import cache_dir
from indexer.api import Lode
from indexer.chunker import CHUNKER_VERSION, embedding_input
from indexer.config import LodeConfig, load_config
from indexer.embed import Embedder, load_embedder
from indexer.models import StoredChunk
from indexer.search import SearchOptions

RESULTS = Path(__file__).parent / "results"
CONFIGS = [("hybrid", "chunk"), ("hybrid", "document")]
PROJECT = "corpus"
#: Spread of the perturbed vectors (see the module docstring).
SIGMA = 0.15


@dataclass(frozen=True, slots=True)
class Profile:
    """How big each part runs."""

    corpus: tuple[str, ...]
    """Installed packages whose ``.py`` files form the corpus (and one copy of a size store)."""
    sizes: tuple[int, ...]
    """Chunk counts of the size stores (each rounded up to whole copies of the corpus)."""
    queries: int
    """Queries per configuration."""
    load_seconds: float
    """How long the clients search each set of readers."""
    clients: int
    """Concurrent clients of the readers."""


PROFILES = {
    "small": Profile(("pathspec",), (3_000, 9_000), 20, 5.0, 2),
    "quick": Profile(("click", "pathspec"), (25_000, 75_000, 250_000), 100, 20.0, 4),
    "full": Profile(
        ("rich", "click", "starlette", "jinja2", "msgspec", "pathspec"),
        (100_000, 300_000, 1_000_000),
        200,
        30.0,
        4,
    ),
}


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _summary(times: list[float]) -> dict[str, Any]:
    return {
        "queries": len(times),
        "p50_ms": round(percentile(times, 0.5), 2),
        "p95_ms": round(percentile(times, 0.95), 2),
    }


# ---- the corpus ------------------------------------------------------------------------


def copy_corpus(root: Path, packages: tuple[str, ...], copies: range) -> int:
    """Copy the packages' ``.py`` files into ``root/copy_NNN/…`` for each copy; files per copy."""
    site = Path(sysconfig.get_paths()["purelib"])
    sources = [p for pkg in packages for p in sorted((site / pkg).glob("**/*.py")) if p.is_file()]
    if not sources:
        raise SystemExit(f"none of {packages} is installed")
    for index in copies:
        for path in sources:
            target = root / f"copy_{index:03d}" / path.relative_to(site)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    return len(sources)


def sample_queries(root: Path, count: int) -> list[str]:
    """Docstring first lines and split function names of the corpus's first copy."""
    from indexer.lexicon import identifier_words

    # a docstring's first line, on the line of its quotes or the next one
    pattern = re.compile(r'def (\w+)\([^)]*\)[^:]*:\s*\n\s+"""\s*([^\n"]{12,100})')
    mixed: list[str] = []
    for path in sorted((root / "copy_000").glob("**/*.py")):
        for name, doc in pattern.findall(path.read_text(errors="replace")):
            mixed += [doc.strip().rstrip("."), identifier_words(name)]
    if not mixed:
        raise SystemExit(f"no function with a docstring under {root / 'copy_000'} to ask about")
    step = max(1, len(mixed) // count)
    return mixed[::step][:count]


def _bytes_under(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# ---- part 1: S3 against a local folder ---------------------------------------------------


def index_timed(config: LodeConfig, root: Path, embedder: Embedder) -> dict[str, Any]:
    """Index ``root`` in two timed phases (chunks written, then vectors); what it took."""
    lode = Lode(config, embedder=embedder)
    try:
        started = time.perf_counter()
        first = lode.index(root, name=PROJECT, embed=False)
        lexical = time.perf_counter() - started
        started = time.perf_counter()
        lode.index(root, name=PROJECT)
        vectors = time.perf_counter() - started
        chunks = lode.store.chunks.count()
    finally:
        lode.close()
    return {
        "files": first.files_indexed,
        "chunks": chunks,
        "phase1_seconds": round(lexical, 2),
        "phase1_files_per_s": round(first.files_indexed / lexical, 1),
        "phase2_seconds": round(vectors, 2),
        "phase2_chunks_per_s": round(chunks / vectors, 1),
    }


def search_timed(
    config: LodeConfig, embedder: Embedder, queries: list[str], requests: Path | None = None
) -> dict[str, Any]:
    """Search latencies as a reader sees them (and, on S3, object-store requests per search)."""
    lode = Lode(config, embedder=embedder)
    out: dict[str, Any] = {}
    try:
        lode.store.indexes.prewarm()
        for mode, granularity in CONFIGS:
            for query in queries[:5]:  # warm: caches filled, as on a server that has run a while
                lode.search(SearchOptions(query=query, mode=mode, granularity=granularity))
            before = count_requests(requests) if requests else {}
            times = []
            for query in queries:
                started = time.perf_counter()
                lode.search(SearchOptions(query=query, mode=mode, granularity=granularity))
                times.append((time.perf_counter() - started) * 1000)
            row = _summary(times)
            # the requests include one LIST per table read per consistency window: spread
            # over however many searches that window held
            row["seconds"] = round(sum(times) / 1000, 2)
            if requests is not None:
                after = count_requests(requests)
                for method in ("GET", "HEAD", "PUT"):
                    spent = after.get(method, 0) - before.get(method, 0)
                    row[f"{method.lower()}_per_search"] = round(spent / len(queries), 2)
            out[f"{mode}_{granularity}"] = row
    finally:
        lode.close()
    return out


def part_s3(
    profile: Profile, endpoint: str, moto_log: Path, work: Path, embedder: Embedder
) -> dict[str, Any]:
    """Index and search the corpus in a local folder and on the local S3 server."""
    root = work / "corpus"
    copy_corpus(root, profile.corpus, range(1))
    queries = sample_queries(root, profile.queries)
    s3 = {**s3_env(endpoint), "LODE_DB": f"s3://{new_bucket(endpoint)}/index"}
    local = {"LODE_DB": str(work / "local-db")}
    result: dict[str, Any] = {"corpus": list(profile.corpus), "db": s3["LODE_DB"]}
    for name, env in (("local", local), ("s3", s3)):
        print(f"scale: indexing the corpus into {env['LODE_DB']}…", file=sys.stderr, flush=True)
        indexed = index_timed(load_config(env=env), root, embedder)
        reader = load_config(env={**env, "LODE_READ_ONLY": "true"})
        searched = search_timed(reader, embedder, queries, moto_log if name == "s3" else None)
        result[name] = {"index": indexed, "search": searched}
    result["env"] = s3
    result["queries"] = queries
    return result


# ---- part 2: readers side by side ---------------------------------------------------------


@contextmanager
def readers(env: dict[str, str], count: int, log: Path) -> Iterator[list[str]]:
    """``count`` read-only servers of the index ``env`` names; their base URLs."""
    from benchmarks._local_s3 import free_port

    procs, bases = [], []
    out = log.open("ab")
    try:
        for _ in range(count):
            port = free_port()
            child_env = {
                **os.environ,
                "LODE_NO_AUTH": "1",
                **env,
                "LODE_PORT": str(port),
                "LODE_SEARCH_PROCESSES": "0",
            }
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "server", "serve", "--read-only"],
                    env=child_env,
                    stdout=out,
                    stderr=out,
                )
            )
            bases.append(f"http://127.0.0.1:{port}")
        for base in bases:
            _wait_ready(base)
        yield bases
    finally:
        out.close()
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=60)


def _wait_ready(base: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(base + "/health", timeout=2).json().get("status") == "ok":
                return
        except (httpx.HTTPError, ValueError):
            pass
        time.sleep(0.2)
    raise TimeoutError(f"{base} never got ready")


def load(bases: list[str], queries: list[str], clients: int, seconds: float) -> dict[str, Any]:
    """``clients`` threads searching the servers round robin for ``seconds``."""
    times: list[float] = []
    failures = 0
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client(number: int) -> None:
        nonlocal failures
        with httpx.Client(timeout=60) as http:
            i = number
            while time.monotonic() < stop:
                base = bases[i % len(bases)]
                started = time.perf_counter()
                response = http.post(f"{base}/api/v1/search", json={"query": queries[i % len(queries)]})
                took = (time.perf_counter() - started) * 1000
                with lock:
                    if response.status_code == 200:
                        times.append(took)
                    else:
                        failures += 1
                i += clients

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {"searches_per_s": round(len(times) / seconds, 2), "failures": failures, **_summary(times)}


def part_readers(profile: Profile, s3: dict[str, Any], work: Path) -> dict[str, Any]:
    """Throughput of one and of two read-only servers over the S3 index."""
    out: dict[str, Any] = {"clients": profile.clients, "seconds": profile.load_seconds}
    for count in (1, 2):
        print(f"scale: {profile.clients} clients against {count} reader(s)…", file=sys.stderr, flush=True)
        with readers(s3["env"], count, work / "readers.log") as bases:
            load(bases, s3["queries"], profile.clients, min(3.0, profile.load_seconds))  # warm
            out[f"{count}_reader{'s' if count > 1 else ''}"] = load(
                bases, s3["queries"], profile.clients, profile.load_seconds
            )
    return out


# ---- part 3: cost by size -----------------------------------------------------------------


def perturb(vectors: np.ndarray, seed: int) -> np.ndarray:
    """Unit vectors near ``vectors``: v + σg renormalised (see the module docstring)."""
    rng = np.random.default_rng(seed)
    noise = rng.standard_normal(vectors.shape).astype(np.float32) * (SIGMA / math.sqrt(vectors.shape[1]))
    moved = vectors + noise
    return (moved / np.linalg.norm(moved, axis=1, keepdims=True)).astype(np.float32)


def _first_copy_text_hash(chunk: StoredChunk) -> str:
    """The text hash of the same chunk in ``copy_000`` (paths differ only in the copy)."""
    return embedding_input("copy_000/" + chunk.file_path.split("/", 1)[1], chunk.chunk)[1]


def _spread_vectors(lode: Lode) -> None:
    """Give every chunk outside the first copy a perturbed vector, and its document the mean."""
    store = lode.store
    project = store.projects.get(PROJECT)
    states = store.documents.states(project.id)
    by_copy: dict[str, list[str]] = {}
    for path, state in states.items():
        by_copy.setdefault(path.split("/", 1)[0], []).append(state.id)
    for number, (copy, file_ids) in enumerate(sorted(by_copy.items())):
        if copy == "copy_000":
            continue
        if number % 10 == 0:  # each write leaves a version holding the rows it replaced
            store.versions.prune(keep=timedelta(0))
        for start in range(0, len(file_ids), 500):
            part = file_ids[start : start + 500]
            chunks = store.chunks.of_files(part)
            # the vector the model made for the same chunk in the first copy
            origin = {c.id: _first_copy_text_hash(c) for c in chunks}
            cached = store.vectors.cached(list(origin.values()))
            kept = [c for c in chunks if origin[c.id] in cached]
            if kept:
                base = np.stack([cached[origin[c.id]] for c in kept])
                seed = int(copy.removeprefix("copy_")) * 100_003 + start
                # a synthetic vector, recorded as its chunk's own (the store is a benchmark's)
                own = [embedding_input(c.file_path, c.chunk)[1] for c in kept]
                store.vectors.write([c.id for c in kept], perturb(base, seed), own)
            store.vectors.complete_documents(part)


def size_store(profile: Profile, size: int, embedder: Embedder) -> tuple[Path, Path, int]:
    """Build (once) or reuse the store of about ``size`` chunks; (db, sources, chunks)."""
    base = cache_dir() / f"scale-{size}"
    marker = base / "built.json"
    # an older schema is migrated, not rebuilt (a 1M-chunk store takes hours to build)
    wanted = {"corpus": list(profile.corpus), "size": size, "sigma": SIGMA, "chunker": CHUNKER_VERSION}
    reusable = marker.exists() and json.loads(marker.read_text()).get("wanted") == wanted
    if reusable and refresh_store(base / "db", embedder):
        return base / "db", base / "src", int(json.loads(marker.read_text())["chunks"])
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    src, db = base / "src", base / "db"
    copy_corpus(src, profile.corpus, range(1))
    lode = Lode(load_config(env={}, overrides={"db": db}), embedder=embedder)
    try:
        print(f"scale: building a store of ~{size} chunks…", file=sys.stderr, flush=True)
        lode.index(src, name=PROJECT)
        per_copy = lode.store.chunks.count()
        copies = max(1, math.ceil(size / per_copy))
        copy_corpus(src, profile.corpus, range(1, copies))
        # the copies' text and metadata only: their vectors are the first copy's, perturbed
        # (written once each: through phase 2 and then again, a 1M-chunk build filled 73 GB)
        lode.index(src, name=PROJECT, embed=False)
        _spread_vectors(lode)
        lode.store.maintenance.optimize()
        lode.store.versions.prune(keep=timedelta(0))
        chunks = lode.store.chunks.count()
    finally:
        lode.close()
    marker.write_text(json.dumps({"wanted": wanted, "chunks": chunks, "copies": copies}))
    return db, src, chunks


def measure_here(db: str, queries: list[str], graph_file: str) -> dict[str, Any]:
    """In a process of its own: search ``db`` as a search process of ``lode serve`` does
    (queries embedded by the model's ONNX graph the server hands it, no torch; the store
    opened read-only); latencies and RSS."""
    import pickle

    from indexer.api import open_for_queries

    config = load_config(env={}, overrides={"db": Path(db), "read_only": True})
    graph = pickle.loads(Path(graph_file).read_bytes())  # our own file
    lode = open_for_queries(config, graph)
    out: dict[str, Any] = {}
    try:
        lode.store.indexes.prewarm()
        for mode, granularity in CONFIGS:
            for query in queries[:5]:
                lode.search(SearchOptions(query=query, mode=mode, granularity=granularity))
            times = []
            for query in queries:
                started = time.perf_counter()
                lode.search(SearchOptions(query=query, mode=mode, granularity=granularity))
                times.append((time.perf_counter() - started) * 1000)
            out[f"{mode}_{granularity}"] = _summary(times)
    finally:
        lode.close()
    out["rss_mb"] = round(_rss_mb(), 1)
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return out


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def part_size(profile: Profile, embedder: Embedder, work: Path) -> dict[str, Any]:
    """Latency, memory and disk of the size stores."""
    import pickle

    from indexer.embed import query_graph_of

    graph_file = work / "query-graph.pickle"
    graph_file.write_bytes(pickle.dumps(query_graph_of(embedder)))
    rows: dict[str, Any] = {}
    for size in profile.sizes:
        db, src, chunks = size_store(profile, size, embedder)
        queries = sample_queries(src, profile.queries)
        listed = work / f"queries-{size}.json"
        listed.write_text(json.dumps(queries))
        print(f"scale: searching the store of {chunks} chunks…", file=sys.stderr, flush=True)
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmarks.bench_scale",
                "--measure",
                str(db),
                str(listed),
                str(graph_file),
            ],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "LODE_READ_ONLY": "true"},
        )
        measured = json.loads(done.stdout)
        rows[str(chunks)] = {
            "chunks": chunks,
            **measured,
            "disk_bytes_per_chunk": round(_bytes_under(db) / chunks, 1),
        }
    first, last = rows[min(rows, key=int)], rows[max(rows, key=int)]
    ratio = last["hybrid_chunk"]["p50_ms"] / max(first["hybrid_chunk"]["p50_ms"], 1e-9)
    return {"sizes": rows, "p50_ratio_largest_to_smallest": round(ratio, 2), "target_ratio": 3.0}


# ---- the run ------------------------------------------------------------------------------


def _print(result: dict[str, Any]) -> None:
    s3 = result.get("s3")
    if s3:
        print(
            "| where | phase 1 files/s | phase 2 chunks/s | hybrid chunk p50/p95 ms | document p50/p95 ms |"
        )
        print("|---|---:|---:|---:|---:|")
        for name in ("local", "s3"):
            row, search = s3[name]["index"], s3[name]["search"]
            chunk, doc = search["hybrid_chunk"], search["hybrid_document"]
            print(
                f"| {name} | {row['phase1_files_per_s']} | {row['phase2_chunks_per_s']} "
                f"| {chunk['p50_ms']} / {chunk['p95_ms']} | {doc['p50_ms']} / {doc['p95_ms']} |"
            )
        print(f"S3 requests per warm search: {s3['s3']['search']['hybrid_chunk']}")
    for name, row in result.get("readers", {}).items():
        if isinstance(row, dict):
            print(
                f"{name}: {row['searches_per_s']} searches/s, p50 {row['p50_ms']} ms, p95 {row['p95_ms']} ms"
            )
    size = result.get("size")
    if size:
        print("| chunks | hybrid chunk p50/p95 ms | document p50/p95 ms | RSS MB | bytes/chunk |")
        print("|---:|---:|---:|---:|---:|")
        for row in size["sizes"].values():
            chunk, doc = row["hybrid_chunk"], row["hybrid_document"]
            print(
                f"| {row['chunks']} | {chunk['p50_ms']} / {chunk['p95_ms']} | {doc['p50_ms']} / {doc['p95_ms']} "
                f"| {row['rss_mb']} | {row['disk_bytes_per_chunk']} |"
            )
        print(f"p50 largest / smallest: {size['p50_ratio_largest_to_smallest']} (target ≤ 3)")


def main() -> int:
    """Run the parts asked for; write the results and the plot."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--small", action="store_true", help="a check that every part runs (minutes)")
    group.add_argument("--quick", action="store_true", help="25k/75k/250k chunks (default)")
    group.add_argument("--full", action="store_true", help="100k/300k/1M chunks (hours the first time)")
    parser.add_argument("--parts", default="s3,readers,size", help="comma-separated: s3, readers, size")
    parser.add_argument(
        "--build-only", action="store_true", help="build (or migrate) the size stores, measure nothing"
    )
    parser.add_argument("--measure", nargs=3, metavar=("DB", "QUERIES", "GRAPH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:  # the child of part 3
        db, queries, graph = args.measure
        print(json.dumps(measure_here(db, json.loads(Path(queries).read_text()), graph)))
        return 0
    name = "full" if args.full else "small" if args.small else "quick"
    profile = PROFILES[name]
    parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    embedder = load_embedder()
    if args.build_only:  # the stores take hours the first time: build them while the machine is busy
        for size in profile.sizes:
            db, _src, chunks = size_store(profile, size, embedder)
            print(f"scale: {db} holds {chunks} chunks", file=sys.stderr)
        return 0
    result: dict[str, Any] = {
        "benchmark": "scale",
        "profile": name,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
    }
    with tempfile.TemporaryDirectory(prefix="lode-scale-") as tmp:
        work = Path(tmp)
        if parts & {"s3", "readers"}:
            with moto_server(work / "moto.log") as endpoint:
                result["s3"] = part_s3(profile, endpoint, work / "moto.log", work, embedder)
                if "readers" in parts:
                    result["readers"] = part_readers(profile, result["s3"], work)
            result["s3"].pop("env")
            result["s3"].pop("queries")
            if "s3" not in parts:
                result.pop("s3")
        if "size" in parts:
            result["size"] = part_size(profile, embedder, work)
    # a check's figures mean nothing: they stay out of benchmarks/results (and its summary)
    target = (
        RESULTS / "scale.json" if name != "small" else Path(tempfile.gettempdir()) / "lode-scale-small.json"
    )
    target.parent.mkdir(exist_ok=True)
    if target.exists():  # parts not run this time keep their last figures (each names its profile)
        kept = json.loads(target.read_text())
        for part in ("s3", "readers", "size"):
            if part in kept and part not in result:
                result[part] = kept[part]
    for part in ("s3", "readers", "size"):
        if part in result and isinstance(result[part], dict) and part in parts:
            result[part]["profile"] = name
    target.write_text(json.dumps(result, indent=2) + "\n")
    if "size" in result:
        from benchmarks._plots import plot_scale

        plot_scale(result["size"]["sizes"], target.with_suffix(".png"))
    _print(result)
    print(f"scale: wrote {target}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
