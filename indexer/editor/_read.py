"""Reading an indexed file: which file a path argument names, and lines of its text.

Text is served from the index (the content that was chunked), never read from disk: a
path names an indexed file of a project, so nothing outside a project's root is read.
"""

from __future__ import annotations

from indexer.editor._model import FileText, TextQuery
from indexer.errors import NotFoundError, ValidationError
from indexer.limits import quote, quote_items
from indexer.locations import file_uri, locate_path
from indexer.models import Project
from indexer.search._engine import resolve_projects
from indexer.store import IndexedText, Store

__all__ = ["open_text", "read_text", "total_lines"]


def open_text(
    store: Store, path: str, project: str | None, field: str = "path"
) -> tuple[Project, IndexedText]:
    """The indexed file a path argument names (relative, absolute inside a project's root, or
    a ``file://`` URI), in ``project`` when given, and its text; a PathError naming
    ``field`` for a path outside every root, a NotFoundError for a file not indexed."""
    projects = store.projects.all()
    chosen = resolve_projects(store, [project], "project")[0] if project else None
    located = locate_path(path, projects, field, chosen)
    owner = located.project
    if owner is None:  # relative: the project that indexes it
        having = set(store.documents.projects_with(located.path, [p.id for p in projects]))
        owners = [p for p in projects if p.id in having]
        if len(owners) > 1:
            names = quote_items(p.name for p in owners)
            raise ValidationError("project", f"{quote(located.path)}: indexed in {names}; name one")
        if not owners:
            raise NotFoundError(f"no project indexes {quote(located.path)}", field)
        owner = owners[0]
    found = store.documents.text_at(owner.id, located.path)
    if found is None:
        raise NotFoundError(f"{quote(located.path)} is not indexed in project {quote(owner.name)}", field)
    return owner, found


def total_lines(text: IndexedText) -> int:
    """Lines of a text (a final line ending starts no line; an empty text has none)."""
    lines = text.lines
    return len(lines) - 1 if lines[-1] == "" else len(lines)


def _check_lines(query: TextQuery) -> None:
    for field, value in (("start_line", query.start_line), ("end_line", query.end_line)):
        if value is not None and value < 0:
            raise ValidationError(field, f"must be 0 or more (lines are 0-based) (got {value})")
    if query.start_line is not None and query.end_line is not None and query.end_line < query.start_line:
        raise ValidationError(
            "end_line", f"must be >= start_line ({query.start_line}) (got {query.end_line})"
        )


def read_text(store: Store, query: TextQuery) -> FileText:
    """Lines ``start_line``..``end_line - 1`` (0-based; default: all) of an indexed file, and
    the hash of the whole file."""
    _check_lines(query)
    project, text = open_text(store, query.path, query.project)
    total = total_lines(text)
    first = query.start_line or 0
    if first > total:
        raise ValidationError(
            "start_line", f"must be at most {total}: the file has {total} lines (got {first})"
        )
    last = total if query.end_line is None else min(query.end_line, total)
    lines = text.lines
    body = "\n".join(lines[first:last])
    if last > first and last < len(lines):
        body += "\n"
    return FileText(
        uri=file_uri(project.root, text.file_path),
        project=project.name,
        project_id=project.id,
        path=text.file_path,
        start_line=first,
        end_line=last,
        total_lines=total,
        text=body,
        content_hash=text.content_hash,
    )
