"""Save-to-searchable latency: ``lode serve`` (real model, watcher on) over a copy of a real
corpus (the installed ``rich`` package's sources); 50 single-function edits, each timed from
the write until ``POST /api/v1/search`` (default hybrid mode) returns the new function.
Writes ``benchmarks/results/watch.json``.

The corpus's first index (~2 minutes of embedding, not what this measures) is built once by
``lode serve`` itself and kept under ``$LODE_BENCH_CACHE/watch``; each run restores the
corpus, serves a copy of that index (the server's start-up reindex finds nothing changed)
and edits. The kept index is rebuilt when lode's schema, chunker or model or rich changes.

Targets (2-core machine): p50 ≤ 0.8 s, p95 ≤ 1.5 s.

Example:
    .venv/bin/python -m benchmarks.bench_watch --quick
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import os
import random
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks._bigstore import refresh_store
from benchmarks.bench_http import _free_port, _wait
from benchmarks.bench_search import percentile
from benchmarks.quality.corpora import cache_dir

RESULTS = Path(__file__).parent / "results"


def _idle(base: str, timeout: float = 1800) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        tasks = httpx.get(f"{base}/api/v1/tasks", params={"limit": 50}, timeout=10).json()
        if not [t for t in tasks if t["status"] in ("queued", "running")]:
            return
        time.sleep(0.5)
    raise TimeoutError("initial indexing did not finish")


def _fingerprint() -> str:
    """What the kept first index depends on: schema, chunker and lexicon code, model, rich."""
    from indexer.config import load_config
    from indexer.store import SCHEMA_VERSION

    package = Path(__file__).resolve().parent.parent / "indexer"
    sources = sorted([*package.glob("chunker/*.py"), package / "lexicon.py"])
    digest = hashlib.sha256()
    for path in sources:
        digest.update(path.read_bytes())
    # 2: the kept index is optimized after it is built (every row inside the indexes)
    facts = [
        2,
        SCHEMA_VERSION,
        load_config().embed.model,
        importlib.metadata.version("rich"),
        digest.hexdigest(),
    ]
    return hashlib.sha256(json.dumps(facts).encode()).hexdigest()[:16]


def _serve(corpus: Path, db: Path, log_path: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``lode serve corpus`` on a free port over ``db``; (process, base URL) once it answers."""
    port = _free_port()
    env = {**os.environ, "LODE_DB": str(db), "LODE_PORT": str(port), "HF_HUB_OFFLINE": "1"}
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    with log_path.open("ab") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "server", "serve", str(corpus)], env=env, stdout=log, stderr=log
        )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait(base)
    except BaseException:
        _stop(server)
        raise
    return server, base


def _stop(server: subprocess.Popen[bytes]) -> None:
    server.terminate()
    try:
        server.wait(timeout=60)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def _restore_corpus(corpus: Path) -> None:
    """The pristine ``rich`` sources at ``corpus`` (a fixed path: the kept index names it)."""
    shutil.rmtree(corpus, ignore_errors=True)
    site = Path(sysconfig.get_paths()["purelib"])
    shutil.copytree(site / "rich", corpus / "rich", ignore=shutil.ignore_patterns("__pycache__"))


def _kept_index(base: Path, corpus: Path) -> Path:
    """The corpus's first index, built by ``lode serve`` the first time (or after a change)."""
    marker, db = base / "built.json", base / "db"
    wanted = _fingerprint()
    if marker.exists() and json.loads(marker.read_text()).get("fingerprint") == wanted:
        return db
    shutil.rmtree(db, ignore_errors=True)
    marker.unlink(missing_ok=True)
    print("watch: building the corpus's first index (once)…", file=sys.stderr, flush=True)
    started = time.perf_counter()
    server, url = _serve(corpus, db, base / "build.log")
    try:
        _idle(url)
    finally:
        _stop(server)
    # the server stopped right after its last task, before its idle-time optimize: fold
    # every row into the indexes, as a long-running server would have
    refresh_store(db, None)
    seconds = round(time.perf_counter() - started, 1)
    marker.write_text(json.dumps({"fingerprint": wanted, "seconds": seconds}))
    return db


def _found(base: str, marker: str) -> bool:
    body = {"query": marker, "granularity": "chunk", "limit": 5}
    answer = httpx.post(f"{base}/api/v1/search", json=body, timeout=10)
    if answer.status_code != 200:
        raise RuntimeError(f"search answered {answer.status_code}: {answer.text[:500]}")
    return any(marker in h["content"] for g in answer.json()["groups"] for h in g["chunks"])


def edit_and_wait(base: str, path: Path, marker: str, timeout: float = 10.0) -> float:
    """Append a new function to ``path``; seconds until a search returns it."""
    text = path.read_text()
    started = time.perf_counter()
    path.write_text(text + f'\n\ndef {marker}(value):\n    """Bench edit."""\n    return value\n')
    while time.perf_counter() - started < timeout:
        if _found(base, marker):
            return time.perf_counter() - started
        time.sleep(0.02)
    raise TimeoutError(f"{marker} never became searchable")


def main() -> int:
    """Serve a corpus copy, edit it 50 times, time each edit until searchable."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="50 edits (default)")
    group.add_argument("--full", action="store_true", help="200 edits")
    args = parser.parse_args()
    edits = 200 if args.full else 50
    rng = random.Random(7)
    kept = cache_dir() / "watch"
    corpus = kept / "corpus"
    kept.mkdir(parents=True, exist_ok=True)
    _restore_corpus(corpus)
    template = _kept_index(kept, corpus)
    with tempfile.TemporaryDirectory(prefix="lode-bench-watch-") as tmp:
        db = Path(tmp) / "db"
        shutil.copytree(template, db)
        server, base = _serve(corpus, db, Path(tmp) / "server.log")
        try:
            _idle(base)
            files = sorted(corpus.rglob("*.py"))
            latencies = []
            for i in range(edits):
                marker = f"lode_bench_marker_{i}_{rng.randrange(10**6)}"
                latencies.append(edit_and_wait(base, rng.choice(files), marker))
                time.sleep(0.5)  # a pause between saves
        finally:
            _stop(server)
            _restore_corpus(corpus)
    result: dict[str, Any] = {
        "benchmark": "watch",
        "profile": "full" if args.full else "quick",
        "corpus": "rich (installed sources)",
        "edits": edits,
        "p50_s": round(percentile(latencies, 0.5), 3),
        "p95_s": round(percentile(latencies, 0.95), 3),
        "max_s": round(max(latencies), 3),
        "targets": {"p50_s": 0.8, "p95_s": 1.5},
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "watch.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
