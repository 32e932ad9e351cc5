"""Command-line latency: whole ``lode`` processes, as a user runs them.

Times, each over several runs (median, min, max of the wall time from spawn to exit):
``lode --help`` and every subcommand's ``--help``; ``lode search`` with no server (warm:
the query graph already exported into the cache, so no torch); ``lode search`` and
``lode status`` through a running ``lode serve``; ``lode status`` in-process. The first
in-process search after the index run (which loads the model once to export the query
graph) is reported apart, as ``search_local_first_s``.

The index: the fixture repository of the tests (``--quick``) or the click corpus of the
quality benchmark (``--full``), embedded by the real model in a temporary folder. Writes
``benchmarks/results/cli.json``.

Targets (2-core machine): every ``--help`` ≤ 0.3 s; ``lode search`` without a server
≤ 1.5 s; through a server ≤ 0.3 s.

Example:
    .venv/bin/python -m benchmarks.bench_cli --quick
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results"
ROOT = Path(__file__).resolve().parent.parent
LODE = str(Path(sys.executable).with_name("lode"))
TARGETS = {"help_s": 0.3, "search_local_s": 1.5, "search_server_s": 0.3}
QUERIES = ("parse command line options", "where are errors reported to the user", "context object")


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run(args: list[str], env: dict[str, str]) -> float:
    """Wall seconds of one ``lode`` process (it must succeed)."""
    started = time.perf_counter()
    done = subprocess.run([LODE, *args], env=env, capture_output=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"lode {' '.join(args)} failed: {done.stderr.decode()[-2000:]}")
    return seconds


def timed(args: list[str], env: dict[str, str], runs: int) -> dict[str, Any]:
    """Median, min and max wall seconds over ``runs`` runs (after one unmeasured run)."""
    run(args, env)  # the OS file cache, Python's bytecode cache
    times = [run(args, env) for _ in range(runs)]
    return {
        "runs": runs,
        "median_s": round(statistics.median(times), 3),
        "min_s": round(min(times), 3),
        "max_s": round(max(times), 3),
    }


def command_paths() -> list[list[str]]:
    """Every command of the ``lode`` tree, as the words that reach it."""
    import click

    import server.cli  # noqa: F401  (adds serve and mcp to the tree)
    from indexer.cli import cli

    paths: list[list[str]] = []

    def walk(command: click.Command, path: list[str]) -> None:
        paths.append(path)
        if isinstance(command, click.Group):
            for name, sub in sorted(command.commands.items()):
                walk(sub, [*path, name])

    walk(cli, [])
    return paths


def corpus(full: bool, dest: Path) -> Path:
    """The folder to index: the tests' fixture repository, or the click corpus."""
    if not full:
        return Path(shutil.copytree(ROOT / "tests" / "data" / "repo", dest / "repo"))
    from benchmarks.quality.corpora import CORPORA, fetch_corpus

    return fetch_corpus(next(spec for spec in CORPORA if spec.name == "click"))


def wait_ready(base: str, timeout: float = 300.0) -> None:
    """Until the server's model and search processes are ready."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base + "/health", timeout=2) as response:
                health = json.loads(response.read())
            if health.get("model_loaded") and health.get("search_processes", 0) >= 1:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"the server at {base} did not get ready")


def through_server(env: dict[str, str], runs: int) -> dict[str, Any]:
    """``lode search`` and ``lode status`` through a ``lode serve`` started for them."""
    port = free_port()
    # the server's discovery file (its URL and per-user token), where the CLI finds it, in
    # a folder of its own: not the one of a lode service this user may run
    runtime = tempfile.mkdtemp(prefix="lode-bench-cli-runtime-")
    served = {**env, "LODE_PORT": str(port), "LODE_RUNTIME_DIR": runtime}
    server = subprocess.Popen(
        [LODE, "serve", "--no-watch"], env=served, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_ready(f"http://127.0.0.1:{port}")
        return {
            "search_server": timed(["search", QUERIES[0]], served, runs),
            "search_server_json": timed(["search", QUERIES[1], "--json"], served, runs),
            "status_server": timed(["status"], served, runs),
        }
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(runtime, ignore_errors=True)


def measure(full: bool, runs: int, work: Path) -> dict[str, Any]:
    """Index the corpus, then time every command."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LODE_")}
    env |= {"LODE_DB": str(work / "db"), "LODE_PORT": str(free_port()), "HF_HUB_OFFLINE": "1"}
    repo = corpus(full, work)
    started = time.perf_counter()
    run(["index", str(repo), "--name", "bench", "--local"], env)
    index_s = time.perf_counter() - started
    first = run(["search", QUERIES[2], "--local"], env)  # loads the model once: exports the graph
    helps = {" ".join(["lode", *p, "--help"]): timed([*p, "--help"], env, runs) for p in command_paths()}
    result: dict[str, Any] = {
        "corpus": "click" if full else "tests/data/repo",
        "index_s": round(index_s, 1),
        "search_local_first_s": round(first, 3),
        "help": helps,
        "help_max_median_s": max(h["median_s"] for h in helps.values()),
        "search_local": timed(["search", QUERIES[0]], env, runs),
        "search_local_json": timed(["search", QUERIES[1], "--json"], env, runs),
        "status_local": timed(["status"], env, runs),
    }
    result.update(through_server(env, runs))
    return result


def main() -> int:
    """Time the CLI, write the results, print a table."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="the tests' fixture repo, 5 runs each (default)")
    group.add_argument("--full", action="store_true", help="the click corpus, 15 runs each")
    args = parser.parse_args()
    runs = 15 if args.full else 5
    with tempfile.TemporaryDirectory(prefix="lode-bench-cli-") as work:
        row = measure(args.full, runs, Path(work))
    result = {
        "benchmark": "cli",
        "profile": "full" if args.full else "quick",
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "targets": TARGETS,
        "results": row,
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "cli.json").write_text(json.dumps(result, indent=2) + "\n")
    print("| command | median s | min s | max s | target s |")
    print("|---|---:|---:|---:|---:|")
    lines = [
        ("slowest --help", max(row["help"].values(), key=lambda h: h["median_s"]), TARGETS["help_s"]),
        ("lode --help", row["help"]["lode --help"], TARGETS["help_s"]),
        ("lode search (no server)", row["search_local"], TARGETS["search_local_s"]),
        ("lode search (server)", row["search_server"], TARGETS["search_server_s"]),
        ("lode status (no server)", row["status_local"], None),
        ("lode status (server)", row["status_server"], None),
    ]
    for label, figures, target in lines:
        print(
            f"| {label} | {figures['median_s']} | {figures['min_s']} | {figures['max_s']} | "
            f"{target if target is not None else ''} |"
        )
    print(f"first in-process search after the index run: {row['search_local_first_s']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
