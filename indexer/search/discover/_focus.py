"""Stage 5: a deeper search in the top projects, reranked, with neighbouring chunks as context."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from indexer.search.discover._config import CompressionConfig, FocusConfig
from indexer.search.discover._models import ProjectRef, ScoredChunk
from indexer.search.discover._retrieve import Retriever
from indexer.search.discover._terms import match_words, term_overlap
from indexer.search.discover._text import doc_summary, is_prose, sentences

__all__ = ["RERANK_POOL", "FocusResult", "context_window", "rerank", "semantic_focus"]

#: Candidates reranked: this many times ``focus_k``, best by retrieval score.
RERANK_POOL = 4


@dataclass(frozen=True, slots=True)
class FocusResult:
    """Focused chunks (best first) followed by their neighbours, and how many of each."""

    chunks: tuple[ScoredChunk, ...]
    hits: int
    context: int


def _quality(chunk: ScoredChunk, limits: CompressionConfig) -> float:
    """1 when the chunk holds evidence-sized prose sentences or a documented code unit."""
    if is_prose(chunk.language, chunk.node_type):
        lengths = [s.words for s in sentences(chunk.content, chunk.start_line)]
        good = any(limits.min_sentence_words <= n <= limits.max_sentence_words for n in lengths)
        return 1.0 if good else 0.3
    return 1.0 if doc_summary(chunk.content) else 0.5


def rerank(
    chunks: Sequence[ScoredChunk], terms: Sequence[str], config: FocusConfig | None = None
) -> list[ScoredChunk]:
    """Rescore by retrieval score, term frequency, sentence quality and position in the file
    (weights normalised to sum 1), best first."""
    config = config or FocusConfig()
    limits = CompressionConfig()
    weights = (
        config.rerank_base_weight,
        config.rerank_tf_weight,
        config.rerank_quality_weight,
        config.rerank_position_weight,
    )
    total = sum(weights) or 1.0
    out = []
    for chunk in chunks:
        words = match_words(f"{chunk.file_path} {chunk.node_name} {chunk.content}")
        parts = (
            chunk.score,
            term_overlap(terms, words),
            _quality(chunk, limits),
            1.0 / (1.0 + 0.1 * chunk.chunk_index),
        )
        score = sum(w * p for w, p in zip(weights, parts, strict=True)) / total
        out.append(replace(chunk, score=round(score, 6)))
    out.sort(key=lambda c: (-c.score, c.key))
    return out


def context_window(
    hits: Sequence[ScoredChunk],
    files: Mapping[tuple[str, str], Sequence[ScoredChunk]],
    window: int,
    decay: float,
) -> list[ScoredChunk]:
    """Neighbours of each hit: chunks of the same file with ``chunk_index`` within ``window``,
    scored ``hit score × decay ** distance`` (the best score when several hits share one);
    chunks that are hits themselves are left out. ``files`` maps (project, path) to chunks."""
    if window <= 0:
        return []
    hit_keys = {(h.project, h.file_path, h.chunk_index) for h in hits}
    best: dict[tuple[str, str, int], ScoredChunk] = {}
    for hit in hits:
        for chunk in files.get((hit.project, hit.file_path), ()):
            distance = abs(chunk.chunk_index - hit.chunk_index)
            spot = (chunk.project, chunk.file_path, chunk.chunk_index)
            if distance == 0 or distance > window or spot in hit_keys:
                continue
            score = round(hit.score * decay**distance, 6)
            if spot not in best or score > best[spot].score:
                best[spot] = replace(chunk, score=score, origin="context")
    return sorted(best.values(), key=lambda c: (-c.score, c.key))


def semantic_focus(
    retriever: Retriever,
    question_terms: Sequence[str],
    projects: Sequence[ProjectRef],
    config: FocusConfig | None = None,
) -> FocusResult:
    """More candidates per query in ``projects``, a stricter similarity threshold, reranking,
    the best ``focus_k``, then their neighbours (same file, ``chunk_index ± context_window``)."""
    config = config or FocusConfig()
    if not projects:
        return FocusResult((), 0, 0)
    ids = tuple(p.id for p in projects)
    pool = retriever.pool(ids, config.candidates_per_query, "focus", lexical=False)
    kept = [c for c in pool if c.similarity is None or c.similarity >= config.similarity_threshold]
    chunks = retriever.complete(kept[: RERANK_POOL * config.focus_k])
    if config.semantic_reranking:
        chunks = rerank(chunks, question_terms, config)
    hits = chunks[: config.focus_k]
    near = retriever.neighbours(hits, config.context_window)
    context = context_window(hits, near, config.context_window, config.context_decay)
    return FocusResult(tuple(hits) + tuple(context), len(hits), len(context))
