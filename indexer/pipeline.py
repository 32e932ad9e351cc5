"""The indexing pipeline: walk → diff → chunk → write (phase 1), then embed (phase 2).

Phase 1 makes every changed file lexically searchable and filterable at once: chunks
are written with their text and metadata, and with a vector only when the embedding
cache already has one. Phase 2 (``indexer.vectorizer``) fills in the missing vectors.
Both phases are restartable: a killed run leaves a consistent store that the next run
repairs (``Files.repair``) and continues.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from indexer.chunker import CHUNKER_VERSION
from indexer.config import LodeConfig
from indexer.embed import Embedder
from indexer.errors import PathError
from indexer.models import IndexProgress, IndexReport, Project, SkippedFile
from indexer.prepare import FileJob, Prepared, prepare_all
from indexer.store import DocState, FileWrite, Store
from indexer.vectorizer import StopSignal, embed_backlog
from indexer.walker import IgnoreRules, WalkEntry, walk_project

__all__ = ["ProgressCallback", "index_project", "run_lexical_phase"]

#: Files per atomic write; bigger batches mean fewer LanceDB versions.
_BATCH_FILES = 200
_BATCH_CHUNKS = 4000
#: Phase 1 reports its progress at least every this many files…
_NOTIFY_FILES = 50
#: …or this many seconds (when a file was done since).
_NOTIFY_SECONDS = 1.0


ProgressCallback = Callable[[IndexProgress], None]


def _noop(_: IndexProgress) -> None:
    return None


def _is_cancelled(cancel: StopSignal | None) -> bool:
    return cancel is not None and cancel.is_set()


def index_project(
    store: Store,
    embedder: Embedder,
    project: Project,
    config: LodeConfig,
    *,
    paths: Sequence[str] = (),
    full: bool = False,
    embed: bool = True,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
) -> IndexReport:
    """Bring a project's index up to date with its folder (both phases unless ``embed=False``)."""
    started = time.perf_counter()
    state = IndexProgress()
    report = run_lexical_phase(
        store,
        embedder,
        project,
        config,
        paths=paths,
        full=full,
        state=state,
        progress=progress,
        cancel=cancel,
    )
    report.lexical_seconds = round(time.perf_counter() - started, 3)
    # fold the new rows into the indexes (and compact) before phase 2 reads and rewrites them
    store.maintenance.maybe_optimize()
    if embed and not _is_cancelled(cancel):
        stats = embed_backlog(store, embedder, project.id, state=state, progress=progress, cancel=cancel)
        report.model_seconds = round(stats.model_seconds, 3)
        report.chunks_embedded += stats.embedded_rows
        report.embedding_cache_hits += stats.cache_hits
        report.files_failed.extend(stats.failed)
    # the writer is idle now: fold in even a few rows, and what the last vector writes took
    # out of the indexes (the first searches after a run would pay for it)
    store.maintenance.maybe_optimize(settle=True)
    store.versions.prune_if_due()
    _count_vectors(store, project.id, report)
    report.seconds = round(time.perf_counter() - started, 3)
    state.phase = "done"
    (progress or _noop)(state)
    return report


def _count_vectors(store: Store, project_id: str, report: IndexReport) -> None:
    """Fill in the chunks left without a vector, and the earlier runs' chunks phase 2 took
    on (what makes the report's chunk counts add up)."""
    report.chunks_queued = store.chunks.count(project_id) - store.chunks.count(project_id, embedded=True)
    given = report.chunks_embedded + report.embedding_cache_hits + report.chunks_queued
    report.chunks_from_earlier = max(0, given - report.chunks_written)


