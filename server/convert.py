"""``indexer`` data → HTTP schemas: ``to_wire`` for the schemas that mirror their model, a
function for each that adds what the model does not hold (a task's percent, a project's
sizes, a chunk's flattened metadata)."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

from indexer.models import Document, Project, StoredChunk, Task
from indexer.search import SearchOptions, SearchResponse
from indexer.tasks import task_eta, task_percent
from server import schemas as s
from server.context import ServerContext

__all__ = [
    "to_chunk",
    "to_document",
    "to_options",
    "to_project",
    "to_search_response",
    "to_task",
    "to_wire",
]

T = TypeVar("T")


def to_task(task: Task, rate: float = 0.0) -> s.TaskOut:
    """A task with derived percent and ETA."""
    return s.TaskOut(
        id=task.id,
        project_id=task.project_id,
        kind=task.kind,
        status=task.status,
        phase=task.phase,
        paths=list(task.paths),
        full=task.full,
        files_total=task.files_total,
        files_done=task.files_done,
        chunks_done=task.chunks_done,
        chunks_total=task.chunks_total,
        chunks_embedded=task.chunks_embedded,
        percent=task_percent(task),
        eta_seconds=task_eta(task, rate),
        errors=list(task.errors),
        message=task.message,
        created_at=task.created_at,
        started_at=task.started_at,
        finished_at=task.finished_at,
    )


def to_project(ctx: ServerContext, project: Project) -> s.ProjectOut:
    """A project with its index size, live task and watcher state."""
    store = ctx.lode.store
    live = [t for t in ctx.worker.list(project.id, limit=20) if t.live]
    current = to_task(live[0], ctx.worker.rate(live[0].id)) if live else None
    watch = ctx.watch_status(project.id)
    return s.ProjectOut(
        id=project.id,
        name=project.name,
        root=project.root,
        include=list(project.include),
        exclude=list(project.exclude),
        files=store.documents.count(project.id),
        chunks=store.chunks.count(project.id),
        semantic_coverage=round(store.vectors.coverage(project.id), 4),
        created_at=project.created_at,
        files_awaiting_rechunk=store.documents.count_outdated(project.id),
        last_indexed_at=project.last_indexed_at,
        current_task=current,
        watch=watch,
    )


def to_wire(value: Any, schema: type[T]) -> T:
    """An ``indexer`` answer (dataclasses) as the HTTP schema that mirrors it field by
    field: the one conversion of the API's answers (a test holds every schema to its model)."""
    return msgspec.convert(value, schema, from_attributes=True)


def to_options(req: s.SearchRequest) -> SearchOptions:
    """Search options from a request body (validation happens in the indexer)."""
    return msgspec.convert(msgspec.to_builtins(req), SearchOptions)


def to_search_response(r: SearchResponse) -> s.SearchResponseOut:
    """The search response as sent."""
    return to_wire(r, s.SearchResponseOut)


def to_chunk(c: StoredChunk) -> s.ChunkOut:
    """A stored chunk with all its metadata."""
    ch = c.chunk
    return s.ChunkOut(
        id=c.id,
        file_id=c.file_id,
        project_id=c.project_id,
        file_path=c.file_path,
        chunk_index=ch.chunk_index,
        content=ch.content,
        chunk_hash=ch.chunk_hash,
        start_byte=ch.start_byte,
        end_byte=ch.end_byte,
        start_line=ch.start_line,
        end_line=ch.end_line,
        language=ch.language,
        node_type=ch.node_type,
        node_name=ch.node_name,
        parent_context=ch.parent_context,
        scope_path=list(ch.scope_path),
        definitions=list(ch.definitions),
        references=list(ch.references),
        embedded=c.embedded,
    )


def to_document(
    d: Document, content: str | None = None, chunks: list[StoredChunk] | None = None
) -> s.DocumentOut:
    """A document's metadata, with its text and chunks when asked."""
    return s.DocumentOut(
        id=d.id,
        project_id=d.project_id,
        file_path=d.file_path,
        content_hash=d.content_hash,
        file_size=d.file_size,
        last_modified=d.last_modified,
        indexed_at=d.indexed_at,
        languages=list(d.languages),
        primary_language=d.primary_language,
        chunk_count=d.chunk_count,
        keywords=list(d.keywords),
        summary=d.summary,
        content=content,
        chunks=[to_chunk(c) for c in chunks] if chunks is not None else None,
    )
