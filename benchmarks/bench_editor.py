"""The editor routes' latency: a 40-line read and the symbol at a position, in-process and
over HTTP.

On the ≥ 100k-chunk store of ``bench_search`` (``_bigstore``), or with ``--small`` on the
quick quality corpus with the most chunks (a run to check that the benchmark works). Files
are sampled over the store (every ``len // count``-th indexed file by path, so runs are
comparable), lines 10..49: ``read`` in the results is each file's first read (nothing read
it before, so the store is asked; no warm-up round), ``read_again`` the same ten files
read over and over, as an editor peeking into the files it has open does. Positions are the
reference sites of names sampled as ``bench_symbols`` samples them: the file as a
``file://`` URI, the site's 0-based line and the UTF-16 column of the name's middle.
In-process the calls go through ``Lode.read_text`` / ``Lode.symbol_at``; over HTTP one
client asks a ``lode serve`` subprocess (``GET /api/v1/files/text`` and
``GET /api/v1/symbols/at``) on a copy of the store. Writes
``benchmarks/results/editor.json`` (not for ``--small``).

Targets (2-core machine): a 40-line read p50 ≤ 5 ms in-process and ≤ 15 ms over HTTP;
the symbol at a position p50 ≤ 15 ms over HTTP.

Example:
    .venv/bin/python -m benchmarks.bench_editor --quick
    .venv/bin/python -m benchmarks.bench_editor --small
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from benchmarks.bench_symbols import _free_port, _wait, percentile, sample_names, small_store, timed
from indexer.api import Lode
from indexer.config import load_config
from indexer.editor import PositionQuery, TextQuery
from indexer.locations import file_uri
from indexer.positions import to_utf16

RESULTS = Path(__file__).parent / "results"
TARGETS = {"read_in_process_p50_ms": 5.0, "read_http_p50_ms": 15.0, "symbol_at_http_p50_ms": 15.0}
#: Lines read per call, from this line on (0-based).
LINES, FIRST = 40, 10

Read = dict[str, Any]
At = dict[str, Any]


def sample_reads(lode: Lode, count: int) -> list[Read]:
    """``count`` files spread over the store, as ``read_text`` arguments (by URI); files of
    4 kB or more, so the range read (lines 10..49) is there (an empty ``__init__.py`` has none)."""
    store = lode.store
    out: list[Read] = []
    for project in store.projects.all():
        docs, _ = store.documents.page(project.id, 0, 10_000_000)
        docs = [d for d in docs if d.file_size >= 4000]
        step = max(1, len(docs) // count)
        out.extend(
            {"path": file_uri(project.root, d.file_path), "start_line": FIRST, "end_line": FIRST + LINES}
            for d in docs[::step][:count]
        )
    return out[:count]


def sample_positions(lode: Lode, count: int) -> list[At]:
    """The reference site of ``count`` sampled names as ``symbol_at`` arguments: the file's
    URI, the 0-based line, the UTF-16 column of the name's middle."""
    store = lode.store
    roots = {p.id: p.root for p in store.projects.all()}
    out: list[At] = []
    for name, _ in sample_names(lode, count):
        sites = store.symbols.references([name], limit=1)
        if not sites:
            continue
        site = sites[0]
        uri = file_uri(roots[site.project_id], site.file_path)
        line = site.start_line - 1
        text = lode.read_text(TextQuery(uri, start_line=line, end_line=line + 1)).text.rstrip("\r\n")
        at = text.find(name)
        if at >= 0:
            out.append({"path": uri, "line": line, "column": to_utf16(text, at + len(name) // 2)})
    return out


def first_calls(calls: list[Callable[[], Any]]) -> dict[str, Any]:
    """p50/p95/mean in ms of each call run once, none before it (the first call of each
    file: no warm-up round, which would read the files first)."""
    times: list[float] = []
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


def first_reads(lode: Lode, reads: list[Read]) -> dict[str, Any]:
    """Each file's first read through the Python API (before anything else reads it)."""
    return first_calls(
        [
            lambda r=r: lode.read_text(
                TextQuery(r["path"], start_line=r["start_line"], end_line=r["end_line"])
            )
            for r in reads
        ]
    )


def in_process(lode: Lode, reads: list[Read], positions: list[At], repeat: int) -> dict[str, Any]:
    """Both operations through the Python API (files read again: see ``first_reads``)."""

    def read(r: Read) -> Callable[[], Any]:
        return lambda: lode.read_text(
            TextQuery(r["path"], start_line=r["start_line"], end_line=r["end_line"])
        )

    def at(p: At) -> Callable[[], Any]:
        return lambda: lode.symbol_at(PositionQuery(p["path"], p["line"], p["column"]))

    return {
        "read_again": timed([read(r) for r in reads[:10]] * 10, repeat),
        "symbol_at": timed([at(p) for p in positions], repeat),
    }


def over_http(db: Path, reads: list[Read], positions: list[At], repeat: int) -> dict[str, Any]:
    """Both operations through a ``lode serve`` subprocess on a copy of the store."""
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="lode-bench-editor-") as tmp:
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

                def get(path: str, params: dict[str, Any]) -> Callable[[], Any]:
                    return lambda: client.get(path, params=params).raise_for_status()

                texts = [get("/api/v1/files/text", r) for r in reads]
                client.get("/api/v1/projects").raise_for_status()  # the connection and the store
                return {
                    "read": first_calls(texts),
                    "read_again": timed(texts[:10] * 10, repeat),
                    "symbol_at": timed([get("/api/v1/symbols/at", p) for p in positions], repeat),
                }
        finally:
            server.terminate()
            server.wait(timeout=60)
            log.close()


def main() -> int:
    """Time the editor routes; write the results."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="200 files and names, once each (default)")
    group.add_argument("--full", action="store_true", help="500 files and names, 3 rounds")
    parser.add_argument("--small", action="store_true", help="a small corpus instead of the big store")
    parser.add_argument("--no-http", action="store_true", help="in-process only")
    parser.add_argument(
        "--db",
        type=Path,
        help="an index already built over the big store's sources (its chunks need not have "
        "vectors: reads and positions use none), instead of building or reusing the big store",
    )
    args = parser.parse_args()
    count, repeat = (500, 3) if args.full else (200, 1)
    with tempfile.TemporaryDirectory(prefix="lode-bench-editor-store-") as tmp:
        if args.small:
            db, chunks = small_store(Path(tmp))
        elif args.db is not None:
            db = args.db
            existing = Lode(load_config(overrides={"db": db}))
            try:
                chunks = existing.store.chunks.count()
            finally:
                existing.close()
        else:
            from benchmarks._bigstore import open_big_store

            big = open_big_store("quick")
            db, chunks = big.db, big.chunks
        lode = Lode(load_config(overrides={"db": db}))
        try:
            reads = sample_reads(lode, count)
            first = first_reads(lode, reads)
            positions = sample_positions(lode, count)
            local = {"read": first, **in_process(lode, reads, positions, repeat)}
        finally:
            lode.close()
        remote = None if args.no_http else over_http(db, reads, positions, repeat)
    result = {
        "benchmark": "editor",
        "profile": ("full" if args.full else "quick") + ("-small" if args.small else ""),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "store_chunks": chunks,
        "files": len(reads),
        "positions": len(positions),
        "lines_read": LINES,
        "in_process": local,
        "http": remote,
        "targets": TARGETS,
    }
    print(json.dumps(result, indent=2))
    if not args.small:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "editor.json").write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
