"""What the routes share: the indexer API, the single writer and the watcher, opened in
the app's lifespan (never at import time). A reader (``lode serve --read-only``) opens the
index read-only and starts neither the writer nor the watcher; it follows the writer's
commits (``VersionWatch``)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio.from_thread
import msgspec

from indexer.api import Lode, read_only_error
from indexer.config import LodeConfig
from indexer.embed import Embedder, QueryGraph, TokenCounter, load_token_counter, query_graph_of
from indexer.errors import ConflictError
from indexer.events import EventHub, IndexEvent
from indexer.health import StorageHealth, is_storage_failure
from indexer.models import Project, Task
from indexer.remote import error_from_answer, search_response
from indexer.search import SearchOptions, SearchResponse
from indexer.tasks import IndexWorker
from server.search_pool import SearchAnswer, SearchPool

__all__ = ["ServerContext", "VersionWatch", "open_context"]

log = logging.getLogger(__name__)


class VersionWatch:
    """Follows the newest version of the index this server answers from: every
    ``period`` seconds it asks the store (a reader's readers ask at most once per
    consistency window anyway) and forgets cached answers when a table changed, so
    ``/health`` says the version without touching storage."""

    def __init__(self, lode: Lode, period: float, events: EventHub | None = None) -> None:
        self.lode = lode
        self.period = max(0.5, period)
        #: Where a new version is announced (``version`` events).
        self.events = events
        #: The chunk table version last seen (None until first seen).
        self.version: int | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lode-version-watch", daemon=True)

    def start(self) -> None:
        """Look once now, then every ``period`` seconds in the background."""
        self.look()
        self._thread.start()

    def look(self) -> None:
        """Ask the store for its newest chunk table version (a failure is logged, not raised)."""
        try:
            store = self.lode.store
            store.db.forget_if_changed()
            version = store.search.chunk_table_version()
        except BaseException as exc:  # storage trouble (a panic too) shows in the requests that meet it
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
            log.debug("reading the index version failed", exc_info=True)
            return
        if version != self.version:
            self.version = version
            if self.events is not None:
                self.events.publish(IndexEvent("version", version=version))

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            self.look()

    def stop(self) -> None:
        """Stop looking (and wait for a look under way)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)


@dataclass
class ServerContext:
    """The live service: one store, one model, one writer, optional watchers."""

    config: LodeConfig
    lode: Lode
    worker: IndexWorker
    watcher: Any = None
    started_at: float = field(default_factory=time.time)
    model_error: str | None = None
    search_pool: SearchPool | None = None
    """The search processes, when the app runs them (started and closed in its lifespan)."""
    stop_wait: float = 10.0
    """Seconds ``close`` waits for the index writer (``lode serve``: a moment, then the
    process leaves a writer still inside the model to its exit; see ``indexer.cli._stop``)."""
    versions: VersionWatch | None = None
    """The index version this server answers from (``/health``)."""
    events: EventHub = field(default_factory=EventHub)
    """What ``GET /api/v1/events`` streams: the writer's tasks and the index's changes."""
    _model_thread: threading.Thread | None = None
    _closed: bool = False
    _tokens: Any = None
    """The ``TokenCounter`` (``Any``: Litestar inspects this class's field types)."""

    @property
    def read_only(self) -> bool:
        """True for a reader (``lode serve --read-only``): no writer, no watcher."""
        return self.config.server.read_only

    def require_writer(self) -> None:
        """Refuse a write on a reader: a ``ReadOnlyError`` (409) naming the writer."""
        if self.read_only:
            raise read_only_error(self.config)

    @property
    def storage(self) -> StorageHealth:
        """The last storage failure, shared with the writer (``/health`` reports it)."""
        return self.worker.storage

    @property
    def model_loaded(self) -> bool:
        """True once the embedding model is in memory."""
        embedder = self.lode.lazy_embedder
        return bool(getattr(embedder, "loaded", True))

    def token_counter(self) -> TokenCounter:
        """The tokenizer MCP answers are budgeted with (the model's word-pieces; loaded once)."""
        if self._tokens is None:
            self._tokens = load_token_counter(self.config.embed)
        counter: TokenCounter = self._tokens
        return counter

    def query_graph(self) -> QueryGraph | None:
        """The model's ``QueryGraph`` (loading the model if needed), for search processes."""
        return query_graph_of(self.lode.lazy_embedder)

    async def pooled_search(self, options: SearchOptions) -> SearchAnswer | None:
        """A search answered by the least busy search process (its HTTP status and JSON
        body), or None when the server runs none or none is ready: the caller then searches
        in this process. A storage failure a search process met marks ``/health``."""
        if self.search_pool is None:
            return None
        answer = await self.search_pool.search(options)
        if answer is not None and answer.status == 503:
            self.storage.failed("search", str(msgspec.json.decode(answer.body)["detail"]))
        return answer

    def search(self, options: SearchOptions) -> SearchResponse:
        """A search as every front end runs it (HTTP, MCP, the web page): in a search
        process when the server runs them, else in this process. Called from a worker
        thread of the server's event loop (or with no event loop: in this process)."""
        if self.search_pool is not None:
            try:
                answer = anyio.from_thread.run(self.pooled_search, options)
            except RuntimeError:  # not a worker thread of the event loop (``lode mcp``)
                answer = None
            if answer is not None:
                if answer.status != 200:
                    raise error_from_answer(answer.status, answer.body)
                return search_response(answer.body)
        return self.lode.search(options)

    def warm_up(self) -> None:
        """Load the model and the search indexes in the background so the first searches
        are fast."""

        def load() -> None:
            try:
                self.lode.searcher.query_vector("warm up")
            except Exception as exc:
                self.model_error = repr(exc)
                log.exception("the embedding model failed to load")
            try:
                self.lode.store.indexes.prewarm()
            except BaseException as exc:  # a panic of a damaged index too: never kill this thread
                if not is_storage_failure(exc):
                    raise
                self.storage.failed("prewarming the search indexes", exc)
                log.warning("the search indexes could not be prewarmed", exc_info=True)

        self._model_thread = threading.Thread(target=load, name="lode-model-load", daemon=True)
        self._model_thread.start()

    def watch_status(self, project_id: str) -> dict[str, Any]:
        """The watcher's state for a project (``stopped`` when watching is off)."""
        status = self.watcher.get(project_id) if self.watcher is not None else None
        if status is None:
            return {"state": "stopped", "pending_events": 0, "last_update_at": None, "last_error": None}
        return {
            "state": status.state,
            "pending_events": status.pending_events,
            "last_event_at": status.last_event_at.isoformat() if status.last_event_at else None,
            "last_update_at": status.last_update_at.isoformat() if status.last_update_at else None,
            "last_error": status.last_error,
            "mode_reason": status.mode_reason,
            "batches": status.batches,
        }

    def register(
        self,
        path: str,
        name: str | None = None,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        *,
        force: bool = False,
    ) -> tuple[Project, Task]:
        """Register a folder (``Lode.register``), queue its index and watch it: what
        ``POST /api/v1/projects``, MCP ``projects action=register`` and ``lode serve PATH`` do."""
        self.require_writer()
        project = self.lode.register(path, name, tuple(include), tuple(exclude), force=force)
        task = self.worker.submit(project.id)
        self.watch(project)
        return project, task

    def watch(self, project: Project) -> None:
        """Start watching a newly registered project (when watching is on)."""
        if self.watcher is not None:
            self.watcher.add(project)

    def unwatch(self, project_id: str) -> None:
        """Stop watching a project."""
        if self.watcher is not None:
            self.watcher.remove(project_id)

    def close(self) -> None:
        """Stop the watcher and the writer, release the store (once: again is a no-op)."""
        if self._closed:
            return
        self._closed = True
        if self.versions is not None:
            self.versions.stop()
        if self.watcher is not None:
            self.watcher.stop()
        self.worker.stop(self.stop_wait)
        self.lode.settle_later()
        self.lode.close()


