"""Go-to-definition and find-references latency, in-process and over HTTP.

On the ≥ 100k-chunk store of ``bench_search`` (``_bigstore``: rebuilt when lode's chunker
changed, so it has the symbol index), or with ``--small`` on the quick quality corpus with
the most chunks (a run to check that the benchmark works; its figures mean little). Names
are sampled from the store's own definitions (every ``len // count``-th name, sorted, so
runs are comparable); go to definition asks each name as read from a file that uses it
(``from_path``: the proximity ranking included), find references asks the same names.
In-process the calls go through ``Lode.symbols`` / ``Lode.references``; over HTTP one
client asks a ``lode serve`` subprocess (``GET /api/v1/symbols`` and
``/api/v1/symbols/references``) on a copy of the store. Writes
``benchmarks/results/symbols.json`` (not for ``--small``).

Targets (2-core machine): p50 ≤ 10 ms in-process, ≤ 20 ms over HTTP, both operations.

Example:
    .venv/bin/python -m benchmarks.bench_symbols --quick
    .venv/bin/python -m benchmarks.bench_symbols --small
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from benchmarks.quality.corpora import CORPORA, fetch_corpus, read_corpus
from indexer.api import Lode
from indexer.config import load_config
from indexer.symbols import ReferenceQuery, SymbolQuery

RESULTS = Path(__file__).parent / "results"
TARGETS = {"in_process_p50_ms": 10.0, "http_p50_ms": 20.0}


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def timed(calls: list[Callable[[], Any]], repeat: int) -> dict[str, Any]:
    """p50/p95/mean in ms of running every call ``repeat`` times (after one warm-up round)."""
    for call in calls[: min(len(calls), 20)]:
        call()
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


def sample_names(lode: Lode, count: int) -> list[tuple[str, str | None]]:
    """(name, a file that uses it) for ``count`` defined names spread over the store."""
    store = lode.store
    names = [n for n in store.symbols.names() if len(n) > 2]
    step = max(1, len(names) // count)
    out: list[tuple[str, str | None]] = []
    for name in names[::step][:count]:
        sites = store.symbols.references([name], limit=1)
        out.append((name, sites[0].file_path if sites else None))
    return out


def in_process(lode: Lode, names: list[tuple[str, str | None]], repeat: int) -> dict[str, Any]:
    """Both operations through the Python API."""
    definition = [lambda n=n, f=f: lode.symbols(SymbolQuery(n, from_path=f)) for n, f in names]
    references = [lambda n=n, f=f: lode.references(ReferenceQuery(n, from_path=f)) for n, f in names]
    return {"definition": timed(definition, repeat), "references": timed(references, repeat)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(base: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(base + "/health", timeout=2).json().get("status") == "ok":
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise TimeoutError("server did not become ready")


def over_http(db: Path, names: list[tuple[str, str | None]], repeat: int) -> dict[str, Any]:
    """Both operations through a ``lode serve`` subprocess on a copy of the store."""
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="lode-bench-symbols-") as tmp:
        copy = Path(tmp) / "db"
        shutil.copytree(db, copy)
        env = {
            **os.environ,
            "LODE_NO_AUTH": "1",
            "LODE_DB": str(copy),
            "LODE_PORT": str(port),
            "HF_HUB_OFFLINE": "1",
        }
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        log = (Path(tmp) / "server.log").open("wb")
        server = subprocess.Popen(
            [sys.executable, "-m", "server", "serve", "--no-watch"], env=env, stdout=log, stderr=log
        )
        try:
            _wait(base)
            with httpx.Client(base_url=base, timeout=30) as client:

                def get(path: str, params: dict[str, str]) -> None:
                    client.get(path, params=params).raise_for_status()

                def ask(path: str) -> list[Callable[[], Any]]:
                    return [
                        lambda n=n, f=f: get(path, {"name": n, **({"from_path": f} if f else {})})
                        for n, f in names
                    ]

                return {
                    "definition": timed(ask("/api/v1/symbols"), repeat),
                    "references": timed(ask("/api/v1/symbols/references"), repeat),
                }
        finally:
            server.terminate()
            server.wait(timeout=60)
            log.close()


def small_store(tmp: Path) -> tuple[Path, int]:
    """The quick corpus with the most files, indexed lexically (no vectors) into ``tmp``."""
    spec = max(CORPORA, key=lambda c: len(read_corpus(fetch_corpus(c), c, False)))
    root = tmp / "corpus"
    for rel, data in read_corpus(fetch_corpus(spec), spec, False).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    lode = Lode(load_config(overrides={"db": tmp / "db"}))
    try:
        lode.index(root, name=spec.name, embed=False)
        chunks = lode.store.chunks.count()
    finally:
        lode.close()
    return tmp / "db", chunks


def main() -> int:
    """Time go to definition and find references; write the results."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="200 names, once each (default)")
    group.add_argument("--full", action="store_true", help="500 names, 3 rounds")
    parser.add_argument("--small", action="store_true", help="a small corpus instead of the big store")
    parser.add_argument("--no-http", action="store_true", help="in-process only")
    args = parser.parse_args()
    count, repeat = (500, 3) if args.full else (200, 1)
    with tempfile.TemporaryDirectory(prefix="lode-bench-symbols-store-") as tmp:
        if args.small:
            db, chunks = small_store(Path(tmp))
        else:
            from benchmarks._bigstore import open_big_store

            big = open_big_store("quick")
            db, chunks = big.db, big.chunks
        lode = Lode(load_config(overrides={"db": db}))
        try:
            stats = lode.store.stats()
            names = sample_names(lode, count)
            local = in_process(lode, names, repeat)
        finally:
            lode.close()
        remote = None if args.no_http else over_http(db, names, repeat)
    result = {
        "benchmark": "symbols",
        "profile": ("full" if args.full else "quick") + ("-small" if args.small else ""),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "store_chunks": chunks,
        "store_symbols": stats.get("symbols", 0),
        "names": len(names),
        "in_process": local,
        "http": remote,
        "targets": TARGETS,
    }
    if not args.small:  # a check run on a small store is printed, not kept
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "symbols.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"store: {chunks} chunks, {result['store_symbols']} symbol rows; {len(names)} names")
    print("| operation | in-process p50/p95 ms | HTTP p50/p95 ms |")
    print("|---|---:|---:|")
    for op in ("definition", "references"):
        http = f"{remote[op]['p50_ms']}/{remote[op]['p95_ms']}" if remote else "-"
        print(f"| {op} | {local[op]['p50_ms']}/{local[op]['p95_ms']} | {http} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
