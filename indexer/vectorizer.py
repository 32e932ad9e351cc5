"""Phase 2 of indexing: fill in the vectors of chunks written without one.

The backlog is taken in ``Vectors.backlog``'s order (recent edits first, then, within a
run, implementation code before docs, examples, tests and generated files), texts
already in the embedding cache are never re-embedded, and the model's next batch runs
while the previous batch is written (one writer thread), so the model stays busy.
Stopping at any point loses nothing: every written batch is durable and the next call
continues with what is left.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Protocol

import numpy as np

from indexer._embed_batches import Batch, batch_of, merge_batches, model_batches
from indexer._model_thread import ModelThread
from indexer.activity import SearchActivity
from indexer.chunker import embedding_input
from indexer.embed import Embedder, Vectors, embed_on_one_thread
from indexer.memory import release_free_memory
from indexer.models import IndexProgress, SkippedFile, StoredChunk
from indexer.roles import embed_rank

if TYPE_CHECKING:
    from indexer.store import Store

__all__ = ["EmbedStats", "StopSignal", "embed_backlog"]

log = logging.getLogger(__name__)

_BATCH = 64
#: Backlog chunks read per window; sorted by length inside it, so a model batch holds texts
#: of similar length (less padding).
_WINDOW = 2048
#: Vectors written together: a write costs about the same for 64 rows as for 256, CPU the
#: model would otherwise have.
_WRITE_ROWS = 256
#: How often a model batch waiting for a big store's optimize (``Maintenance.settled``)
#: checks whether the pass was cancelled.
_MAINTENANCE_POLL_SECONDS = 0.2
#: Texts per model call while searches run (``SearchActivity``): a short call, so phase 2
#: gives the cores back to searches that often.
_YIELD_BATCH = 16
#: While searches run, phase 2 waits before each model call for a pause in them, at most
#: this many times as long as its last call took, so it runs at least 1/(1 + this) of the
#: time (less under searches asked back to back: its calls then run on one thread at the
#: writer's niceness; its full pace once they pause).
_YIELD_WAIT_FACTOR = 4.0


class StopSignal(Protocol):
    """Anything with ``is_set()`` (a ``threading.Event``, or several combined)."""

    def is_set(self) -> bool:
        """True once the caller wants phase 2 to stop after the current batch."""
        ...


@dataclass(slots=True)
class EmbedStats:
    """What one phase-2 call did."""

    embedded: int = 0
    """Texts the model embedded."""
    embedded_rows: int = 0
    """Chunks given those vectors (a text several chunks share is embedded once)."""
    cache_hits: int = 0
    """Chunks given a vector from the embedding cache."""
    model_seconds: float = 0.0
    seconds: float = 0.0
    yielded_seconds: float = 0.0
    """Time the model waited for a pause in searches (``SearchActivity``)."""
    failed: list[SkippedFile] = field(default_factory=list)


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
    write_rows: int = _WRITE_ROWS,
    activity: SearchActivity | None = None,
    model: ModelThread | None = None,
) -> EmbedStats:
    """Embed every chunk still without a vector (of one project, or all), until done or cancelled.

    The backlog is read in windows of ``_WINDOW`` chunks: vectors the cache already has are
    written at once, the remaining distinct texts go to the model ``batch_size`` at a time,
    and each batch is written by a second thread while the model encodes the next.
    ``failed`` collects ids of chunks the model refused; they are skipped (and stay
    lexically searchable) until a later run retries them with a fresh set. Vectors are
    written ``write_rows`` or more at a time (and whatever is left when the pass stops).
    While ``activity`` has searches running, the model yields to them (``_encode``). With a
    ``model`` thread, the model's calls run there and a stop does not wait for the one in
    progress (``ModelThread``).
    """
    state = state or IndexProgress()
    stats = EmbedStats()
    failed = set() if failed is None else failed
    run = _Run(
        store, embedder, state, stats, progress, cancel, batch_size, failed, write_rows, activity, model
    )
    if model is not None:  # what a stopped pass's last call made, kept by its texts' hashes
        store.vectors.remember(model.leftovers())
    state.phase = "embed"
    # a run killed between a file's last vectors and its document's leaves the document
    # unembedded with nothing left in the backlog to complete it
    store.vectors.complete_pending(project_id)
    state.chunks_total = store.chunks.count(project_id)
    state.chunks_embedded = store.chunks.count(project_id, embedded=True)
    if progress is not None:  # the totals, also when there is nothing left to embed
        progress(state)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="lode-vector-writer") as pool:
        run.pool = pool
        while not run.stopped():
            run.drain()  # the backlog must not see chunks whose vectors are still being written
            pairs = [(cid, p) for cid, p in store.vectors.backlog(project_id) if cid not in run.failed]
            if not pairs:
                break
            run.runs = {cid: p >> 1 for cid, p in pairs}
            backlog = [cid for cid, _ in pairs]
            for start in range(0, len(backlog), _WINDOW):
                if run.stopped():
                    break
                run.window(backlog[start : start + _WINDOW])
        run.drain()
    stats.seconds = time.perf_counter() - run.started
    return stats


class _Run:
    """One phase-2 pass: windows of the backlog, model batches, and the writer thread."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        state: IndexProgress,
        stats: EmbedStats,
        progress: Callable[[IndexProgress], None] | None,
        cancel: StopSignal | None,
        batch_size: int,
        failed: set[str],
        write_rows: int,
        activity: SearchActivity | None = None,
        model: ModelThread | None = None,
    ) -> None:
        self.store, self.embedder, self.state, self.stats = store, embedder, state, stats
        self.activity, self.model = activity, model
        self.progress, self.cancel, self.batch_size, self.failed = progress, cancel, batch_size, failed
        self.pool: ThreadPoolExecutor | None = None
        self.pending: Future[None] | None = None
        self.started = time.perf_counter()
        self.write_rows = write_rows
        self.buffer: list[Batch] = []
        self.written = 0
        #: The run (priority without its low bit) of each backlog chunk: a window keeps the
        #: backlog's order of runs and roles, sorting by length only inside each.
        self.runs: dict[str, int] = {}

    def stopped(self) -> bool:
        """True once the caller asked phase 2 to stop."""
        return self.cancel is not None and self.cancel.is_set()

    def window(self, ids: Sequence[str]) -> None:
        """Embed one window of the backlog: cached vectors first, then the model's batches."""
        self.drain()  # the cache must hold every vector made so far, or a text is embedded twice
        chunks = self.store.vectors.pending_chunks(ids)
        if not chunks:
            return
        texts = {c.id: embedding_input(c.file_path, c.chunk) for c in chunks}
        cached = self.store.vectors.cached([key for _, key in texts.values()])
        hits = [c for c in chunks if texts[c.id][1] in cached]
        self.stats.cache_hits += len(hits)
        self._write(batch_of(hits, texts, cached, {}, self._failed_paths()))
        todo: dict[str, list[StoredChunk]] = {}
        for c in chunks:
            if texts[c.id][1] not in cached:
                todo.setdefault(texts[c.id][1], []).append(c)
        groups = sorted(todo.values(), key=self._order)
        for part in model_batches(groups, self.batch_size):
            while not self.store.maintenance.settled(_MAINTENANCE_POLL_SECONDS):
                if self.stopped():
                    return
            if self.stopped():
                return
            new = self._embed([(g[0], *texts[g[0].id]) for g in part])
            members = [c for g in part for c in g]
            if not self.stopped():  # a stop mid-batch leaves the rest for the next pass
                self.failed.update(c.id for c in members if texts[c.id][1] not in new)
            self.stats.embedded_rows += sum(1 for c in members if texts[c.id][1] in new)
            self._write(batch_of(members, texts, new, new, self._failed_paths()))

    def _order(self, group: Sequence[StoredChunk]) -> tuple[int, int, int]:
        """Where a group of chunks sharing a text goes in a window: the newest run first,
        then by role (``indexer.roles.EMBED_ORDER``), then by length (less padding)."""
        first = group[0]
        run = max(self.runs.get(c.id, 0) for c in group)
        return -run, min(embed_rank(c.role) for c in group), len(first.chunk.content)

    def _failed_paths(self) -> set[str]:
        return {f.path for f in self.stats.failed}

    def _write(self, batch: Batch | None) -> None:
        """Buffer a batch; hand the buffer to the writer thread once it holds ``write_rows``.

        The first ``write_rows`` rows of a pass are written batch by batch: they are the
        backlog's front (a file just saved), whose vectors should not wait for others.
        """
        if batch is not None:
            self.buffer.append(batch)
        buffered = sum(len(b.ids) for b in self.buffer)
        if buffered and (buffered >= self.write_rows or self.written < self.write_rows):
            self._flush()
        else:
            self._advance(None)

    def _flush(self) -> None:
        self._wait()
        merged = merge_batches(self.buffer)
        self.buffer = []
        if merged is not None and self.pool is not None:
            # past the backlog's front this is a long pass: it folds its rows in as it goes
            fold = self.written >= self.write_rows
            self.pending = self.pool.submit(_write, self.store, merged, fold, self.stopped)
            self.written += len(merged.ids)
        self._advance(merged)

    def drain(self) -> None:
        """Write what is buffered and wait for the last write."""
        if self.buffer:
            self._flush()
        self._wait()

    def _wait(self) -> None:
        if self.pending is not None:
            self.pending.result()
            self.pending = None

    def _advance(self, batch: Batch | None) -> None:
        if batch is not None:
            self.state.chunks_embedded += len(batch.ids)
        elapsed = time.perf_counter() - self.started
        self.state.embed_rate = self.stats.embedded / elapsed if elapsed > 0 else 0.0
        if self.progress is not None:
            self.progress(self.state)

    def _embed(self, chunks: list[tuple[StoredChunk, str, str]]) -> dict[str, np.ndarray]:
        """The model's vectors of these (chunk, embedding text, its hash), by text hash."""
        if not chunks:
            return {}
        texts = [text for _, text, _ in chunks]
        keys = [key for _, _, key in chunks]
        stats = self.stats
        began, yielded = time.perf_counter(), stats.yielded_seconds
        try:
            vectors = self._encode(texts, keys)
            # fewer vectors than texts only when the pass stopped mid-batch (a save waits)
            kept = chunks[: len(vectors)] if self.stopped() else chunks
            good = list(zip(kept, vectors, strict=True))
        except Exception:
            good = self._embed_one_by_one(chunks)
        stats.model_seconds += time.perf_counter() - began - (stats.yielded_seconds - yielded)
        stats.embedded += len(good)
        return {key: v for (_, _, key), v in good}

    def _encode(self, texts: list[str], keys: list[str]) -> np.ndarray:
        """The model's vectors of ``texts`` (``keys``: their hashes). With an ``activity``,
        ``_YIELD_BATCH`` texts at a time, and while searches run each call waits for a pause
        in them first (at most ``_YIELD_WAIT_FACTOR`` times the last call's time; never once
        stopped: a saved file waits for this pass to stop). Once the pass is asked to stop,
        the vectors of the first texts only: a save waits for one short call, not the whole
        batch, and with a ``ModelThread`` not even for that one."""
        embedder, activity = self.embedder, self.activity
        if activity is None:
            return self._call(embedder.embed, texts, keys)
        parts: list[np.ndarray] = []
        last = 0.1
        for start in range(0, len(texts), _YIELD_BATCH):
            if self.stopped():
                break
            if activity.busy():
                self.stats.yielded_seconds += activity.wait_for_pause(_YIELD_WAIT_FACTOR * last, self.stopped)
            end = start + _YIELD_BATCH
            began = time.perf_counter()
            # searches still running (the wait ran out): one core for the model, one for them
            encode = partial(embed_on_one_thread, embedder) if activity.busy() else embedder.embed
            vectors = self._call(encode, texts[start:end], keys[start:end])
            if len(vectors) < len(texts[start:end]):  # left to the model thread by a stop
                break
            parts.append(vectors)
            last = time.perf_counter() - began
        return np.concatenate(parts) if parts else np.empty((0, 0), dtype=np.float32)

    def _call(self, fn: Callable[[list[str]], Vectors], texts: list[str], keys: list[str]) -> np.ndarray:
        """One model call: on the ``ModelThread`` when there is one (no vectors when the
        pass stops meanwhile), else here."""
        if self.model is None:
            return np.asarray(fn(texts))
        vectors = self.model.call(fn, texts, keys, self.stopped)
        return np.empty((0, 0), dtype=np.float32) if vectors is None else np.asarray(vectors)

    def _embed_one_by_one(
        self, chunks: list[tuple[StoredChunk, str, str]]
    ) -> list[tuple[tuple[StoredChunk, str, str], np.ndarray]]:
        good: list[tuple[tuple[StoredChunk, str, str], np.ndarray]] = []
        for item in chunks:
            chunk, text, _ = item
            try:
                good.append((item, self.embedder.embed([text])[0]))
            except Exception as exc:
                self.failed.add(chunk.id)
                reason = f"embedding failed: {exc}"
                self.store.files.record_error(chunk.project_id, chunk.file_path, "embed", reason)
                self.stats.failed.append(SkippedFile(chunk.file_path, reason))
        return good