def open_context(
    config: LodeConfig,
    embedder: Embedder | None = None,
    warm: bool = True,
    command: str = "lode serve",
    url: str | None = None,
) -> ServerContext:
    """Claim the index's writer lock (``WriterBusyError`` when another process writes it),
    open the store, start the writer (resuming interrupted tasks) and warm the model up;
    a reader (``config.server.read_only``) only opens the store and warms up."""
    lode = Lode(config, embedder=embedder)
    if config.server.read_only:
        return _open_reader(lode, config, warm)
    try:
        lode.hold_writer(command, url)
    except BaseException:
        lode.close()
        raise
    store = lode.store
    store.maintenance.yield_writes_to_searches(config.server.index_nice)
    events = EventHub()
    worker = IndexWorker(store, lode.lazy_embedder, config, activity=lode.activity, events=events)
    ctx = ServerContext(config=config, lode=lode, worker=worker, events=events)
    worker.start()
    for project in store.projects.all():
        if store.documents.count_outdated(project.id):
            # files an older lode chunked (an upgrade): their symbols and roles come now,
            # not at their next edit (vectors made before it are made again when idle)
            worker.submit(project.id)
    if config.watch.enabled:
        from indexer.watch import WatchService

        ctx.watcher = WatchService(worker, config.watch)
        ctx.watcher.start(store.projects.all())
    return _follow(ctx, warm)


def _follow(ctx: ServerContext, warm: bool) -> ServerContext:
    """Start following the index's versions, and warm the model up unless told not to."""
    ctx.versions = VersionWatch(ctx.lode, ctx.config.storage.read_consistency_seconds, ctx.events)
    ctx.versions.start()
    if warm:
        ctx.warm_up()
    return ctx


def _open_reader(lode: Lode, config: LodeConfig, warm: bool) -> ServerContext:
    """A reader's context: the store opened read-only (it must exist: only the writer
    creates it), a writer object that is never started (it lists the tasks the store
    records), no watcher."""
    try:
        store = lode.store
    except BaseException:
        lode.close()
        raise
    events = EventHub()
    worker = IndexWorker(store, lode.lazy_embedder, config, activity=lode.activity, events=events)
    return _follow(ServerContext(config=config, lode=lode, worker=worker, events=events), warm)


def register_paths(ctx: ServerContext, paths: list[str]) -> list[Project]:
    """Register and queue an index of each folder given to ``lode serve``; a folder whose
    name another project has is named after its parent too (``lode serve`` takes no names:
    ``~/a/app ~/b/app`` become ``app`` and ``b-app``). The paths were checked already
    (``lode serve`` refused a broad folder unless ``--force``)."""
    projects = []
    for path in paths:
        try:
            project, _ = ctx.register(path, force=True)
        except ConflictError:
            project, _ = ctx.register(path, name=_free_name(ctx, Path(path)), force=True)
            log.info("registered %s as %r (its folder's name was taken)", path, project.name)
        projects.append(project)
    return projects


def _free_name(ctx: ServerContext, root: Path) -> str:
    """``parent-name``, or that with ``-2``, ``-3``… until no project has it."""
    taken = {p.name for p in ctx.lode.store.projects.all()}
    base = f"{root.parent.name}-{root.name}" if root.parent.name else root.name
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    return name
