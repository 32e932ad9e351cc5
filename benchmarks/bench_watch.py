"""Save-to-searchable latency: ``lode serve`` (real model, watcher on) over a copy of a real
corpus (the installed ``rich`` package's sources); 50 single-function edits, each timed from
the write until ``POST /api/v1/search`` (default hybrid mode) returns the new function
(``p50_s``; ``searchable_p50_s``: until the start of the search that found it, without
that search's own time). Writes ``benchmarks/results/watch.json``.

The corpus's first index (~2 minutes of embedding, not what this measures) is built once by
``lode serve`` itself and kept under ``$LODE_BENCH_CACHE/watch``; each run restores the
corpus, serves a copy of that index (the server's start-up reindex finds nothing changed)
and edits. The kept index is rebuilt when lode's schema, chunker or model or rich changes.

Targets (2-core machine): p50 ≤ 0.8 s, p95 ≤ 1.5 s.

``--while-embedding`` (issue 43) times the same edits while another project of
``--busy-chunks`` chunks (default 10,000; generated Python) embeds: it is registered once the
corpus is idle, the edits start once its phase 2 runs, and every edit records whether that
project was still embedding. Targets: p50 ≤ 0.5 s, p95 ≤ 1.5 s. ``--code DIR`` serves the
lode checked out at DIR (e.g. a worktree of main: today's code, in the same run) instead of
this one. Writes ``benchmarks/results/watch_busy.json`` (``watch_busy_<name>.json`` with
``--code``). ``--tiny`` (a generated corpus of a few files, 3 edits, 300 busy chunks, no
kept index) checks the benchmark itself, not lode: its figures mean nothing.

Example:
    .venv/bin/python -m benchmarks.bench_watch --quick
    .venv/bin/python -m benchmarks.bench_watch --while-embedding --code ../main-worktree
"""

from __future__ import annotations

import argparse
import functools
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


@functools.cache
def _client() -> httpx.Client:
    """One HTTP client for every request, as an editor keeps its connection (a new client
    per request costs ~26 ms of its own: the figures would be the client's)."""
    return httpx.Client(timeout=10)


def _idle(base: str, timeout: float = 1800) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        tasks = _client().get(f"{base}/api/v1/tasks", params={"limit": 50}, timeout=10).json()
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


