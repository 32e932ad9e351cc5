"""``indexer`` data → HTTP schemas (one function per type)."""

from __future__ import annotations

from indexer.models import Document, Project, StoredChunk, Task
from indexer.search import ChunkHit, DocumentHit, FileGroup, SearchOptions, SearchResponse
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
]


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


def to_options(req: s.SearchRequest) -> SearchOptions:
    """Search options from a request body (validation happens in the indexer)."""
    depth = req.scope_depth
    return SearchOptions(
        query=req.query,
        projects=tuple(req.projects),
        granularity=req.granularity,
        mode=req.mode,
        languages=tuple(req.languages),
        path_include=tuple(req.path_include),
        path_exclude=tuple(req.path_exclude),
        node_types=tuple(req.node_types),
        node_name_pattern=req.node_name_pattern,
        parent_context_pattern=req.parent_context_pattern,
        scope_depth=(depth[0], depth[1]) if depth is not None else None,
        has_definitions=tuple(req.has_definitions),
        has_references=tuple(req.has_references),
        roles=tuple(req.roles),
        exclude_roles=tuple(req.exclude_roles),
        file_limit=req.file_limit,
        chunks_per_file=req.chunks_per_file,
        limit=req.limit,
        offset=req.offset,
    )


def _hit(h: ChunkHit) -> s.ChunkHitOut:
    return s.ChunkHitOut(
        id=h.id,
        file_id=h.file_id,
        file_path=h.file_path,
        project_id=h.project_id,
        project=h.project,
        chunk_index=h.chunk_index,
        content=h.content,
        start_line=h.start_line,
        end_line=h.end_line,
        language=h.language,
        node_type=h.node_type,
        node_name=h.node_name,
        parent_context=h.parent_context,
        scope_path=list(h.scope_path),
        relevance_score=h.relevance_score,
        role=h.role,
        unit_start_line=h.unit_start_line,
        unit_end_line=h.unit_end_line,
        folded_pieces=h.folded_pieces,
    )


def _doc_hit(d: DocumentHit) -> s.DocumentHitOut:
    return s.DocumentHitOut(
        id=d.id,
        file_path=d.file_path,
        project_id=d.project_id,
        project=d.project,
        relevance_score=d.relevance_score,
        chunk_count=d.chunk_count,
        languages=list(d.languages),
        primary_language=d.primary_language,
        chunks=[_hit(c) for c in d.chunks],
        role=d.role,
    )


def _group(g: FileGroup) -> s.FileGroupOut:
    return s.FileGroupOut(
        file_id=g.file_id,
        file_path=g.file_path,
        project_id=g.project_id,
        project=g.project,
        total_relevance=g.total_relevance,
        chunks=[_hit(c) for c in g.chunks],
    )


def to_search_response(r: SearchResponse) -> s.SearchResponseOut:
    """The search response as sent."""
    return s.SearchResponseOut(
        query=r.query,
        mode=r.mode,
        granularity=r.granularity,
        offset=r.offset,
        limit=r.limit,
        total=r.total,
        has_more=r.has_more,
        documents=[_doc_hit(d) for d in r.documents],
        groups=[_group(g) for g in r.groups],
        semantic_coverage=dict(r.semantic_coverage),
        warnings=list(r.warnings),
        took_ms=r.took_ms,
    )


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
