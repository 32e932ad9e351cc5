"""What the page's templates show: search results, a chunk in its file, the projects, each
built from ``indexer`` data and rendered to HTML with Jinja (autoescaped)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from indexer.errors import NotFoundError
from indexer.limits import quote
from indexer.models import Project
from indexer.search import ChunkHit, SearchResponse
from server.context import ServerContext
from server.convert import to_project
from server.web._highlight import code_block, highlight_lines, matching_lines, query_terms

__all__ = [
    "FileView",
    "HitView",
    "ago",
    "editor_href",
    "file_views",
    "hit_view",
    "render",
    "render_chunk",
    "render_projects",
    "render_results",
]

#: Lines of a chunk shown in a result (a window around its first matching line).
WINDOW = 12


@functools.cache
def _env() -> Environment:
    env = Environment(
        loader=PackageLoader("server.web", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["ago"] = ago
    return env


def render(template: str, **values: Any) -> str:
    """Render one of the package's templates."""
    return _env().get_template(template).render(**values)


def ago(when: datetime | None) -> str:
    """A past moment as ``12 s ago``, ``5 min ago``, ``3 h ago``, ``2 d ago`` or a date."""
    if when is None:
        return "never"
    aware = when if when.tzinfo else when.replace(tzinfo=UTC)
    seconds = max(0, int((datetime.now(UTC) - aware).total_seconds()))
    if seconds >= 7 * 86400:
        return f"{aware:%Y-%m-%d}"
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit} ago"
    return f"{seconds} s ago"


# ---- results ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class HitView:
    """One chunk result: where it is, what it is, and its highlighted lines."""

    id: str
    file_path: str
    start_line: int
    end_line: int
    node_type: str
    node_name: str
    language: str
    score: float
    code: Markup
    hidden_lines: int
    role: str = "implementation"


@dataclass(frozen=True, slots=True)
class FileView:
    """A file of the results and its chunk results."""

    path: str
    project: str
    score: float
    hits: list[HitView]


def _window(count: int, marked: set[int]) -> tuple[int, int]:
    if count <= WINDOW + 2:
        return 0, count
    first = min(marked) if marked else 0
    start = max(0, min(first - 2, count - WINDOW))
    return start, start + WINDOW


def hit_view(hit: ChunkHit, terms: list[str]) -> HitView:
    """A chunk result with the lines matching the query marked."""
    raw = hit.content.split("\n")
    if len(raw) > 1 and raw[-1] == "":
        raw.pop()
    marked = matching_lines(raw, terms)
    start, stop = _window(len(raw), marked)
    lines = highlight_lines(hit.content, hit.language)[start:stop]
    shown = {i - start for i in marked if start <= i < stop}
    return HitView(
        id=hit.id,
        file_path=hit.file_path,
        start_line=hit.start_line,
        end_line=hit.end_line,
        node_type=hit.node_type,
        node_name=hit.node_name,
        language=hit.language,
        score=hit.relevance_score,
        code=code_block(lines, hit.start_line + start, shown),
        hidden_lines=len(raw) - (stop - start),
        role=hit.role,
    )


def file_views(response: SearchResponse) -> list[FileView]:
    """Documents (document granularity) or file groups (chunk granularity) as files."""
    terms = query_terms(response.query)
    if response.granularity == "document":
        return [
            FileView(d.file_path, d.project, d.relevance_score, [hit_view(c, terms) for c in d.chunks])
            for d in response.documents
        ]
    return [
        FileView(g.file_path, g.project, g.total_relevance, [hit_view(c, terms) for c in g.chunks])
        for g in response.groups
    ]


def render_results(
    ctx: ServerContext, projects: list[Project], response: SearchResponse | None, filters: dict[str, str]
) -> str:
    """The results fragment: results, no match, a hint (no query) or the no-project state."""
    if not projects:
        return render("results.html.j2", state="empty")
    if response is None:
        return render("results.html.j2", state="hint", projects=[to_project(ctx, p) for p in projects])
    files = file_views(response)
    return render(
        "results.html.j2",
        state="results" if files else "none",
        files=files,
        response=response,
        hits=sum(len(f.hits) for f in files),
        filters=filters,
    )


# ---- one chunk in its file ------------------------------------------------------------
def editor_href(template: str, project: Project, file_path: str, line: int) -> str | None:
    """The editor link for a file at a line (None when the template is unusable).

    ``vscode://file/{abs_path}`` with ``/home/x`` gives ``vscode://file/home/x``: a slash
    right before ``{abs_path}`` after a host is not doubled (``file://{abs_path}`` keeps both).
    """
    abs_path = (Path(project.root) / file_path).as_posix()
    at = template.find("{abs_path}")
    if abs_path.startswith("/") and at >= 2 and template[at - 1] == "/" and template[at - 2] not in "/:":
        template = template[: at - 1] + template[at:]
    try:
        return template.format_map({"abs_path": abs_path, "path": file_path, "line": line})
    except (KeyError, IndexError, ValueError):
        return None


def render_chunk(ctx: ServerContext, chunk_id: str) -> str:
    """The chunk fragment: the whole file highlighted, the chunk's lines marked."""
    store = ctx.lode.store
    found = store.chunks.get([chunk_id])
    if not found:
        raise NotFoundError(f"no chunk {quote(chunk_id)} (the file may have been re-indexed since)")
    stored = found[0]
    chunk = stored.chunk
    project = store.projects.get(stored.project_id)
    text = store.documents.content(stored.file_id)
    first = 1
    if text is None:  # the file went away between the two reads: show the chunk alone
        text, first = chunk.content, chunk.start_line
    lines = highlight_lines(text, chunk.language)
    code = code_block(lines, first, set(), chunk=range(chunk.start_line, chunk.end_line + 1))
    return render(
        "chunk.html.j2",
        chunk=chunk,
        file_path=stored.file_path,
        project=project,
        lines=len(lines),
        code=code,
        editor=editor_href(ctx.config.server.editor_url, project, stored.file_path, chunk.start_line),
    )


# ---- projects -----------------------------------------------------------------------
def render_projects(ctx: ServerContext) -> str:
    """The projects fragment: sizes, coverage, watcher, live task, last failure."""
    projects = []
    for project in ctx.lode.store.projects.all():
        last = ctx.worker.list(project.id, limit=1)
        failed = last[0] if last and last[0].status == "failed" else None
        projects.append((to_project(ctx, project), failed))
    live = any(p.current_task is not None for p, _ in projects)
    return render("projects.html.j2", projects=projects, live=live)
