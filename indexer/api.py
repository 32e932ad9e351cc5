"""The indexer API: one object holding the store and the model, opened on first use.

The CLI, the HTTP routes and the MCP tools all call these methods; none of them opens
LanceDB or loads the model on its own.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from indexer.activity import SearchActivity
from indexer.config import LodeConfig, is_object_store
from indexer.containment import refuse_broad_root
from indexer.documents import DocumentData, DocumentText, document_data, document_text
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
from indexer.errors import (
    ConflictError,
    LodeError,
    ModelMismatchError,
    NotFoundError,
    PathError,
    ReadOnlyError,
    StoreError,
    ValidationError,
)
from indexer.index_users import index_users
from indexer.limits import (
    MAX_GLOBS,
    MAX_PATHS,
    QUOTE_CHARS,
    check_items,
    check_text,
    clip,
    quote,
    relative_path_problem,
)
from indexer.memory import limit_heap_growth
from indexer.models import LIVE_STATUSES, IndexReport, Project, StoreCheck, Task, UpgradeReport
from indexer.outline import Outline, OutlineCache
from indexer.pipeline import ProgressCallback, index_project
from indexer.search import (
    ContentRequest,
    ContentResponse,
    FindDocumentsRequest,
    FindDocumentsResponse,
    Searcher,
    SearchOptions,
    SearchResponse,
    find_documents,
    search_content,
)
from indexer.store import (
    SCHEMA_VERSION,
    Store,
    StoreAccess,
    needs_upgrade,
    open_store,
    read_store_info,
    upgrade_due,
)
from indexer.symbols import (
    ReferenceQuery,
    References,
    SymbolDetail,
    SymbolList,
    SymbolQuery,
    find_references,
    find_symbols,
    get_symbol,
)
from indexer.writer import find_writer, writer_claim

__all__ = [
    "Lode",
    "cached_graph",
    "check_project_fields",
    "open_for_queries",
    "open_for_search",
    "query_embedder",
    "read_only_error",
    "relative_paths",
    "resolve_project_root",
    "store_access",
]

log = logging.getLogger(__name__)


def resolve_project_root(path: str | Path, field: str = "path", *, force: bool = False) -> Path:
    """An absolute, readable folder, or a PathError naming ``field``; ``/``, a system folder
    or the home folder itself only with ``force``."""
    raw = str(path).strip()
    if not raw:
        raise PathError(field, "is empty")
    shown = clip(raw, QUOTE_CHARS)
    if "\x00" in raw:
        raise PathError(field, "contains a NUL character")
    try:
        candidate = Path(raw).expanduser()
        if not candidate.exists():
            raise PathError(field, f"{shown} does not exist")
        if not candidate.is_dir():
            raise PathError(field, f"{shown} is not a folder")
        if not os.access(candidate, os.R_OK | os.X_OK):
            raise PathError(field, f"{shown} is not readable")
        root = candidate.resolve()
    except (OSError, RuntimeError, ValueError) as exc:
        raise PathError(field, f"{shown} cannot be used: {exc.__class__.__name__}") from None
    refuse_broad_root(root, field, force=force)
    return root


def relative_paths(paths: Sequence[str], field: str = "paths") -> tuple[str, ...]:
    """Project-relative POSIX paths (no leading slash, no ``..``; at most ``MAX_PATHS``), or
    a PathError naming ``field``."""
    if len(paths) > MAX_PATHS:
        raise PathError(field, f"must hold at most {MAX_PATHS} paths (got {len(paths)})")
    out = []
    for path in paths:
        problem = relative_path_problem(path)
        if problem is not None:
            raise PathError(field, problem)
        out.append(path.strip("/"))
    return tuple(out)


def refuse_index_users(db: Path | str) -> None:
    """A ``ConflictError`` naming the other lode processes that use the index ``db``, if
    any: a migration under them would let an older lode write rows without the new columns."""
    users = index_users(db)
    if users:
        named = "; ".join(u.describe() for u in users[:3])
        more = f" and {len(users) - 3} more" if len(users) > 3 else ""
        raise ConflictError(
            f"the index at {db} needs an upgrade, and other lode processes use it ({named}{more}): "
            "stop them first (an older lode would go on writing rows without the new columns)"
        )


def check_project_fields(name: str | None, include: Sequence[str], exclude: Sequence[str]) -> None:
    """A project's name and include/exclude globs as every front end takes them, or a
    ValidationError naming the field."""
    from indexer.walker import IgnoreRules

    if name is not None:
        check_text("name", name)
    for field, globs in (("include", include), ("exclude", exclude)):
        check_items(field, globs, MAX_GLOBS)
        try:
            IgnoreRules.check_globs(globs)
        except ValueError as exc:
            raise ValidationError(field, str(exc)) from None


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


def read_only_error(config: LodeConfig) -> ReadOnlyError:
    """The error a reader answers a write with, naming the writer (and where it answers)."""
    try:
        writer = find_writer(config)
    except (LodeError, OSError):  # the lease cannot be read: say what a writer is anyway
        writer = None
    now = f"; its writer now is {writer.describe()}" if writer is not None else ""
    return ReadOnlyError(
        f"this lode server only reads the index {config.db} (`lode serve --read-only`): send "
        f"writes to its writer, `lode serve`, `lode index` or `lode watch` with the same --db{now}"
    )


class Lode:
    """lode's Python API over one index (a local folder, or a prefix on object storage)."""

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

    # ---- lifecycle ------------------------------------------------------------------
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
        store = open_store(self.config.db, model_id, dimension, access, upgrade=upgrade)
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
            self._store.access.read_only or upgrade_due(read_store_info(self.config.db, self.access))
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

    # ---- projects -------------------------------------------------------------------
    def register(
        self,
        path: str | Path,
        name: str | None = None,
        include: tuple[str, ...] = (),
        exclude: tuple[str, ...] = (),
        *,
        force: bool = False,
    ) -> Project:
        """Register a folder as a project (or return the one already registered for it)."""
        check_project_fields(name or None, include, exclude)
        root = resolve_project_root(path, force=force)
        self.hold_writer()
        existing = self.store.projects.find_by_root(str(root))
        if existing is not None:
            return existing
        return self.store.projects.add(name or root.name, str(root), include, exclude)

    def list_projects(self) -> list[Project]:
        """Every registered project."""
        store = self.open_readonly()
        return store.projects.all() if store else []

    def remove_project(self, ref: str) -> Project:
        """Forget a project and its index rows (source files are never touched)."""
        store = self.open_readonly()
        if store is None:
            from indexer.errors import NotFoundError

            raise NotFoundError(f"no project {quote(ref)}")
        project = store.projects.get(ref)
        self.hold_writer("lode projects remove")
        self.store.projects.delete(project.id)
        return project

    # ---- indexing -------------------------------------------------------------------
    def index(
        self,
        path: str | Path,
        *,
        name: str | None = None,
        paths: Sequence[str] = (),
        full: bool = False,
        embed: bool = True,
        force: bool = False,
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> IndexReport:
        """Register ``path`` if needed and bring its index (or only ``paths`` in it) up to
        date; when this call upgraded the index, the other projects' files an older lode
        chunked are chunked again too (their symbols and roles), not at their next run."""
        project = self.register(path, name, force=force)
        report = index_project(
            self.store,
            self.lazy_embedder,
            project,
            self.config,
            paths=relative_paths(paths),
            full=full,
            embed=embed,
            progress=progress,
            cancel=cancel,
        )
        if self.upgraded_from is not None:
            self.rechunk_outdated(progress=progress, cancel=cancel)
        return report

    def upgrade(
        self, *, progress: ProgressCallback | None = None, cancel: threading.Event | None = None
    ) -> UpgradeReport:
        """Bring the index to this lode's schema (``lode upgrade``): take the writer's claim,
        refuse while another lode process uses the index, migrate, and chunk again every
        file an older lode chunked (symbols and roles), so nothing waits for a later run.
        Vectors made for texts no longer known are embedded again by the next phase 2
        (``lode serve``, ``lode index``); they answer searches until then."""
        info = read_store_info(self.config.db, self.access)
        if not info:
            raise NotFoundError(f"no index at {self.config.db}")
        self.hold_writer("lode upgrade")
        store = self.store
        rechunked = self.rechunk_outdated(progress=progress, cancel=cancel)
        return UpgradeReport(
            db=str(self.config.db),
            from_version=self.upgraded_from or int(info.get("schema_version", "0")),
            to_version=SCHEMA_VERSION,
            files_rechunked=rechunked,
            files_awaiting_rechunk=store.documents.count_outdated(),
            vectors_outdated=store.stats()["vectors_outdated"],
        )

    def rechunk_outdated(
        self, *, progress: ProgressCallback | None = None, cancel: threading.Event | None = None
    ) -> int:
        """Chunk again, in every project, the files an older lode chunked (phase 1 only);
        how many were. A project whose folder cannot be read keeps them (logged)."""
        self.hold_writer()
        store = self.store
        done = 0
        for project in store.projects.all():
            paths = store.documents.outdated(project.id)
            if not paths:
                continue
            try:
                report = index_project(
                    store, self.lazy_embedder, project, self.config, paths=paths, embed=False,
                    progress=progress, cancel=cancel,
                )  # fmt: skip
            except LodeError as exc:
                log.warning("%s: its files are chunked again at its next index (%s)", project.name, exc)
                continue
            done += report.files_indexed
        return done

    def check(self) -> StoreCheck:
        """Verify the index on disk (``lode check``); never loads the model."""
        store = self.open_readonly()
        if store is None:
            raise NotFoundError(f"no index at {self.config.db}")
        return store.check()

    def status(self) -> dict[str, Any]:
        """Projects, sizes, failures and the model of the index, and the tasks the store
        records as queued or running (a server's writer runs them; no watcher is known here)."""
        store = self.open_readonly()
        if store is None:
            return {"db": str(self.config.db), "exists": False, "projects": []}
        errors = store.files.errors()
        projects = [
            {
                "id": p.id,
                "name": p.name,
                "root": p.root,
                "files": store.documents.count(p.id),
                "chunks": store.chunks.count(p.id),
                "semantic_coverage": round(store.vectors.coverage(p.id), 4),
                "files_awaiting_rechunk": store.documents.count_outdated(p.id),
                "failed_files": sum(1 for e in errors if e["project_id"] == p.id),
                "last_indexed_at": p.last_indexed_at.isoformat() if p.last_indexed_at else None,
            }
            for p in store.projects.all()
        ]
        return {
            "db": str(self.config.db),
            "exists": True,
            "model_id": store.model_id,
            "dimension": store.dimension,
            **store.stats(),
            "projects": projects,
            "tasks": [task_summary(t) for t in store.tasks.all(statuses=LIVE_STATUSES)],
        }

    # ---- search ---------------------------------------------------------------------
    def search(self, options: SearchOptions) -> SearchResponse:
        """Hybrid search with filters, at document or chunk granularity."""
        with self.activity.searching():
            return self.searcher.search(options)

    # ---- outline --------------------------------------------------------------------
    @functools.cached_property
    def outlines(self) -> OutlineCache:
        """Project outlines, each rebuilt on first use after the index changed."""
        return OutlineCache()

    def outline(self, project: str) -> Outline:
        """The navigable outline of a project (by id or name): ls, cat, find, grep, locate, plan."""
        store = self.open_readonly()
        if store is None:
            raise NotFoundError(f"no project {quote(project)}")
        return self.outlines.get(store, project)

    # ---- agent retrieval and discovery ----------------------------------------------
    def search_content(self, request: ContentRequest) -> ContentResponse:
        """Retrieval: chunks for concepts and/or exact terms, with full text, paged by token."""
        with self.activity.searching():
            return search_content(self.searcher, request)

    def find_documents(self, request: FindDocumentsRequest) -> FindDocumentsResponse:
        """Discovery: files ranked for a query, with summaries and key phrases, paged by token."""
        with self.activity.searching():
            return find_documents(self.searcher, request)

    def document_data(self, project: str, document_id: str) -> DocumentData:
        """A document by project and path relative to its root: metadata and every chunk."""
        return document_data(self._readable_store(project), project, document_id)

    def document_text(
        self, project: str, document_id: str, start_line: int | None = None, end_line: int | None = None
    ) -> DocumentText:
        """Lines of a document (1-based, inclusive) by project and path relative to its root."""
        return document_text(self._readable_store(project), project, document_id, start_line, end_line)

    # ---- symbols --------------------------------------------------------------------
    def symbols(self, query: SymbolQuery) -> SymbolList:
        """Go to definition: the definitions of a name (exact, prefix, glob or fuzzy), ranked
        by proximity to ``query.from_path``; name-based, like ctags."""
        with self.activity.searching():
            return find_symbols(self._index_store(), query)

    def symbol(self, symbol_id: str) -> SymbolDetail:
        """One symbol of the index by id, with its code."""
        return get_symbol(self._index_store(), symbol_id)

    def references(self, query: ReferenceQuery) -> References:
        """Find references: every use of a name grouped by the unit it is used in (its
        callers), with the name's candidate definitions."""
        with self.activity.searching():
            return find_references(self._index_store(), query)

    def _index_store(self) -> Store:
        store = self.open_readonly()
        if store is None:
            raise NotFoundError(f"no index at {self.config.db} (index a folder first: lode index PATH)")
        return store

    def _readable_store(self, project: str) -> Store:
        store = self.open_readonly()
        if store is None:
            raise NotFoundError(f"no project {quote(project)}")
        return store


def task_summary(task: Task) -> dict[str, Any]:
    """A task as ``lode status`` shows it: its state and counts, with the percent done."""
    from indexer.tasks import task_percent

    fields = ("id", "project_id", "kind", "status", "phase", "files_total", "files_done")
    counts = ("chunks_done", "chunks_total", "chunks_embedded")
    return {
        **{name: getattr(task, name) for name in (*fields, *counts)},
        "percent": task_percent(task),
        "eta_seconds": None,
        "message": task.message,
    }


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


def open_for_queries(config: LodeConfig, graph: QueryGraph | None) -> Lode:
    """A Lode whose queries are embedded through ``graph`` when it can be used
    (``query_embedder``), else by the model itself."""
    return Lode(config, embedder=query_embedder(config, graph))


def open_for_search(config: LodeConfig) -> Lode:
    """A Lode that searches in this process: queries go through the ONNX graph an earlier
    run exported into the cache (found without torch), or through the model when none has
    been exported yet (loading it exports the graph for the next time)."""
    return open_for_queries(config, cached_graph(config))
