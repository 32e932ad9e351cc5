"""Chunker throughput on real code: installed packages' sources from site-packages.

Reports MB/s and chunks/s of ``chunk_file`` alone (files are read before timing), per
language and in total on one core, then in total on every core the way lode's indexer
runs it (worker processes, ``indexer.prepare``), and writes
``benchmarks/results/chunker.json``. Target: ≥ 2 MB/s on the 2-core machine.

Example:
    .venv/bin/python benchmarks/bench_chunker.py --repeat 3
    .venv/bin/python -m benchmarks.bench_chunker --quick
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import sysconfig
import time
from collections import defaultdict
from pathlib import Path

from indexer.chunker import chunk_file, detect_language, supported_languages

PYTHON_PACKAGES = ("rich", "click", "litestar", "starlette", "pygments", "jinja2")
OTHER_GLOBS = ("**/*.js", "**/*.ts", "**/*.c", "**/*.h", "**/*.cpp", "**/*.hpp", "**/*.md", "**/*.sh")
MAX_FILE_BYTES = 1024 * 1024
MAX_PER_LANGUAGE = 8 * 1024 * 1024
#: The quick profile (``scripts/bench quick``) chunks half as much of each language.
QUICK_PER_LANGUAGE = 4 * 1024 * 1024


def collect(site: Path, per_language: int = MAX_PER_LANGUAGE) -> list[tuple[str, bytes]]:
    """Source files to chunk: whole Python packages plus whatever else site-packages holds."""
    paths: list[Path] = []
    for package in PYTHON_PACKAGES:
        paths += sorted((site / package).glob("**/*.py"))
    for pattern in OTHER_GLOBS:
        paths += sorted(site.glob(pattern))
    files: list[tuple[str, bytes]] = []
    budget: dict[str, int] = defaultdict(int)
    for path in paths:
        if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
            continue
        data = path.read_bytes()
        language = detect_language(path.name, data[:8192])
        if language not in supported_languages() or budget[language] > per_language:
            continue
        budget[language] += len(data)
        files.append((str(path.relative_to(site)), data))
    return files


def run(files: list[tuple[str, bytes]], repeat: int) -> dict[str, dict[str, float]]:
    """Best-of-``repeat`` seconds, bytes and chunks per language."""
    stats: dict[str, dict[str, float]] = defaultdict(
        lambda: {"files": 0, "bytes": 0, "chunks": 0, "seconds": 0.0}
    )
    by_language: dict[str, list[tuple[str, bytes]]] = defaultdict(list)
    for path, data in files:
        by_language[detect_language(path, data[:8192])].append((path, data))
    for language, group in sorted(by_language.items()):
        best = float("inf")
        chunks = 0
        for _ in range(repeat):
            started = time.perf_counter()
            chunks = sum(len(chunk_file(path, data).chunks) for path, data in group)
            best = min(best, time.perf_counter() - started)
        entry = stats[language]
        entry.update(files=len(group), bytes=sum(len(d) for _, d in group), chunks=chunks, seconds=best)
    return dict(stats)


def _chunk_count(item: tuple[str, bytes]) -> int:
    return len(chunk_file(item[0], item[1]).chunks)


def run_parallel(files: list[tuple[str, bytes]], workers: int) -> dict[str, float]:
    """Every file chunked on ``workers`` processes (started before timing), as the indexer does."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        list(pool.map(_chunk_count, files[: workers * 4]))  # warm: imports and grammars loaded
        started = time.perf_counter()
        chunks = sum(pool.map(_chunk_count, files, chunksize=8))
        seconds = time.perf_counter() - started
    size = sum(len(d) for _, d in files)
    return {
        "workers": workers,
        "files": len(files),
        "bytes": size,
        "chunks": chunks,
        "seconds": round(seconds, 3),
        "mb_per_s": round(size / 1e6 / seconds, 3),
        "chunks_per_s": round(chunks / seconds, 1),
    }


def main() -> int:
    """Benchmark the chunker and print a table."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--site-packages", type=Path, default=Path(sysconfig.get_paths()["purelib"]))
    parser.add_argument("--repeat", type=int, default=3)
    profile = parser.add_mutually_exclusive_group()
    profile.add_argument("--quick", action="store_true", help="one pass (scripts/bench quick)")
    profile.add_argument("--full", action="store_true", help="best of --repeat passes (the default)")
    parser.add_argument("--output", type=Path, default=Path(__file__).parent / "results" / "chunker.json")
    args = parser.parse_args()
    files = collect(args.site_packages, QUICK_PER_LANGUAGE if args.quick else MAX_PER_LANGUAGE)
    repeat = 1 if args.quick else args.repeat
    stats = run(files, repeat)
    total = {k: sum(s[k] for s in stats.values()) for k in ("files", "bytes", "chunks", "seconds")}
    print(f"{'language':<12}{'files':>7}{'MB':>8}{'chunks':>9}{'MB/s':>8}{'chunks/s':>10}")
    for language, s in [*sorted(stats.items()), ("TOTAL", total)]:
        mb = s["bytes"] / 1e6
        s["mb_per_s"] = round(mb / s["seconds"], 3) if s["seconds"] else 0.0
        s["chunks_per_s"] = round(s["chunks"] / s["seconds"], 1) if s["seconds"] else 0.0
        print(
            f"{language:<12}{s['files']:>7.0f}{mb:>8.2f}{s['chunks']:>9.0f}{s['mb_per_s']:>8.2f}{s['chunks_per_s']:>10.0f}"
        )
    from indexer.prepare import worker_count

    parallel = run_parallel(files, worker_count())
    print(
        f"all cores ({parallel['workers']} processes): {parallel['mb_per_s']:.2f} MB/s, "
        f"{parallel['chunks_per_s']:.0f} chunks/s (target ≥ 2 MB/s)"
    )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "profile": "quick" if args.quick else "full",
        "repeat": repeat,
        "languages": stats,
        "total": total,
        "parallel": parallel,
        "target_mb_per_s": 2.0,
    }
    args.output.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
