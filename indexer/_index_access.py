"""Opening one index: the store, the model and the writer's claim, each on first use.

``IndexAccess`` is what ``indexer.api.Lode`` stands on; the CLI, the HTTP routes and the MCP
tools reach the index only through a ``Lode``, so none of them opens LanceDB or loads the
model on its own.
"""

from __future__ import annotations

import logging
import threading

from indexer.activity import SearchActivity
from indexer.config import LodeConfig, is_object_store
from indexer.embed import (
    Embedder,
    LazyEmbedder,
    QueryGraph,
    QueryGraphEmbedder,
    cached_query_graph,
    load_embedder,
    model_dimension,
    model_dir,
)
from indexer.errors import ModelMismatchError, NotFoundError, StoreError
from indexer.index_users import refuse_index_users
from indexer.memory import limit_heap_growth
from indexer.search import Searcher
from indexer.store import (
    SCHEMA_VERSION,
    Store,
    StoreAccess,
    needs_upgrade,
    open_store,
    read_store_info,
    upgrade_due,
)
from indexer.writer import read_only_error, writer_claim

__all__ = ["IndexAccess", "cached_graph", "known_languages", "query_embedder", "store_access"]

log = logging.getLogger(__name__)


def store_access(config: LodeConfig, writer: bool = False) -> StoreAccess:
    """How a process opens the index of ``config``: a reader (``read_only``) never writes
    and sees commits within ``read_consistency_seconds``; on object storage, a process
    that is not the writer (``writer``: it holds the lease) opens it read-only too. A
    local folder opened by any other process is opened as it always was."""
    storage = config.storage
    remote = is_object_store(config.db)
    reader = config.server.read_only
    return StoreAccess(
        storage_options=tuple(sorted(storage.store_options.items())) if remote else (),
        read_only=reader or (remote and not writer),
        read_consistency=storage.read_consistency_seconds if reader else 0.0,
        keep_versions=storage.keep_versions_for(remote),
    )