def run_lexical_phase(
    store: Store,
    embedder: Embedder,
    project: Project,
    config: LodeConfig,
    *,
    paths: Sequence[str] = (),
    full: bool = False,
    state: IndexProgress | None = None,
    progress: ProgressCallback | None = None,
    cancel: StopSignal | None = None,
    full_done: set[str] | None = None,
) -> IndexReport:
    """Phase 1: walk, diff against the store, chunk and write changed files, drop deleted ones.

    ``full_done`` (a ``full`` run that stopped and goes on): the paths an earlier run of it
    wrote, diffed as any run diffs them instead of cut again; the paths this run writes are
    added to it."""
    state = state or IndexProgress()
    notify = progress or _noop
    root = Path(project.root)
    if not root.is_dir():
        # never read a vanished root as "every file was deleted"
        raise PathError("root", f"project {project.name!r}: folder {root} is missing or not a folder")
    report = IndexReport(project_id=project.id)
    rules = IgnoreRules(root, project.include, project.exclude)
    walked = walk_project(root, config.walker, rules, under=paths)
    report.files_seen = len(walked.files)
    report.files_skipped.extend(walked.skipped)
    # a crash leaves half-written files anywhere: repair on whole-project runs (start-up,
    # rescans, lode index), not on every saved file
    dirty = store.files.repair(project.id) if not paths else set()
    retry = {e["file_path"] for e in store.files.errors(project.id) if e["stage"] == "chunk"}
    states = store.documents.states(project.id)
    # files another chunker cut are chunked again, whatever their bytes
    stale = {path for path, state in states.items() if state.chunker_version != CHUNKER_VERSION}
    done = full_done if full and full_done is not None else set()
    changed, unchanged = _diff(walked.files, states, full=full, force=dirty | retry | stale, done=done)
    report.files_unchanged = len(unchanged)
    gone = _deleted(states, {e.rel_path for e in walked.files}, paths)
    store.files.delete([states[p].id for p in gone])
    report.files_deleted = len(gone)
    state.files_changed += len(gone) + len(dirty)
    state.phase, state.files_total = "chunk", len(changed)
    state.changed_paths = list(gone)
    notify(state)
    state.changed_paths = []
    writer = _FileWriter(store, project, report, state, notify)
    jobs = [
        _job(
            project,
            config,
            entry,
            states.get(entry.rel_path),
            full and entry.rel_path not in done,
            writer.started_ms,
        )
        for entry in changed
    ]
    # a stop (a cancel, a save waiting) ends the results at once, workers starting or not
    results = prepare_all(jobs, stop=None if cancel is None else cancel.is_set)
    accepted: list[str] = []
    for entry, prepared in zip(changed, results, strict=False):
        if _is_cancelled(cancel):
            break
        writer.accept(entry, states.get(entry.rel_path), prepared)
        accepted.append(entry.rel_path)
    writer.flush()
    if full and full_done is not None:  # written: a run that goes on diffs them as usual
        full_done.update(accepted)
    if writer.indexed:  # the last rows too: every search scans the rows not folded in
        store.maintenance.fold_new_rows(force=True, everything=writer.folded, rewritten=False)
    stamp = datetime.now(UTC)
    store.projects.mark_indexed(project.id, stamp)
    return report


def _diff(
    entries: Iterable[WalkEntry],
    states: dict[str, DocState],
    *,
    full: bool,
    force: set[str],
    done: set[str] | frozenset[str] = frozenset(),
) -> tuple[list[WalkEntry], list[WalkEntry]]:
    """(changed, unchanged): by size and mtime, every file when ``full`` but those ``done``."""
    changed: list[WalkEntry] = []
    unchanged: list[WalkEntry] = []
    for entry in entries:
        old = states.get(entry.rel_path)
        same_stat = (
            old is not None
            and old.file_size == entry.size
            and abs(old.last_modified - entry.mtime) < 1e-6
            and entry.rel_path not in force
        )
        (unchanged if same_stat and not (full and entry.rel_path not in done) else changed).append(entry)
    return changed, unchanged


def _deleted(states: dict[str, DocState], walked: set[str], under: Sequence[str]) -> list[str]:
    """Indexed paths that the walk no longer produced, within the walked scope."""
    prefixes = {p.strip("/") for p in under if p.strip("/")}

    def in_scope(path: str) -> bool:
        if not prefixes:
            return True
        parts = path.split("/")
        return any("/".join(parts[:depth]) in prefixes for depth in range(1, len(parts) + 1))

    return sorted(p for p in states if p not in walked and in_scope(p))


