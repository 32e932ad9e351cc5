"""How soon ``lode serve`` and ``lode watch`` stop on SIGINT or SIGTERM, and whether the
index they leave is whole.

Whole processes, the real model, as a user runs them; each scenario ``--runs`` times
(fresh index each run), the median and the maximum reported:

- ``serve_starting``: a first ``lode serve`` on an empty index, SIGINT as soon as its
  index folder exists;
- ``serve_embedding_sigint`` / ``serve_embedding_sigterm``: a project of long functions
  added over HTTP, the signal half a second into phase 2 (inside a model batch);
- ``watch_sigint_ignored``: ``lode watch`` started with SIGINT ignored (``nohup … &``),
  SIGINT once its first vectors are written.

After each stop ``Store.check`` must find the index whole. Target (issue 29): every stop
≤ 2 s. A timing: run it on a quiet machine. Writes ``benchmarks/results/stop.json``.

Example:
    .venv/bin/python -m benchmarks.bench_stop --quick
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from indexer.store import open_store, read_store_info

RESULTS = Path(__file__).parent / "results"
TARGET_S = 2.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def make_project(root: Path, files: int = 240) -> Path:
    """A project of files of long functions: phase 2 takes a while, each model batch seconds."""
    body = "\n".join(
        f"    value = value * {k} + helper_{k}(value, 'the {k} items')  # step {k}" for k in range(25)
    )
    for i in range(files):
        folder = root / f"pkg{i // 30}"
        folder.mkdir(parents=True, exist_ok=True)
        text = "\n\n".join(
            f'def combine_{i}_{j}(value):\n    """Combine {i} and {j}."""\n{body}\n    return value\n'
            for j in range(5)
        )
        (folder / f"mod{i}.py").write_text(text)
    return root


def spawn(
    args: list[str], db: Path, port: int, log: Path, ignore_sigint: bool = False
) -> subprocess.Popen[bytes]:
    """``lode ARGS`` (``python -m server``) on ``db`` and ``port``, output to ``log``."""
    env = {
        **os.environ,
        "LODE_NO_AUTH": "1",
        "HF_HUB_OFFLINE": "1",
        "LODE_DB": str(db),
        "LODE_PORT": str(port),
    }
    command = [sys.executable, "-m", "server", *args]
    if ignore_sigint:  # what a shell does to a background job
        command = ["/bin/sh", "-c", 'trap "" INT; exec "$0" "$@"', *command]
    with log.open("ab") as out:
        return subprocess.Popen(command, env=env, stdout=out, stderr=out)


def call(url: str, body: dict[str, Any] | None = None) -> Any:
    """GET (or POST ``body`` as JSON to) ``url``; the decoded JSON answer."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll ``predicate`` (OSError counts as not yet) until true; RuntimeError after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"timed out waiting for {what}")


def stop_and_time(proc: subprocess.Popen[bytes], sig: int) -> float:
    """Send ``sig`` and return the seconds until the process ended (killed after 60 s)."""
    started = time.monotonic()
    proc.send_signal(sig)
    try:
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return time.monotonic() - started


def _whole(db: Path) -> bool:
    info = read_store_info(db)
    if not info:
        return True  # stopped before the index was created
    store = open_store(db, info["model_id"], int(info["dimension"]))
    try:
        return store.check().ok
    finally:
        store.close()


def embedded_chunks(db: Path) -> int:
    """Chunks of the index at ``db`` that have their vector (0 before it exists)."""
    info = read_store_info(db)
    if not info:
        return 0
    store = open_store(db, info["model_id"], int(info["dimension"]))
    try:
        return store.chunks.count(embedded=True)
    finally:
        store.close()


def _serve_starting(work: Path) -> tuple[float, bool]:
    db, log = work / "db", work / "serve.log"
    proc = spawn(["serve"], db, _free_port(), log)
    try:
        wait_for(db.exists, 60, "the index folder")
        took = stop_and_time(proc, signal.SIGINT)
    finally:
        if proc.poll() is None:
            proc.kill()
    return took, _whole(db)


