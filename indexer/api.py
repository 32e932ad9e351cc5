"""The indexer API: one object holding the store and the model, opened on first use.

The CLI, the HTTP routes and the MCP tools all call these methods; none of them opens
LanceDB or loads the model on its own.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from indexer._index_access import IndexAccess, cached_graph, known_languages, query_embedder, store_access
from indexer._runs import task_summary
from indexer.config import LodeConfig
from indexer.containment import relative_paths, resolve_project_root
from indexer.documents import DocumentData, DocumentText, document_data, document_text
from indexer.editor import FileText, PositionQuery, SymbolAt, TextQuery, read_text, symbol_at
from indexer.embed import QueryGraph
from indexer.errors import ConflictError, LodeError, NotFoundError
from indexer.limits import quote
from indexer.models import LIVE_STATUSES, IndexReport, Project, StoreCheck, UpgradeReport
from indexer.outline import Outline, OutlineCache
from indexer.pipeline import ProgressCallback, index_project
from indexer.search import (
    ContentRequest,
    ContentResponse,
    FindDocumentsRequest,
    FindDocumentsResponse,
    SearchOptions,
    SearchResponse,
    find_documents,
    search_content,
)
from indexer.store import SCHEMA_VERSION, read_store_info
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
from indexer.walker import check_project_fields
from indexer.writer import read_only_error

__all__ = [
    "Lode",
    "cached_graph",
    "check_project_fields",
    "known_languages",
    "open_for_queries",
    "open_for_search",
    "query_embedder",
    "read_only_error",
    "relative_paths",
    "resolve_project_root",
    "store_access",
]

log = logging.getLogger(__name__)


class Lode(IndexAccess):
    """lode's Python API over one index (a local folder, or a prefix on object storage)."""

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
        """Register a folder as a project, or return the one registered for it: asking that
        one a different name or globs is a ``ConflictError`` naming the field (renaming and
        new globs are ``PATCH /api/v1/projects/{id}``'s job)."""
        check_project_fields(name or None, include, exclude)
        root = resolve_project_root(path, force=force)
        self.hold_writer()
        existing = self.store.projects.find_by_root(str(root))
        if existing is None:
            return self.store.projects.add(name or root.name, str(root), include, exclude)
        asked: dict[str, tuple[object, object]] = {
            "name": (name or None, existing.name),  # globs in any order are the same globs
            "include": (frozenset(include) or None, frozenset(existing.include)),
            "exclude": (frozenset(exclude) or None, frozenset(existing.exclude)),
        }
        for field, (wanted, current) in asked.items():
            if wanted is not None and wanted != current:
                raise ConflictError(
                    f"{existing.root} is already registered as project {existing.name!r} with {field} "
                    f"{getattr(existing, field)!r}: PATCH /api/v1/projects/{existing.id} to change it",
                    field,
                )
        return existing

    def list_projects(self) -> list[Project]:
        """Every registered project."""
        store = self.open_readonly()
        return store.projects.all() if store else []

    def remove_project(self, ref: str) -> Project:
        """Forget a project and its index rows (source files are never touched)."""
        project = self._existing_store(f"no project {quote(ref)}").projects.get(ref)
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
        return self._existing_store(f"no index at {self.config.db}").check()

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
                "implementation_coverage": round(store.vectors.coverage(p.id, "implementation"), 4),
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
        return self.outlines.get(self._existing_store(f"no project {quote(project)}"), project)

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
        return document_data(self._existing_store(f"no project {quote(project)}"), project, document_id)

    def document_text(
        self, project: str, document_id: str, start_line: int | None = None, end_line: int | None = None
    ) -> DocumentText:
        """Lines of a document (1-based, inclusive) by project and path relative to its root."""
        return document_text(
            self._existing_store(f"no project {quote(project)}"), project, document_id, start_line, end_line
        )

    # ---- editors --------------------------------------------------------------------
    def read_text(self, query: TextQuery) -> FileText:
        """Lines of an indexed file (0-based, end exclusive) with the whole file's hash; the
        path relative, absolute inside a project's root, or a ``file://`` URI."""
        return read_text(self._index_store(), query)

    def symbol_at(self, query: PositionQuery) -> SymbolAt:
        """The identifier at a position (0-based line, UTF-16 column), its definitions
        nearest first, and the unit and chunk holding the position."""
        with self.activity.searching():
            return symbol_at(self._index_store(), query, self.searcher.gather)

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


def open_for_queries(config: LodeConfig, graph: QueryGraph | None) -> Lode:
    """A Lode whose queries are embedded through ``graph`` when it can be used
    (``query_embedder``), else by the model itself."""
    return Lode(config, embedder=query_embedder(config, graph))


def open_for_search(config: LodeConfig) -> Lode:
    """A Lode that searches in this process: queries go through the ONNX graph an earlier
    run exported into the cache (found without torch), or through the model when none has
    been exported yet (loading it exports the graph for the next time)."""
    return open_for_queries(config, cached_graph(config))
