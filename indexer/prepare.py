"""Phase 1's CPU work for one file — read, hash, chunk, describe — on every core.

``prepare_file`` turns a changed file into the ``FileWrite`` the store takes (or says why
not); it touches no store and no model, so big runs spread it over worker processes
(``prepare_all``) while the calling thread writes. Small runs (a saved file) stay in the
calling process: starting workers costs more than a few files.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass
from typing import Literal

import blake3

from indexer.chunker import CHUNKER_VERSION, chunk_file, embedding_input, estimate_tokens
from indexer.config import ChunkerConfig
from indexer.containment import ContainedRead, read_contained
from indexer.ids import document_id, uuid7
from indexer.keywords import TEXT_SUFFIXES, document_keywords, document_summary
from indexer.models import ChunkedFile, Document
from indexer.roles import chunk_role, file_role, rust_test_modules
from indexer.store import ChunkWrite, FileWrite, chunk_search_text, words_of

__all__ = ["PARALLEL_MIN_FILES", "FileJob", "Prepared", "prepare_all", "prepare_file", "worker_count"]

log = logging.getLogger(__name__)

#: Runs with fewer changed files than this are prepared in the calling process.
PARALLEL_MIN_FILES = 64
#: Files in flight per worker (bounds the memory of results waiting for the writer).
_WINDOW_PER_WORKER = 16
#: How often a wait for a worker's result checks whether the run was asked to stop.
_STOP_POLL_SECONDS = 0.05


@dataclass(frozen=True, slots=True)
class FileJob:
    """One changed file to prepare, with what the store knew of it."""

    project_id: str
    rel_path: str
    abs_path: str
    root: str
    follow_symlinks: bool
    mtime: float
    old_hash: str | None
    full: bool
    max_file_bytes: int
    chunker: ChunkerConfig
    run_started_ms: int


@dataclass(frozen=True, slots=True)
class Prepared:
    """The outcome for one file: a write, an unchanged body, a skip or a failure."""

    kind: Literal["write", "same", "skip", "gone", "failed"]
    write: FileWrite | None = None
    size: int = 0
    reason: str = ""


def prepare_file(job: FileJob) -> Prepared:
    """Read, hash, chunk and describe one file (never raises)."""
    read = _read(job)
    data = read.data
    if data is None:
        return Prepared("gone" if read.gone else "skip", size=read.size, reason=read.reason)
    digest = blake3.blake3(data).hexdigest()
    if job.old_hash == digest and not job.full:
        return Prepared("same", size=len(data))
    try:
        chunked = chunk_file(job.rel_path, data, job.chunker)
    except Exception as exc:  # the chunker promises not to raise; a bug must not end the run
        return Prepared("failed", size=len(data), reason=f"chunker failed: {exc!r}")
    if chunked.skipped_reason:
        return Prepared("skip", size=len(data), reason=chunked.skipped_reason)
    return Prepared("write", _file_write(job, data, digest, chunked), size=len(data))


def _read(job: FileJob) -> ContainedRead:
    """The file's bytes, read only if it is still a regular file inside the project root."""
    return read_contained(job.abs_path, job.root, job.max_file_bytes, job.follow_symlinks)


def _priority(run_started_ms: int, rel_path: str) -> int:
    """Phase-2 order: files of the newest run first (an edit jumps a big backlog); within a
    run the chunk's role decides (``Vectors.backlog``: implementation code first), and the
    low bit puts README and docs files ahead of others of their role."""
    lower = rel_path.lower()
    boost = 1 if lower.endswith(TEXT_SUFFIXES) or "readme" in lower else 0
    return run_started_ms * 2 + boost


