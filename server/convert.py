"""The one conversion path between ``indexer`` and the front ends: ``to_wire`` for the HTTP
schemas that mirror their model, a function for each that adds what the model does not
hold (a task's percent, a project's sizes, a chunk's flattened metadata), ``from_wire``
for requests that mirror an ``indexer`` request, and the requests the HTTP routes and the
MCP tools both build from loose arguments (a symbol query, discovery settings)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, TypeVar

import msgspec

from indexer.config_file import load_discover_config
from indexer.models import Document, Project, StoredChunk, Task
from indexer.search import SearchResponse
from indexer.search.discover import DiscoverConfig, with_overrides
from indexer.symbols import ReferenceQuery, SymbolQuery
from indexer.tasks import task_embedded, task_eta, task_percent, task_searchable
from server.context import ServerContext
from server.http.schemas.projects import ProjectOut, TaskOut, WatchOut
from server.http.schemas.search import (
    ChunkOut,
    ChunkSearchOut,
    DocumentOut,
    DocumentSearchOut,
    SearchResponseOut,
)

__all__ = [
    "discover_config",
    "from_wire",
    "reference_query",
    "symbol_query",
    "to_chunk",
    "to_document",
    "to_project",
    "to_search_response",
    "to_task",
    "to_wire",
]

T = TypeVar("T")


def to_wire(value: Any, schema: type[T]) -> T:
    """An ``indexer`` answer (dataclasses, or their JSON) as the HTTP schema that mirrors it
    field by field: the one conversion of the API's answers (a test holds every schema to
    its model)."""
    return msgspec.convert(value, schema, from_attributes=True)


def from_wire(request: Any, model: type[T]) -> T:
    """An ``indexer`` request from the HTTP body that mirrors it (validation happens in the
    indexer)."""
    return msgspec.convert(msgspec.to_builtins(request), model)


def _fields(value: Any) -> dict[str, Any]:
    """A dataclass's fields by name (not deep: nested values stay as they are)."""
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}


def to_task(task: Task, rate: float = 0.0) -> TaskOut:
    """A task with derived percent, ETA, and whether it is searchable and embedded."""
    derived = {
        "percent": task_percent(task),
        "eta_seconds": task_eta(task, rate),
        "searchable": task_searchable(task),
        "embedded": task_embedded(task),
    }
    return to_wire({**_fields(task), **derived}, TaskOut)


def to_project(ctx: ServerContext, project: Project) -> ProjectOut:
    """A project with its index size, current task and watcher state."""
    store = ctx.lode.store
    current = ctx.worker.current(project.id)
    return ProjectOut(
        id=project.id,
        name=project.name,
        root=project.root,
        include=list(project.include),
        exclude=list(project.exclude),
        files=store.documents.count(project.id),
        chunks=store.chunks.count(project.id),
        semantic_coverage=round(store.vectors.coverage(project.id), 4),
        implementation_coverage=round(store.vectors.coverage(project.id, "implementation"), 4),
        created_at=project.created_at,
        files_awaiting_rechunk=store.documents.count_outdated(project.id),
        last_indexed_at=project.last_indexed_at,
        current_task=to_task(current, ctx.worker.rate(current.id)) if current is not None else None,
        watch=to_wire(ctx.watch_status(project.id), WatchOut),
    )


def to_search_response(r: SearchResponse) -> SearchResponseOut:
    """The search response as sent: documents or groups, by its granularity."""
    if r.granularity == "chunk":
        return to_wire(r, ChunkSearchOut)
    return to_wire(r, DocumentSearchOut)


def _chunk_fields(c: StoredChunk) -> dict[str, Any]:
    """A stored chunk flattened: the chunker's fields, then the store's ids over them."""
    return {**_fields(c.chunk), **_fields(c)}


def to_chunk(c: StoredChunk) -> ChunkOut:
    """A stored chunk with all its metadata."""
    return to_wire(_chunk_fields(c), ChunkOut)


def to_document(
    d: Document, content: str | None = None, chunks: Sequence[StoredChunk] | None = None
) -> DocumentOut:
    """A document's metadata, with its text and chunks when asked."""
    parts = [_chunk_fields(c) for c in chunks] if chunks is not None else None
    return to_wire({**_fields(d), "content": content, "chunks": parts}, DocumentOut)


def _names(value: str | Sequence[str] | None) -> tuple[str, ...]:
    """Names from a list (a repeated HTTP parameter) or a comma-separated argument (an MCP
    tool's ``python, go``), blanks dropped."""
    values = (value or "").split(",") if isinstance(value, str | None) else value
    return tuple(v.strip() for v in values if v.strip())


def _project(value: str | None) -> tuple[str, ...]:
    return (value.strip(),) if value and value.strip() else ()


def symbol_query(
    name: str, match: str, kind: str | Sequence[str] | None, language: str | Sequence[str] | None,
    project: str | None, from_path: str | None, limit: int,
) -> SymbolQuery:  # fmt: skip
    """Go to definition, from the arguments of ``GET /api/v1/symbols`` (lists) or
    ``find_symbol`` (comma-separated text)."""
    return SymbolQuery(name, match, _names(kind), _names(language), _project(project), from_path, limit)


def reference_query(
    name: str, language: str | Sequence[str] | None, project: str | None, from_path: str | None, limit: int
) -> ReferenceQuery:
    """Find references, from the arguments of ``GET /api/v1/symbols/references`` or
    ``find_references``."""
    return ReferenceQuery(name, _names(language), _project(project), from_path, limit)


def discover_config(
    config: dict[str, dict[str, Any]] | None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    format_style: str | None = None,
    max_tokens: int | None = None,
    max_bullets: int | None = None,
) -> DiscoverConfig:
    """Discovery settings of a request (``POST /api/v1/discover`` or the ``discover`` tool):
    defaults, the config file's ``[discover]`` table, its ``config`` per stage, then its
    own arguments over those (a setting an argument replaces is still checked)."""
    settings = load_discover_config(overrides=config)
    given: dict[str, dict[str, Any]] = {}
    for section, key, value in (
        ("filter", "include", list(include)),
        ("filter", "exclude", list(exclude)),
        ("render", "format_style", format_style),
        ("render", "max_prompt_tokens", max_tokens),
        ("compression", "max_bullets", max_bullets),
    ):
        if value is not None and value != []:
            given.setdefault(section, {})[key] = value
    return with_overrides(settings, given)
