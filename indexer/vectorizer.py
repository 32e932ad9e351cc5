"""Phase 2 of indexing: fill in the vectors of chunks written without one.

The backlog is taken highest priority first (recent edits, then README/docs), texts
already in the embedding cache are never re-embedded, and the model's next batch runs
while the previous batch is written (one writer thread), so the model stays busy.
Stopping at any point loses nothing: every written batch is durable and the next call
continues with what is left.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import numpy as np

from indexer.chunker import embedding_text
from indexer.embed import Embedder
from indexer.models import SkippedFile, StoredChunk

if TYPE_CHECKING:
    from indexer.pipeline import IndexProgress
    from indexer.store import Store

__all__ = ["EmbedStats", "StopSignal", "embed_backlog"]

_BATCH = 64


class StopSignal(Protocol):
    """Anything with ``is_set()`` (a ``threading.Event``, or several combined)."""

    def is_set(self) -> bool:
        """True once the caller wants phase 2 to stop after the current batch."""
        ...


@dataclass(slots=True)
class EmbedStats:
    """What one phase-2 call did."""

    embedded: int = 0
    cache_hits: int = 0
    model_seconds: float = 0.0
    seconds: float = 0.0
    failed: list[SkippedFile] = field(default_factory=list)


@dataclass(slots=True)
class _Batch:
    ids: list[str]
    vectors: np.ndarray
    new: dict[str, np.ndarray]
    file_ids: list[str]
    done_files: list[tuple[str, str]]


def embed_backlog(
    store: Store,
    embedder: Embedder,
    project_id: str | None = None,
    *,
    state: IndexProgress | None = None,
    progress: Callable[[IndexProgress], None] | None = None,
    cancel: StopSignal | None = None,
    batch_size: int = _BATCH,
    failed: set[str] | None = None,
) -> EmbedStats:
    """Embed every chunk still without a vector (of one project, or all), until done or cancelled.

    ``failed`` collects ids of chunks the model refused; they are skipped (and stay
    lexically searchable) until a later run retries them with a fresh set.
    """
    from indexer.pipeline import IndexProgress

    state = state or IndexProgress()
    stats = EmbedStats()
    started = time.perf_counter()
    state.phase = "embed"
    state.chunks_total = store.count_chunks(project_id)
    state.chunks_embedded = store.count_chunks(project_id, embedded=True)
    failed = set() if failed is None else failed
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="lode-vector-writer") as pool:
        pending: Future[None] | None = None
        while not (cancel is not None and cancel.is_set()):
            backlog = [cid for cid, _ in store.embedding_backlog(project_id) if cid not in failed]
            if not backlog:
                break
            for start in range(0, len(backlog), batch_size):
                if cancel is not None and cancel.is_set():
                    break
                batch = _prepare(store, embedder, backlog[start : start + batch_size], stats, failed)
                if pending is not None:
                    pending.result()
                pending = pool.submit(_write, store, batch) if batch else None
                _advance(state, stats, batch, started, progress)
            if pending is not None:
                pending.result()
                pending = None
    stats.seconds = time.perf_counter() - started
    return stats


def _advance(
    state: IndexProgress,
    stats: EmbedStats,
    batch: _Batch | None,
    started: float,
    progress: Callable[[IndexProgress], None] | None,
) -> None:
    if batch is not None:
        state.chunks_embedded += len(batch.ids)
    elapsed = time.perf_counter() - started
    state.embed_rate = stats.embedded / elapsed if elapsed > 0 else 0.0
    if progress is not None:
        progress(state)


def _prepare(
    store: Store, embedder: Embedder, ids: Sequence[str], stats: EmbedStats, failed: set[str]
) -> _Batch | None:
    chunks = store.chunks_for_embedding(ids)
    if not chunks:
        return None
    cached = store.cache_get([c.chunk.chunk_hash for c in chunks])
    todo: dict[str, StoredChunk] = {}
    for c in chunks:
        if c.chunk.chunk_hash not in cached:
            todo.setdefault(c.chunk.chunk_hash, c)
    stats.cache_hits += len(chunks) - sum(1 for c in chunks if c.chunk.chunk_hash in todo)
    new = _embed(store, embedder, list(todo.values()), stats, failed)
    vectors = {**cached, **new}
    ok = [c for c in chunks if c.chunk.chunk_hash in vectors]
    if not ok:
        return None
    matrix = np.stack([vectors[c.chunk.chunk_hash] for c in ok])
    bad_files = {c.file_id for c in chunks if c.id in failed}
    done = sorted({(c.project_id, c.file_path) for c in ok if c.file_id not in bad_files})
    return _Batch([c.id for c in ok], matrix, new, sorted({c.file_id for c in ok}), done)


def _embed(
    store: Store, embedder: Embedder, chunks: list[StoredChunk], stats: EmbedStats, failed: set[str]
) -> dict[str, np.ndarray]:
    if not chunks:
        return {}
    texts = [embedding_text(c.file_path, c.chunk) for c in chunks]
    began = time.perf_counter()
    try:
        matrix = embedder.embed(texts)
        good = list(zip(chunks, matrix, strict=True))
    except Exception:
        good = _embed_one_by_one(store, embedder, chunks, texts, stats, failed)
    stats.model_seconds += time.perf_counter() - began
    stats.embedded += len(good)
    return {c.chunk.chunk_hash: v for c, v in good}


def _embed_one_by_one(
    store: Store,
    embedder: Embedder,
    chunks: list[StoredChunk],
    texts: list[str],
    stats: EmbedStats,
    failed: set[str],
) -> list[tuple[StoredChunk, np.ndarray]]:
    good: list[tuple[StoredChunk, np.ndarray]] = []
    for chunk, text in zip(chunks, texts, strict=True):
        try:
            good.append((chunk, embedder.embed([text])[0]))
        except Exception as exc:
            failed.add(chunk.id)
            reason = f"embedding failed: {exc}"
            store.record_file_error(chunk.project_id, chunk.file_path, "embed", reason)
            stats.failed.append(SkippedFile(chunk.file_path, reason))
    return good


def _write(store: Store, batch: _Batch) -> None:
    store.cache_put(batch.new)
    store.set_chunk_vectors(batch.ids, batch.vectors)
    store.complete_documents(batch.file_ids)
    by_project: dict[str, list[str]] = {}
    for project_id, path in batch.done_files:
        by_project.setdefault(project_id, []).append(path)
    for project_id, paths in by_project.items():
        store.clear_file_errors(project_id, paths, stage="embed")
