"""Phase 2 of the writer's tasks: the backlog of the task in phase ``embed`` (a save's
project first), else what a previous process left without vectors."""

from __future__ import annotations

import dataclasses
import math
import threading
from collections.abc import Callable
from functools import partial

from indexer._model_thread import ModelThread
from indexer._task_queue import TaskQueue, is_small
from indexer.activity import SearchActivity
from indexer.config import LodeConfig
from indexer.embed import Embedder
from indexer.embed.lazy import LazyEmbedder
from indexer.events import EventHub
from indexer.health import StorageHealth
from indexer.models import IndexProgress
from indexer.priority import lower_thread_priority
from indexer.store import OPTIMIZE_AFTER_ROWS, Store
from indexer.vectorizer import embed_backlog

__all__ = ["MAX_ERRORS", "AnyEvent", "EmbedQueue"]

#: Errors a task keeps (the first ones).
MAX_ERRORS = 50


class EmbedQueue(TaskQueue):
    """The task queue with its phase 2: the model, and the chunks it refused."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        config: LodeConfig,
        on_change: Callable[[str], None] | None = None,
        activity: SearchActivity | None = None,
        storage: StorageHealth | None = None,
        events: EventHub | None = None,
    ) -> None:
        super().__init__(store, on_change, storage, events)
        #: Searches phase 2 yields the cores to (``indexer.activity``).
        self.activity = activity
        self.embedder = embedder
        self.config = config
        self._stop = threading.Event()
        self._failed_chunks: set[str] = set()
        #: Phase 2's model calls, which a save does not wait for (``ModelThread``).
        self._model = ModelThread(
            partial(lower_thread_priority, max(config.server.index_nice, config.server.model_nice))
        )

    def _awaits_vectors(self, project_id: str) -> bool:
        """True while chunks of the project wait for a vector the model has not refused."""
        return any(cid not in self._failed_chunks for cid, _ in self.store.vectors.backlog(project_id))

    def _run_phase2(self) -> bool:
        """Embed the backlog of the task in phase ``embed`` that goes first (else what a
        previous process left); False when there was nothing to embed."""
        embedding = [t for t in self._live.values() if t.phase == "embed" and t.status == "running"]
        if not embedding:
            return self._drain_orphan_backlog()
        if not self._model_ready():
            return False
        # the project being edited first: a save's few chunks before another's backlog
        task = min(embedding, key=lambda t: (not is_small(t), t.created_at is None, t.created_at))
        cancel = self._cancel.setdefault(task.id, threading.Event())
        self._preempt.clear()
        stop = AnyEvent(cancel, self._preempt, self._stop)
        state = IndexProgress(
            files_total=task.files_total, files_done=task.files_done, chunks_done=task.chunks_done
        )
        stats = embed_backlog(
            self.store, self.embedder, task.project_id, state=state,
            progress=lambda s: self._progress(task.id, s), cancel=stop, failed=self._failed_chunks,
            activity=self.activity, model=self._model,
        )  # fmt: skip
        live = self._live.get(task.id, task)
        errors = (*live.errors, *(f"{f.path}: {f.reason}" for f in stats.failed))[:MAX_ERRORS]
        live = dataclasses.replace(live, errors=errors)
        if stats.embedded or stats.cache_hits:
            self._notify(task.project_id)
        if cancel.is_set():
            self._finish(live, "cancelled")
        elif not stop.is_set():
            # every vector is in: fold in the rows a big run's last writes left outside
            # the indexes before saying done, so the searches that follow cost what later
            # ones do (small leftovers wait for ``_maintain``); not while another project
            # embeds (a save's few vectors: the rows are that project's, which settles
            # them once its pass ends, and a full optimize would hold up the next save)
            others = any(
                t.phase == "embed" and t.status == "running" and t.project_id != task.project_id
                for t in self._live.values()
            )
            if not others:
                self.store.maintenance.maybe_optimize(rows=OPTIMIZE_AFTER_ROWS, seconds=math.inf, settle=True)
            for other in [
                t for t in self._live.values() if t.project_id == task.project_id and t.phase == "embed"
            ]:
                self._finish(
                    dataclasses.replace(other, errors=errors if other.id == task.id else other.errors), "done"
                )
        return True

    def _model_ready(self) -> bool:
        """True when the model can embed now; else it loads in the background and wakes
        the writer when it is in (a save meanwhile runs its lexical update at once)."""
        if isinstance(self.embedder, LazyEmbedder):
            return self.embedder.ready_soon(self._wake.set)
        return True

    def _drain_orphan_backlog(self) -> bool:
        """Embed what a previous process left without vectors (restart after a kill)."""
        for project in self.store.projects.all():
            if project.id in self._paused:
                continue
            backlog = [
                cid for cid, _ in self.store.vectors.backlog(project.id) if cid not in self._failed_chunks
            ]
            if backlog:
                if not self._model_ready():
                    return False
                self._preempt.clear()
                stop = AnyEvent(self._preempt, self._stop)
                stats = embed_backlog(
                    self.store, self.embedder, project.id, cancel=stop, failed=self._failed_chunks,
                    activity=self.activity, model=self._model,
                )  # fmt: skip
                if stats.embedded or stats.cache_hits:
                    self._notify(project.id)
                if not stop.is_set():
                    self.store.maintenance.maybe_optimize(
                        rows=OPTIMIZE_AFTER_ROWS, seconds=math.inf, settle=True
                    )
                return True
        return False


class AnyEvent:
    """Set when any of several events is set (what ``embed_backlog`` polls to stop)."""

    def __init__(self, *events: threading.Event) -> None:
        self._events = events

    def is_set(self) -> bool:
        """True if one of the events is set."""
        return any(e.is_set() for e in self._events)