def _serve(
    corpus: Path, db: Path, log_path: Path, code: Path | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``lode serve corpus`` on a free port over ``db`` (the lode of ``code`` when
    given); (process, base URL) once it answers. Open to every local request (the
    benchmark's requests send no token)."""
    port = _free_port()
    env = {
        **os.environ,
        "LODE_DB": str(db),
        "LODE_PORT": str(port),
        "HF_HUB_OFFLINE": "1",
        "LODE_NO_AUTH": "1",
    }
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if code is not None:  # `-m` puts the working folder first on the path: run from there
        env["PYTHONPATH"] = str(code.resolve())
    with log_path.open("ab") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "server", "serve", str(corpus.resolve())],
            env=env,
            stdout=log,
            stderr=log,
            cwd=code.resolve() if code is not None else None,
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
    answer = _client().post(f"{base}/api/v1/search", json=body, timeout=10)
    if answer.status_code != 200:
        raise RuntimeError(f"search answered {answer.status_code}: {answer.text[:500]}")
    return any(marker in h["content"] for g in answer.json()["groups"] for h in g["chunks"])


def edit_and_wait(base: str, path: Path, marker: str, timeout: float = 10.0) -> tuple[float, float]:
    """Append a new function to ``path``; seconds until a search returns it: until the
    search that found it answered, and until it started (an upper bound of the moment the
    function became searchable, without that search's own time, which ``bench_http``
    measures: the search before it, which started earlier, did not find it)."""
    text = path.read_text()
    started = time.perf_counter()
    path.write_text(text + f'\n\ndef {marker}(value):\n    """Bench edit."""\n    return value\n')
    while time.perf_counter() - started < timeout:
        asked = time.perf_counter()
        if _found(base, marker):
            return time.perf_counter() - started, asked - started
        time.sleep(0.02)
    raise TimeoutError(f"{marker} never became searchable")


#: A generated function of the busy project: long enough to be a chunk of its own.
_BUSY_FUNCTION = """
def {name}(records, threshold={n}):
    \"\"\"Filter the {n}th batch of records of module {module} by score and label.\"\"\"
    kept = []
    for record in records:
        score = record.get("score_{n}", 0) * {n} + len(record.get("label", ""))
        if score > threshold and record.get("module") != "{module}":
            kept.append({{"id": record["id"], "score": score, "source": "{module}.{name}"}})
    kept.sort(key=lambda item: item["score"], reverse=True)
    return kept[: threshold % 17 + 3]
"""
_BUSY_PER_FILE = 4


def make_busy_project(root: Path, chunks: int) -> Path:
    """A generated project of about ``chunks`` chunks (``_BUSY_PER_FILE`` functions a file)."""
    root.mkdir(parents=True, exist_ok=True)
    for f in range(max(1, chunks // _BUSY_PER_FILE)):
        module = f"busy_module_{f}"
        body = "".join(
            _BUSY_FUNCTION.format(name=f"filter_batch_{f}_{k}", n=f * _BUSY_PER_FILE + k, module=module)
            for k in range(_BUSY_PER_FILE)
        )
        (root / f"{module}.py").write_text(body)
    return root


def _task(base: str, task_id: str) -> dict[str, Any]:
    return dict(_client().get(f"{base}/api/v1/tasks/{task_id}", timeout=10).json())


def start_busy_project(base: str, root: Path, timeout: float = 3600) -> tuple[str, int]:
    """Register ``root`` and wait until its phase 2 runs; (its task id, its chunks)."""
    created = _client().post(f"{base}/api/v1/projects", json={"path": str(root), "name": "busy"}, timeout=60)
    created.raise_for_status()
    task_id = str(created.json()["task_id"])
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        task = _task(base, task_id)
        if task["phase"] == "embed" or task["status"] not in ("queued", "running"):
            # the task counts its chunks once phase 2 reports; the project holds them now
            status = _client().get(f"{base}/api/v1/status", timeout=30).json()
            chunks = sum(int(p["chunks"]) for p in status["projects"] if p["name"] == "busy")
            return task_id, chunks
        time.sleep(0.2)
    raise TimeoutError("the busy project's phase 1 did not end")


def _still_embedding(base: str, task_id: str) -> bool:
    task = _task(base, task_id)
    return bool(task["status"] == "running" and task["phase"] == "embed")


def _tiny_corpus(corpus: Path) -> None:
    """A few generated files instead of rich (``--tiny``: the benchmark's own check)."""
    shutil.rmtree(corpus, ignore_errors=True)
    (corpus / "tiny").mkdir(parents=True)
    for i in range(5):
        (corpus / "tiny" / f"part_{i}.py").write_text(f"def part_{i}(value):\n    return value + {i}\n")


def _parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="50 edits (default)")
    group.add_argument("--full", action="store_true", help="200 edits")
    group.add_argument("--tiny", action="store_true", help="3 edits of a generated corpus (checks the bench)")
    parser.add_argument(
        "--while-embedding", action="store_true", help="edit while another big project embeds"
    )
    parser.add_argument("--busy-chunks", type=int, default=10_000, help="chunks of that project")
    parser.add_argument("--code", type=Path, default=None, help="serve the lode checked out here")
    return parser.parse_args()


def _corpus_and_index(args: argparse.Namespace) -> tuple[Path, Path | None]:
    """The corpus to edit and its kept first index (none with ``--tiny``)."""
    kept = cache_dir() / "watch"
    kept.mkdir(parents=True, exist_ok=True)
    if args.tiny:
        corpus = kept / "tiny-corpus"
        _tiny_corpus(corpus)
        return corpus, None
    corpus = kept / "corpus"
    _restore_corpus(corpus)
    return corpus, _kept_index(kept, corpus)


def main() -> int:
    """Serve a corpus copy, edit it 50 times, time each edit until searchable."""
    args = _parse()
    edits = 200 if args.full else 3 if args.tiny else 50
    busy_chunks = 300 if args.tiny else args.busy_chunks
    rng = random.Random(7)
    corpus, template = _corpus_and_index(args)
    busy: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="lode-bench-watch-") as tmp:
        db = Path(tmp) / "db"
        if template is not None:
            shutil.copytree(template, db)
        server, base = _serve(corpus, db, Path(tmp) / "server.log", args.code)
        try:
            _idle(base)
            busy_task = None
            if args.while_embedding:
                root = make_busy_project(Path(tmp) / "busy", busy_chunks)
                busy_task, chunks = start_busy_project(base, root)
                busy = {"chunks": chunks, "edits_while_embedding": 0}
            files = sorted(corpus.rglob("*.py"))
            latencies, searchable = [], []
            for i in range(edits):
                marker = f"lode_bench_marker_{i}_{rng.randrange(10**6)}"
                embedding = busy_task is not None and _still_embedding(base, busy_task)
                answered, asked = edit_and_wait(base, rng.choice(files), marker, timeout=60.0)
                latencies.append(answered)
                searchable.append(asked)
                if embedding and busy_task is not None and _still_embedding(base, busy_task):
                    busy["edits_while_embedding"] += 1
                time.sleep(0.5)  # a pause between saves
        finally:
            _stop(server)
            if not args.tiny:
                _restore_corpus(corpus)
    name = "watch_busy" if args.while_embedding else "watch"
    if args.code is not None:
        name += f"_{args.code.resolve().name}"
    result: dict[str, Any] = {
        "benchmark": name,
        "profile": "full" if args.full else "tiny" if args.tiny else "quick",
        "corpus": "generated (tiny)" if args.tiny else "rich (installed sources)",
        "code": str(args.code.resolve()) if args.code else "this checkout",
        "edits": edits,
        "p50_s": round(percentile(latencies, 0.5), 3),
        "p95_s": round(percentile(latencies, 0.95), 3),
        "max_s": round(max(latencies), 3),
        "latencies_s": [round(x, 3) for x in latencies],
        # the start of the search that found the edit (without that search's own time)
        "searchable_p50_s": round(percentile(searchable, 0.5), 3),
        "searchable_p95_s": round(percentile(searchable, 0.95), 3),
        "targets": {"p50_s": 0.5, "p95_s": 1.5} if args.while_embedding else {"p50_s": 0.8, "p95_s": 1.5},
        **({"busy_project": busy} if busy else {}),
    }
    if args.tiny:  # the benchmark's own check: its figures are not lode's
        print(json.dumps(result, indent=2))
        return 0
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
