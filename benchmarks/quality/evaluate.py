"""Run lode on the corpora: index each blanked corpus once, then ask every query in every mode.

Each corpus gets its own temporary index (so BM25 statistics are the corpus's own); the
three modes share it and the model is loaded once. Each mode runs with a fresh
``Searcher`` (empty query-vector cache), so its latencies include embedding the query.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.quality.corpora import CorpusSpec, fetch_corpus, read_corpus
from benchmarks.quality.metrics import K, first_hit_rank
from benchmarks.quality.pairs import Pair, PairSet, extract_pairs, sample_pairs
from indexer.api import Lode, known_languages
from indexer.chunker import detect_language
from indexer.config import load_config
from indexer.embed import Embedder
from indexer.search import ChunkHit, Searcher, SearchOptions, SearchResponse

__all__ = [
    "MODES",
    "Answers",
    "CorpusRun",
    "evaluate_corpus",
    "index_and_ask",
    "prepare_corpus",
    "rank_of",
    "ranked_chunks",
]

MODES = ("lexical", "semantic", "hybrid")


@dataclass(slots=True)
class CorpusRun:
    """What one corpus gave: its facts, the pairs asked, and each mode's ranks and latencies."""

    spec: CorpusSpec
    files: int
    pair_set: PairSet
    pairs: list[Pair]
    chunks: int = 0
    index_seconds: float = 0.0
    ranks: dict[str, list[int | None]] = field(default_factory=dict)
    latency_ms: dict[str, list[float]] = field(default_factory=dict)


def ranked_chunks(response: SearchResponse) -> list[ChunkHit]:
    """The chunk hits of a chunk-granularity response in rank order.

    Groups are ordered by file; the engine ranks by fused score with ties broken by id.
    """
    hits = [hit for group in response.groups for hit in group.chunks]
    return sorted(hits, key=lambda h: (-h.relevance_score, h.id))


#: Kinds whose split pieces stand for the whole unit once lode folds them into one hit.
#: A container's chunk (a class's skeleton) does not stand for its members: it counts by
#: its own lines.
CALLABLE_KINDS = frozenset({"function", "method", "constructor", "test"})


def shown_lines(hit: ChunkHit) -> tuple[int, int]:
    """The lines a hit answers for: a piece of a split function or method its whole unit
    (the other pieces fold into it), any other chunk its own lines."""
    if hit.node_type in CALLABLE_KINDS and hit.unit_start_line and hit.unit_end_line:
        return hit.unit_start_line, hit.unit_end_line
    return hit.start_line, hit.end_line


def rank_of(pair: Pair, hits: Sequence[ChunkHit], k: int = K) -> int | None:
    """Rank of the first hit in the target's file whose shown lines (``shown_lines``) cover
    the target's first line."""
    return first_hit_rank(
        [
            h.file_path == pair.path and shown_lines(h)[0] <= pair.start_line <= shown_lines(h)[1]
            for h in hits
        ],
        k,
    )


def prepare_corpus(
    spec: CorpusSpec, target: Path, *, full: bool, limit: int | None, seed: int = 0
) -> tuple[PairSet, list[Pair], int]:
    """Write the blanked corpus under ``target``: (all pairs, the pairs to ask, file count)."""
    files = read_corpus(fetch_corpus(spec), spec, full)
    languages = {path: detect_language(path, data[:8192]) for path, data in files.items()}
    pair_set = extract_pairs(spec.name, files, languages)
    for path, data in pair_set.blanked.items():
        out = target / path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
    return pair_set, sample_pairs(pair_set.pairs, limit, seed), len(files)


def _ask(
    searcher: Searcher, project: str, pairs: Sequence[Pair], mode: str
) -> tuple[list[int | None], list[float]]:
    def options(query: str) -> SearchOptions:
        return SearchOptions(query=query, projects=(project,), granularity="chunk", mode=mode, limit=K)

    searcher.search(options("warm up the index"))
    ranks: list[int | None] = []
    latencies: list[float] = []
    for pair in pairs:
        started = time.perf_counter()
        response = searcher.search(options(pair.query))
        latencies.append(round((time.perf_counter() - started) * 1000, 2))
        ranks.append(rank_of(pair, ranked_chunks(response)))
    return ranks, latencies


@dataclass(slots=True)
class Answers:
    """What asking a corpus's queries gave: chunks indexed, and per mode ranks and latencies."""

    chunks: int = 0
    index_seconds: float = 0.0
    ranks: dict[str, list[int | None]] = field(default_factory=dict)
    latency_ms: dict[str, list[float]] = field(default_factory=dict)


def index_and_ask(
    name: str, corpus_dir: Path, pairs: Sequence[Pair], embedder: Embedder, modes: Sequence[str] = MODES
) -> Answers:
    """Index ``corpus_dir`` as project ``name`` in a temporary store, then ask ``pairs`` per mode."""
    answers = Answers()
    with tempfile.TemporaryDirectory(prefix="lode-bench-index-") as tmp:
        lode = Lode(load_config(overrides={"db": Path(tmp)}), embedder=embedder)
        try:
            report = lode.index(corpus_dir, name=name)
            answers.chunks, answers.index_seconds = report.chunks_written, round(report.seconds, 2)
            for mode in modes:
                searcher = Searcher(lode.store, embedder, known_languages())
                try:
                    answers.ranks[mode], answers.latency_ms[mode] = _ask(searcher, name, pairs, mode)
                finally:
                    searcher.close()
        finally:
            lode.close()
    return answers


def evaluate_corpus(
    spec: CorpusSpec,
    embedder: Embedder,
    *,
    full: bool,
    limit: int | None,
    seed: int = 0,
    modes: Sequence[str] = MODES,
) -> CorpusRun:
    """Blank the corpus, index it in a temporary store and run its queries in every mode."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="lode-bench-corpus-") as tmp:
        corpus_dir = Path(tmp) / spec.name
        pair_set, pairs, files = prepare_corpus(spec, corpus_dir, full=full, limit=limit, seed=seed)
        answers = index_and_ask(spec.name, corpus_dir, pairs, embedder, modes)
    _log(
        f"{spec.name}: {files} files, {answers.chunks} chunks indexed in {answers.index_seconds:.1f} s; "
        f"{len(pairs)} queries × {len(modes)} modes; {time.perf_counter() - started:.1f} s in all"
    )
    return CorpusRun(
        spec=spec,
        files=files,
        pair_set=pair_set,
        pairs=pairs,
        chunks=answers.chunks,
        index_seconds=answers.index_seconds,
        ranks=answers.ranks,
        latency_ms=answers.latency_ms,
    )


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