class _FileWriter:
    """Reads, chunks and batches changed files into atomic store writes."""

    def __init__(
        self,
        store: Store,
        project: Project,
        report: IndexReport,
        state: IndexProgress,
        notify: ProgressCallback,
    ) -> None:
        self.store, self.project = store, project
        self.report, self.state, self.notify = report, state, notify
        self.pending: list[tuple[FileWrite, list[str]]] = []
        self.started_ms = time.time_ns() // 1_000_000
        self.pending_chunks = 0
        #: True while every queued file is one the store has no document of
        self.all_new = True
        self.stat_updates: list[tuple[str, int, float]] = []
        #: True once this run made sure the full-text indexes exist
        self.indexed = False
        #: True once this run folded rows into the indexes (it ends with all of them folded)
        self.folded = False
        self.drop: list[str] = []
        self.failed_ok: list[str] = []
        #: Paths written or removed by the next flush (reported with its progress).
        self.changed: list[str] = []
        self.notified = (0, time.monotonic())

    def accept(self, entry: WalkEntry, old: DocState | None, prepared: Prepared) -> None:
        """Take one prepared file: queue its new version, or note why not."""
        self.state.files_done += 1
        if prepared.kind in ("write", "failed") or (prepared.kind in ("gone", "skip") and old is not None):
            self.state.files_changed += 1
            if prepared.kind != "failed":
                self.changed.append(entry.rel_path)
        if prepared.kind == "gone":
            self.report.files_skipped.append(SkippedFile(entry.rel_path, prepared.reason))
            if old is not None:
                self.drop.append(old.id)
        elif prepared.kind == "skip":
            self._skip(entry.rel_path, prepared.reason, old)
        elif prepared.kind == "same" and old is not None:
            self.stat_updates.append((old.id, prepared.size, entry.mtime))
            self.report.files_unchanged += 1
        elif prepared.kind == "failed":
            self.store.files.record_error(self.project.id, entry.rel_path, "chunk", prepared.reason)
            self.report.files_failed.append(SkippedFile(entry.rel_path, prepared.reason))
        elif prepared.write is not None:
            write = prepared.write
            self.all_new = self.all_new and old is None
            self.pending.append((write, [c.text_hash for c in write.chunks]))
            self.pending_chunks += len(write.chunks)
            self.failed_ok.append(entry.rel_path)
        if len(self.pending) >= _BATCH_FILES or self.pending_chunks >= _BATCH_CHUNKS:
            self.flush()
        elif (
            self.state.files_done - self.notified[0] >= _NOTIFY_FILES
            or time.monotonic() - self.notified[1] >= _NOTIFY_SECONDS
        ):
            self._notify()

    def _notify(self) -> None:
        """Report progress (files done advance between the writes of whole batches)."""
        self.notified = (self.state.files_done, time.monotonic())
        self.notify(self.state)

    def _skip(self, path: str, reason: str, old: DocState | None) -> None:
        self.report.files_skipped.append(SkippedFile(path, reason))
        if old is not None:
            self.drop.append(old.id)

    def flush(self) -> None:
        """Write everything queued: new versions (with cached vectors), stats, removals."""
        if self.pending:
            hashes = [h for _, hs in self.pending for h in hs]
            cached = self.store.vectors.cached(hashes)
            writes = [_with_vectors(w, cached) for w, _ in self.pending]
            self.store.files.replace(writes, maybe_new=self.all_new)
            if not self.indexed:
                # a new store gets its full-text indexes from the first batch, so words are
                # searchable seconds into a first index (later rows are scanned until folded in)
                self.store.indexes.ensure_text()
                self.indexed = True
            else:  # searches of the store meanwhile would scan every row not in an index
                self.folded = self.store.maintenance.fold_new_rows() or self.folded
            # each write and fold is a new version: those it replaced go once readers may no
            # longer read them, during the run, not at its end
            self.store.versions.prune_if_due()
            hits = sum(1 for h in hashes if h in cached)
            self.report.embedding_cache_hits += hits
            self.report.files_indexed += len(writes)
            self.report.chunks_written += len(hashes)
            self.state.chunks_done += len(hashes)
        self.store.documents.update_stats(self.stat_updates)
        self.store.files.delete(self.drop)
        self.store.files.clear_errors(self.project.id, self.failed_ok, stage="chunk")
        self.pending, self.pending_chunks, self.all_new = [], 0, True
        self.stat_updates, self.drop, self.failed_ok = [], [], []
        self.state.changed_paths, self.changed = self.changed, []
        self._notify()
        self.state.changed_paths = []


def _job(
    project: Project, config: LodeConfig, entry: WalkEntry, old: DocState | None, full: bool, started_ms: int
) -> FileJob:
    return FileJob(
        project_id=project.id,
        rel_path=entry.rel_path,
        abs_path=str(entry.abs_path),
        root=project.root,
        follow_symlinks=config.walker.follow_symlinks,
        mtime=entry.mtime,
        old_hash=old.content_hash if old is not None and old.chunker_version == CHUNKER_VERSION else None,
        full=full,
        max_file_bytes=config.walker.max_file_bytes,
        chunker=config.chunker,
        run_started_ms=started_ms,
    )


def _with_vectors(write: FileWrite, cached: dict[str, np.ndarray]) -> FileWrite:
    """``write`` with the cached vectors of its chunks' embedding texts."""
    if not cached:
        return write
    chunks = [replace(c, vector=cached.get(c.text_hash)) for c in write.chunks]
    return replace(write, chunks=chunks)