def _file_write(job: FileJob, data: bytes, digest: str, chunked: ChunkedFile) -> FileWrite:
    tokens: Counter[str] = Counter()
    for chunk in chunked.chunks:
        tokens[chunk.language] += estimate_tokens(chunk.content)
    languages = tuple(sorted(tokens)) or (chunked.language,)
    primary = tokens.most_common(1)[0][0] if tokens else chunked.language
    content = data.decode("utf-8", errors="replace")
    role = file_role(job.rel_path, content)
    test_modules = rust_test_modules(content) if role == "implementation" else frozenset()
    doc = Document(
        id=document_id(job.project_id, job.rel_path),
        project_id=job.project_id,
        file_path=job.rel_path,
        content_hash=digest,
        file_size=len(data),
        last_modified=job.mtime,
        indexed_at=None,
        languages=languages,
        primary_language=primary,
        chunk_count=len(chunked.chunks),
        keywords=document_keywords(job.rel_path, content, chunked.chunks),
        summary=document_summary(job.rel_path, content, chunked.chunks),
        role=role,
    )
    return FileWrite(
        document=doc,
        content=content,
        # the full-text column and the vocabulary words are made here, on the worker, so
        # the single writer thread only assembles rows
        chunks=[
            ChunkWrite(
                id=uuid7(),
                chunk=c,
                search_text=chunk_search_text(job.rel_path, c),
                role=chunk_role(role, c.language, c.node_type, c.content, c.scope_path, test_modules),
                text_hash=embedding_input(job.rel_path, c)[1],
            )
            for c in chunked.chunks
        ],
        file_hash=digest,
        priority=_priority(job.run_started_ms, job.rel_path),
        words="\n".join(words_of(c.content for c in chunked.chunks)),
        chunker_version=CHUNKER_VERSION,
        symbols=chunked.symbols,
        rewrite=job.old_hash == digest,
    )


def _ready(future: Future[Prepared], stop: Callable[[], bool] | None) -> bool:
    """Wait for ``future``; False (without waiting longer) once ``stop()`` is true."""
    if stop is None:
        return True
    while not future.done():
        if stop():
            return False
        wait_futures([future], timeout=_STOP_POLL_SECONDS)
    return True


def _exit_with_parent(parent: int) -> None:
    """Worker initializer: leave when the indexing process is gone (even if SIGKILLed)."""

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch, name="lode-parent-watch", daemon=True).start()


def worker_count() -> int:
    """Processes for preparing files: the cores this process may use (at most 8)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(1, min(8, cores))


def prepare_all(
    jobs: Sequence[FileJob], workers: int | None = None, stop: Callable[[], bool] | None = None
) -> Iterator[Prepared]:
    """``prepare_file`` of every job, in order; on worker processes when it pays.

    Results are produced a bounded window ahead of the consumer. If the workers cannot
    start or die, the remaining files are prepared in this process. Once ``stop()`` is
    true, the results end at once, even while the workers are still starting (they are
    left to end on their own): a save does not wait for a pool it does not need.
    """
    workers = worker_count() if workers is None else workers
    if workers < 2 or len(jobs) < PARALLEL_MIN_FILES:
        yield from map(prepare_file, jobs)
        return
    done = 0
    try:
        # spawn, not fork: the parent runs LanceDB and torch threads a fork would copy mid-lock
        context = multiprocessing.get_context("spawn")
        pool = ProcessPoolExecutor(
            max_workers=workers, mp_context=context, initializer=_exit_with_parent, initargs=(os.getpid(),)
        )
        waited = True
        try:
            window: deque[Future[Prepared]] = deque()
            pending = iter(jobs)
            for job in pending:
                window.append(pool.submit(prepare_file, job))
                if len(window) >= workers * _WINDOW_PER_WORKER:
                    break
            while window:
                if not _ready(window[0], stop):
                    waited = False
                    return
                result = window.popleft().result()
                next_job = next(pending, None)
                if next_job is not None:
                    window.append(pool.submit(prepare_file, next_job))
                done += 1
                yield result
        finally:
            pool.shutdown(wait=waited, cancel_futures=not waited)
    except GeneratorExit:
        raise
    except Exception as exc:  # broken pool, pickling trouble: finish here, lose nothing
        log.warning("file preparation workers failed (%r); going on in-process", exc)
        yield from map(prepare_file, jobs[done:])