def _write(store: Store, batch: Batch, fold: bool, stopped: Callable[[], bool] = lambda: False) -> None:
    with store.db.write_unit():  # a stop never leaves chunks embedded and their document not
        store.vectors.remember(batch.new)
        store.vectors.write(batch.ids, batch.vectors, batch.text_hashes)
        store.vectors.complete_documents(batch.file_ids)
    by_project: dict[str, list[str]] = {}
    for project_id, path in batch.done_files:
        by_project.setdefault(project_id, []).append(path)
    for project_id, paths in by_project.items():
        store.files.clear_errors(project_id, paths, stage="embed")
    if fold and not stopped():  # a save waiting goes first: the next pass folds them in
        # every vector write rewrites its rows outside the indexes; a long pass folds
        # them in as it goes (lexical queries asked meanwhile stay fast)
        store.maintenance.maybe_optimize()
        # the rows (and fragments, once compacted) it replaced go once the readers'
        # window has passed, not at the end
        store.versions.prune_if_due()
        # glibc keeps freed pages inside its heaps, past its trim threshold's reach
        # (``indexer.memory``)
        started = time.perf_counter()
        released = release_free_memory()
        log.debug(
            "phase 2 gave back %.1f MB of free heap pages in %.3f s",
            released / 2**20,
            time.perf_counter() - started,
        )
