"""Documents by ``document_id``, the file's path relative to its project root: metadata,
key phrases, summary and chunks (``document_data``), or lines (``document_text``).

A document_id may also be absolute inside the project's root, or a ``file://`` URI of a
file there (``indexer.locations``); one outside the root, one holding a ``..`` segment, or
one naming a symlink resolving outside the root is a PathError (400) before anything is
looked up. Text is
served from the index (the content that was chunked), never read from disk, so nothing
outside a project root is ever read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from indexer.containment import is_inside
from indexer.errors import NotFoundError, PathError, ValidationError
from indexer.limits import MAX_TEXT_CHARS, quote
from indexer.locations import locate_path

if TYPE_CHECKING:
    from indexer.models import Document, Project
    from indexer.store import Store

__all__ = [
    "DocumentChunk",
    "DocumentData",
    "DocumentText",
    "check_document_id",
    "document_data",
    "document_text",
]

_FIELD = "document_id"


@dataclass(frozen=True, slots=True)
class DocumentChunk:
    """One chunk of a document, in file order."""

    chunk_id: str
    chunk_index: int
    start_line: int
    end_line: int
    node_type: str
    node_name: str
    content: str


@dataclass(frozen=True, slots=True)
class DocumentData:
    """A document's metadata and every chunk of it."""

    document_id: str
    project: str
    project_id: str
    languages: tuple[str, ...]
    primary_language: str
    chunk_count: int
    file_size: int
    last_modified: float
    indexed_at: datetime | None
    keywords: tuple[str, ...]
    summary: str
    chunks: tuple[DocumentChunk, ...]


@dataclass(frozen=True, slots=True)
class DocumentText:
    """Lines of a document as indexed (1-based, inclusive)."""

    document_id: str
    project: str
    project_id: str
    start_line: int
    end_line: int
    total_lines: int
    text: str


def check_document_id(document_id: str, root: str) -> str:
    """``document_id`` as a clean relative POSIX path inside ``root``, or a PathError."""
    if not document_id or len(document_id) > MAX_TEXT_CHARS or "\x00" in document_id:
        raise PathError(_FIELD, f"must be a relative path of 1 to {MAX_TEXT_CHARS} characters, without NUL")
    if document_id.startswith(("/", "\\")) or (len(document_id) > 1 and document_id[1] == ":"):
        raise PathError(
            _FIELD, f"{quote(document_id)} is absolute; give the path relative to the project root"
        )
    segments = document_id.replace("\\", "/").split("/")
    if any(s in ("..", ".", "") for s in segments):
        raise PathError(_FIELD, f"{quote(document_id)} must not contain '..', '.' or empty segments")
    base = os.path.realpath(root)
    target = os.path.realpath(os.path.join(base, document_id))
    if not is_inside(base, target):
        raise PathError(_FIELD, f"{quote(document_id)} resolves outside the project root")
    return document_id


def _path(project: Project, document_id: str) -> str:
    """``document_id`` as a checked path relative to the project's root."""
    if document_id.startswith("/") or document_id[:5].lower() == "file:":  # absolute, or a URI
        document_id = locate_path(document_id, [project], _FIELD, project).path
    return check_document_id(document_id, project.root)


def _missing(project: Project, path: str) -> NotFoundError:
    return NotFoundError(f"no indexed document {quote(path)} in project {quote(project.name)}")


def _find(store: Store, project_ref: str, document_id: str) -> tuple[Project, Document]:
    project = store.projects.get(project_ref)
    path = _path(project, document_id)
    doc = store.documents.find(project.id, path)
    if doc is None:
        raise _missing(project, path)
    return project, doc


def document_data(store: Store, project_ref: str, document_id: str) -> DocumentData:
    """A document's metadata, key phrases, summary and every chunk, by project and path."""
    project, doc = _find(store, project_ref, document_id)
    chunks = tuple(
        DocumentChunk(
            chunk_id=c.id, chunk_index=c.chunk.chunk_index, start_line=c.chunk.start_line,
            end_line=c.chunk.end_line, node_type=c.chunk.node_type, node_name=c.chunk.node_name,
            content=c.chunk.content,
        )
        for c in store.chunks.of_files([doc.id])
    )  # fmt: skip
    return DocumentData(
        document_id=doc.file_path, project=project.name, project_id=project.id, languages=doc.languages,
        primary_language=doc.primary_language, chunk_count=doc.chunk_count, file_size=doc.file_size,
        last_modified=doc.last_modified, indexed_at=doc.indexed_at, keywords=doc.keywords,
        summary=doc.summary, chunks=chunks,
    )  # fmt: skip


def document_text(
    store: Store,
    project_ref: str,
    document_id: str,
    start_line: int | None = None,
    end_line: int | None = None,
) -> DocumentText:
    """Lines ``start_line``..``end_line`` (1-based, inclusive; default: all) of a document as indexed."""
    project = store.projects.get(project_ref)
    path = _path(project, document_id)
    found = store.documents.text_at(project.id, path)  # (one read, by the path's index)
    if found is None:
        raise _missing(project, path)
    lines = "\n".join(found.lines).splitlines(keepends=True)
    first = 1 if start_line is None else start_line
    last = len(lines) if end_line is None else min(end_line, len(lines))
    if first < 1 or (lines and first > len(lines)):
        raise ValidationError("start_line", f"must be between 1 and {max(1, len(lines))} (got {first})")
    if end_line is not None and end_line < first:
        raise ValidationError("end_line", f"must be >= start_line ({first}) (got {end_line})")
    return DocumentText(
        document_id=found.file_path,
        project=project.name,
        project_id=project.id,
        start_line=first,
        end_line=max(last, first - 1),
        total_lines=len(lines),
        text="".join(lines[first - 1 : last]),
    )
