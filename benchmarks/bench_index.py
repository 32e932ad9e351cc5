"""Indexing throughput, no-op re-index time, time to first lexical result, peak RSS.

1. Throughput (issue 3): index a real corpus with the real model — quick: the installed
   ``starlette`` package's sources; full: ``litestar``'s — and compare chunks/s with the
   model's raw encode throughput on the same texts, measured in the same run
   (target: ≥ 85 %). Reports files/s, chunks/s and the share of time inside the model.
2. No-op re-index (issue 3): a second run over 1,000 unchanged files (target ≤ 2 s).
3. Progressive indexing (issue 12): on salt 3007.1 (PyPI sdist, sha256-pinned; its
   package, tests and topic docs: ~4,000 files) the time until a lexical
   search, asked every 0.25 s while the index runs, first answers (target ≤ 20 s); the
   full profile also times full semantic coverage and compares phase 2's chunks/s with
   the model's raw encode rate on a random sample of its chunk texts (≥ 85 %).
4. Peak RSS of the process (target ≤ 1.5 GB).

Writes ``benchmarks/results/index.json`` (quick) or ``index_full.json`` (full).

Example:
    .venv/bin/python -m benchmarks.bench_index --quick
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import sys
import sysconfig
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.quality.corpora import CorpusSpec, fetch_corpus
from indexer.api import Lode
from indexer.chunker import chunk_file, embedding_text
from indexer.config import load_config
from indexer.embed import Embedder, load_embedder
from indexer.errors import LodeError
from indexer.search import SearchOptions

RESULTS = Path(__file__).parent / "results"
#: A large real repository for the progressive run (salt's sdist: its package, its tests
#: and its topic docs, ~4,000 files). Not Django: a SWE-bench repository, never used here.
SALT = CorpusSpec(
    name="salt",
    language="python",
    registry="pypi",
    package="salt",
    version="3007.1",
    url="https://files.pythonhosted.org/packages/2d/9f/"
    "198e2d3b930f74724ffe7c01e377b356ee2da7fa88634ef41f244753b72e/salt-3007.1.tar.gz",
    sha256="b933ac4cb3e4b1118b46dada55c9cc6bdc6f0f94b4c92877aec44b25c6a28c9a",
    root="salt-3007.1/",
    include=("salt/**/*.py", "tests/**/*.py", "doc/topics/**/*.rst"),
)


#: Chunk texts of the progressive corpus the model encodes alone, to compare phase 2's rate with.
_RAW_SAMPLE = 3000


_SECTIONS = ("throughput", "noop_reindex", "progressive")


def _peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _copy_package(package: str, target: Path) -> Path:
    source = Path(sysconfig.get_paths()["purelib"]) / package
    shutil.copytree(source, target / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return target


def raw_encode_seconds(embedder: Embedder, corpus: Path, sample: int | None = None) -> tuple[float, int]:
    """Seconds the model alone needs for the corpus's distinct embedding texts (batches of
    64, shortest first), or for a seeded random ``sample`` of them."""
    texts: set[str] = set()
    for path in sorted(corpus.rglob("*")):
        if path.is_file():
            rel = path.relative_to(corpus).as_posix()
            texts.update(embedding_text(rel, chunk) for chunk in chunk_file(rel, path.read_bytes()).chunks)
    chosen = sorted(texts)
    if sample is not None and sample < len(chosen):
        chosen = random.Random(0).sample(chosen, sample)
    ordered = sorted(chosen, key=len)
    started = time.perf_counter()
    for start in range(0, len(ordered), 64):
        embedder.embed(ordered[start : start + 64])
    return time.perf_counter() - started, len(ordered)


def throughput(embedder: Embedder, package: str, work: Path) -> dict[str, Any]:
    """Index a package with the real model; compare with the raw encode time of its texts."""
    corpus = _copy_package(package, work / "corpus")
    raw_seconds, texts = raw_encode_seconds(embedder, corpus)
    lode = Lode(load_config(overrides={"db": work / "db"}), embedder=embedder)
    try:
        report = lode.index(corpus, name=package)
    finally:
        lode.close()
    raw_rate = texts / raw_seconds
    rate = report.chunks_embedded / report.seconds
    return {
        "corpus": f"{package} (installed sources)",
        "files": report.files_indexed,
        "chunks": report.chunks_written,
        "chunks_embedded": report.chunks_embedded,
        "seconds": report.seconds,
        "lexical_seconds": report.lexical_seconds,
        "model_seconds": report.model_seconds,
        "files_per_second": round(report.files_indexed / report.seconds, 1),
        "chunks_per_second": round(rate, 1),
        "raw_encode_chunks_per_second": round(raw_rate, 1),
        "throughput_vs_raw": round(rate / raw_rate, 3),
        "share_in_model": round(report.model_seconds / report.seconds, 3),
    }


def noop_reindex(embedder: Embedder, corpus_root: Path, work: Path, files: int = 1000) -> dict[str, Any]:
    """Index ``files`` Python files of the progressive corpus (lexical phase only), then time a run where nothing changed."""
    corpus = work / "noop"
    sources = sorted(p for p in corpus_root.rglob("*.py") if p.is_file())[:files]
    for path in sources:
        target = corpus / path.relative_to(corpus_root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    lode = Lode(load_config(overrides={"db": work / "noop-db"}), embedder=embedder)
    try:
        lode.index(corpus, name="noop", embed=False)
        started = time.perf_counter()
        again = lode.index(corpus, name="noop", embed=False)
        seconds = time.perf_counter() - started
    finally:
        lode.close()
    return {"files": again.files_seen, "unchanged": again.files_unchanged, "seconds": round(seconds, 3)}


def progressive(embedder: Embedder, corpus_root: Path, work: Path, full: bool) -> dict[str, Any]:
    """Time until a lexical search answers on the progressive corpus, asked every 0.25 s by another thread
    while the index runs (as a client of the server would); with ``full``, until every
    vector is in."""
    lode = Lode(load_config(overrides={"db": work / "progressive-db"}), embedder=embedder)
    # plain words, not an identifier: answered by the full-text index, not by a name lookup
    options = SearchOptions(query="minion returner", mode="lexical", granularity="chunk", limit=5)
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["report"] = lode.index(corpus_root, name="salt", embed=False)
        except BaseException as exc:  # reported below
            outcome["error"] = exc
        outcome["index_seconds"] = time.perf_counter() - started

    try:
        started = time.perf_counter()
        lode.store  # noqa: B018 (opened once, on this thread, inside the timed span)
        indexer = threading.Thread(target=run, name="bench-index")
        indexer.start()
        first_result = None
        while first_result is None:
            try:
                if lode.search(options).groups:
                    first_result = time.perf_counter() - started
                    break
            except LodeError:
                pass  # no project or no full-text index yet
            if not indexer.is_alive() and "report" not in outcome:
                raise RuntimeError(f"indexing failed: {outcome.get('error')!r}")
            time.sleep(0.25)
        indexer.join()
        report = outcome["report"]
        rss_phase1 = _peak_rss_mb()
        result: dict[str, Any] = {
            "corpus": "salt 3007.1 (PyPI sdist): salt/**/*.py, tests/**/*.py, doc/topics/**/*.rst",
            "files": report.files_indexed,
            "chunks": report.chunks_written,
            "phase1_seconds": report.lexical_seconds,
            "first_lexical_result_seconds": round(first_result, 2),
            "index_call_seconds": round(outcome["index_seconds"], 2),
            "first_result_found": True,
            "peak_rss_mb_after_phase1": rss_phase1,
        }
        if full:
            more = lode.index(corpus_root, name="salt")
            result["full_coverage_seconds"] = round(time.perf_counter() - started, 1)
            result["chunks_embedded"] = more.chunks_embedded
            rate = more.chunks_embedded / max(more.seconds, 1e-9)
            result["embed_chunks_per_second"] = round(rate, 1)
            result["peak_rss_mb_after_phase2"] = _peak_rss_mb()
            _log("index: raw encode rate on a sample of salt's chunk texts…")
            raw_seconds, texts = raw_encode_seconds(embedder, corpus_root, sample=_RAW_SAMPLE)
            result["raw_encode_sample"] = texts
            result["raw_encode_chunks_per_second"] = round(texts / raw_seconds, 1)
            result["coverage_vs_raw"] = round(rate * raw_seconds / texts, 3)
    finally:
        lode.close()
    return result


def main() -> int:
    """Run the indexing benchmarks of one profile and write its JSON results."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--quick", action="store_true", help="starlette's sources; salt phase 1 only (default)"
    )
    group.add_argument("--full", action="store_true", help="litestar's sources; salt to full coverage")
    parser.add_argument(
        "--only",
        choices=_SECTIONS,
        action="append",
        help="run only these parts; the others are kept from the profile's last results",
    )
    args = parser.parse_args()
    wanted = set(args.only or _SECTIONS)
    # the full profile's figures are kept beside the quick ones (scripts/bench quick rewrites those)
    path = RESULTS / ("index_full.json" if args.full else "index.json")
    previous = json.loads(path.read_text()) if args.only and path.exists() else {}
    embedder = load_embedder()
    corpus_root = fetch_corpus(SALT)
    sections: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="lode-bench-index-") as tmp:
        work = Path(tmp)
        if "throughput" in wanted:
            _log("index: throughput…")
            speed = throughput(embedder, "litestar" if args.full else "starlette", work)
            sections["throughput"] = {**speed, "peak_rss_mb_after": _peak_rss_mb()}
        if "noop_reindex" in wanted:
            _log("index: no-op re-index…")
            sections["noop_reindex"] = noop_reindex(embedder, corpus_root, work)
        if "progressive" in wanted:
            _log("index: time to first lexical result on salt…")
            sections["progressive"] = progressive(embedder, corpus_root, work, args.full)
    stamp = time.strftime("%Y-%m-%d %H:%M")
    result = {
        "benchmark": "index",
        "profile": "full" if args.full else "quick",
        "machine": {"cpus": os.cpu_count()},
        **{name: previous.get(name) for name in _SECTIONS if name not in sections and name in previous},
        **sections,
        "measured_at": {**previous.get("measured_at", {}), **dict.fromkeys(sections, stamp)},
        "peak_rss_mb": _peak_rss_mb(),  # of this run
        "targets": {
            "throughput_vs_raw": 0.85,
            "noop_1000_files_s": 2.0,
            "first_lexical_s": 20,
            "coverage_vs_raw": 0.85,
            "peak_rss_mb": 1536,
        },
    }
    RESULTS.mkdir(exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