class IndexAccess:
    """One index as this process may use it: opened, and the model loaded, on first use."""

    def __init__(
        self, config: LodeConfig, *, embedder: Embedder | None = None, store: Store | None = None
    ) -> None:
        self.config = config
        self._embedder = embedder
        self._store = store
        self._lock = threading.Lock()
        #: This process's claim to write the index (taken by the first write): a lock in a
        #: local folder, a lease on object storage.
        self.writer = writer_claim(config)
        self._searcher: Searcher | None = None
        #: Searches in flight: an index writer given this yields the cores to them.
        self.activity = SearchActivity()
        #: The schema version this process upgraded the index from (None: it did not).
        self.upgraded_from: int | None = None

    @property
    def embedder(self) -> Embedder:
        """The embedding model (loaded on first use)."""
        with self._lock:
            if self._embedder is None:
                self._check_model_before_loading()
                self._embedder = load_embedder(self.config.embed)
            return self._embedder

    @property
    def store(self) -> Store:
        """The index, opened on first use (from its own model record when it exists, so
        opening it does not load the model)."""
        if self._store is None:
            info = read_store_info(self.config.db, self.access)
            if info:
                expected = self._embedder.model_id if self._embedder is not None else self.config.embed.model
                if info.get("model_id") != expected:
                    self._check_model_before_loading()
                store = self._open_store(info["model_id"], int(info["dimension"]), info)
            elif self._embedder is None and (dimension := model_dimension(self.config.embed)) is not None:
                # a new index of the configured model: its files say its dimension (a
                # server starts in a moment, and stops as fast, instead of loading torch)
                store = self._open_store(self.config.embed.model, dimension, info)
            else:
                store = self._open_store(self.embedder.model_id, self.embedder.dimension, info)
            with self._lock:
                if self._store is None:
                    self._store = store
        return self._store

    def _open_store(self, model_id: str, dimension: int, info: dict[str, str]) -> Store:
        """The index as this process may use it: its writer (holding the claim) upgrades an
        older schema first, unless another lode process uses the index (an older lode
        keeps no claim: ``indexer.index_users``); any other process gets the one line
        saying how to upgrade, and writes nothing."""
        access = self.access
        upgrade = self.writer.held and not access.read_only
        migrating = upgrade and needs_upgrade(info)
        if migrating:
            refuse_index_users(self.config.db)
            log.warning(
                "upgrading the index at %s from schema %s to %s",
                self.config.db,
                info.get("schema_version"),
                SCHEMA_VERSION,
            )
        store = open_store(
            self.config.db,
            model_id,
            dimension,
            access,
            upgrade=upgrade,
            vector_encoder=self.config.embed.vector_encoder,
        )
        if migrating:
            self.upgraded_from = int(info["schema_version"])
        return store

    @property
    def access(self) -> StoreAccess:
        """How this process opens the index now (see ``store_access``)."""
        return store_access(self.config, writer=self.writer.held)

    @property
    def lazy_embedder(self) -> Embedder:
        """The model as the pipeline and search see it: loaded only when a text needs a vector."""
        if self._embedder is not None:
            return self._embedder
        store = self.store
        return LazyEmbedder(lambda: self.embedder, store.model_id, store.dimension)

    def _check_model_before_loading(self) -> None:
        info = read_store_info(self.config.db, self.access)
        model = info.get("model_id")
        expected = self._embedder.model_id if self._embedder is not None else self.config.embed.model
        if model is not None and model != expected:
            raise ModelMismatchError(
                f"the index at {self.config.db} was built with model {model!r}, "
                f"not {expected!r}; use the same model, or another --db"
            )

    def open_readonly(self) -> Store | None:
        """The store without loading the model (None when no index exists yet)."""
        if self._store is not None:
            return self._store
        info = read_store_info(self.config.db, self.access)
        if not info:
            return None
        try:
            store = self._open_store(info["model_id"], int(info["dimension"]), info)
        except KeyError as exc:
            raise StoreError(f"the index at {self.config.db} has no model record") from exc
        with self._lock:
            if self._store is None:
                self._store = store
        return self._store

    @property
    def searcher(self) -> Searcher:
        """The search engine over this store and model."""
        if self._searcher is None:
            self._searcher = Searcher(self.store, self.lazy_embedder, known_languages())
        return self._searcher

    def hold_writer(self, command: str = "lode index", url: str | None = None) -> None:
        """Claim to be the index's writer (``WriterBusyError`` naming the process that
        writes it when it is another; a server gives the URL where it answers). A reader
        (``lode serve --read-only``) never writes: ``ReadOnlyError``."""
        if self.config.server.read_only:
            raise read_only_error(self.config)
        if self.writer.held:
            return
        self.writer.acquire(command, url)
        # the writer indexes: freed memory goes back to the system, so a long phase 2
        # stays flat (``indexer.memory``)
        limit_heap_growth()
        if self._store is not None and (
            self._store.access.read_only
            or upgrade_due(read_store_info(self.config.db, self.access), self.config.embed.vector_encoder)
        ):
            # opened before the claim read-only (an index on object storage), or without the
            # upgrade only its writer makes: open it again as its writer
            self._close_store()

    def _close_store(self) -> None:
        if self._searcher is not None:
            self._searcher.close()
            self._searcher = None
        if self._store is not None:
            self._store.close()
            self._store = None

    def settle_later(self) -> bool:
        """Before this process ends: leave a job that prunes the table versions its writes
        replaced once readers may no longer read them (``Versions.prune_later``); True when
        one was left."""
        store = self._store
        return store is not None and not store.access.read_only and store.versions.prune_later()

    def close(self) -> None:
        """Release the store (and the writer's claim)."""
        self.writer.release()
        self._close_store()

    def _existing_store(self, missing: str) -> Store:
        """The index (without the model), or a NotFoundError saying ``missing``."""
        store = self.open_readonly()
        if store is None:
            raise NotFoundError(missing)
        return store

    def _index_store(self) -> Store:
        return self._existing_store(f"no index at {self.config.db} (index a folder first: lode index PATH)")


def known_languages() -> frozenset[str]:
    """Every language name the chunker can give a file."""
    from indexer.chunker import KNOWN_LANGUAGES

    return KNOWN_LANGUAGES


def query_embedder(config: LodeConfig, graph: QueryGraph | None) -> Embedder | None:
    """An embedder whose queries go through ``graph`` (ONNX Runtime and the tokenizer: no
    torch, no model in memory until a document must be embedded) when there is one and the
    index was built with the configured model; else None (the model embeds queries, also
    when the graph cannot be opened, e.g. its file was pruned from the cache meanwhile)."""
    info = read_store_info(config.db, store_access(config))
    if graph is None or not info or info.get("model_id") != config.embed.model:
        return None
    try:
        return QueryGraphEmbedder(
            graph, info["model_id"], int(info["dimension"]), lambda: load_embedder(config.embed)
        )
    except Exception as exc:
        log.warning("queries are embedded by the model (the query graph failed: %s)", exc)
        return None


def cached_graph(config: LodeConfig) -> QueryGraph | None:
    """The ONNX query graph an earlier run exported into the cache (found without torch),
    or None (none exported yet, or ``onnx_queries`` is off)."""
    if not config.embed.onnx_queries:
        return None
    return cached_query_graph(
        model_dir(config.embed), int8=config.embed.int8_queries, threads=config.embed.threads or 1
    )