def _serve_embedding(work: Path, sig: int) -> tuple[float, bool]:
    root = make_project(work / "proj")
    db, port, log = work / "db", _free_port(), work / "serve.log"
    url = f"http://127.0.0.1:{port}"
    proc = spawn(["serve"], db, port, log)
    try:
        wait_for(lambda: bool(call(f"{url}/health").get("model_loaded")), 180, "the server")
        task = call(f"{url}/api/v1/projects", {"path": str(root)})

        def embedding() -> bool:
            state = call(f"{url}/api/v1/tasks/{task['task_id']}")
            return bool(state["phase"] == "embed" and state["chunks_embedded"] > 0)

        wait_for(embedding, 180, "phase 2")
        time.sleep(0.5)  # inside a model batch
        took = stop_and_time(proc, sig)
    finally:
        if proc.poll() is None:
            proc.kill()
    return took, _whole(db)


def _watch_sigint_ignored(work: Path) -> tuple[float, bool]:
    root = make_project(work / "proj")
    db, log = work / "db", work / "watch.log"
    proc = spawn(["watch", str(root), "--db", str(db)], db, _free_port(), log, ignore_sigint=True)
    try:
        wait_for(lambda: "watching" in log.read_text(), 180, "the watcher")
        wait_for(lambda: embedded_chunks(db) > 0, 180, "vectors")
        took = stop_and_time(proc, signal.SIGINT)
    finally:
        if proc.poll() is None:
            proc.kill()
    return took, _whole(db) and proc.returncode == 0


SCENARIOS: dict[str, Callable[[Path], tuple[float, bool]]] = {
    "serve_starting": _serve_starting,
    "serve_embedding_sigint": lambda work: _serve_embedding(work, signal.SIGINT),
    "serve_embedding_sigterm": lambda work: _serve_embedding(work, signal.SIGTERM),
    "watch_sigint_ignored": _watch_sigint_ignored,
}


def measure(runs: int) -> dict[str, Any]:
    """Every scenario ``runs`` times: stop seconds (median, max) and whether the index was whole."""
    out: dict[str, Any] = {}
    for name, scenario in SCENARIOS.items():
        times, whole = [], []
        for run in range(runs):
            with tempfile.TemporaryDirectory(prefix="lode-bench-stop-") as tmp:
                took, ok = scenario(Path(tmp))
            times.append(took)
            whole.append(ok)
            print(f"stop: {name} run {run + 1}: {took:.2f} s, index whole: {ok}", file=sys.stderr, flush=True)
        out[name] = {
            "runs": runs,
            "median_s": round(statistics.median(times), 2),
            "max_s": round(max(times), 2),
            "all_s": [round(t, 2) for t in times],
            "index_whole": all(whole),
            "within_target": max(times) <= TARGET_S,
        }
    return out


def main() -> int:
    """Run the stop scenarios and write the results."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="3 runs per scenario (default)")
    group.add_argument("--full", action="store_true", help="10 runs per scenario")
    parser.add_argument("--runs", type=int, help="runs per scenario")
    args = parser.parse_args()
    runs = args.runs or (10 if args.full else 3)
    started = time.perf_counter()
    result = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "target_s": TARGET_S,
        "scenarios": measure(runs),
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "stop.json").write_text(json.dumps(result, indent=2) + "\n")
    print("| scenario | runs | median s | max s | index whole |\n|---|---:|---:|---:|---|")
    for name, row in result["scenarios"].items():
        print(f"| {name} | {row['runs']} | {row['median_s']} | {row['max_s']} | {row['index_whole']} |")
    print(f"stop: {time.perf_counter() - started:.1f} s; wrote {RESULTS / 'stop.json'}", file=sys.stderr)
    whole = all(row["index_whole"] for row in result["scenarios"].values())
    return 0 if whole else 1


if __name__ == "__main__":
    sys.exit(main())
