"""Where a file is: one reading of a path argument everywhere, and a file's ``file://`` URI.

A path argument may be relative to its project's root (``src/app.py``, as hits give it),
absolute inside a project's root (``/home/me/shop/src/app.py``), or a ``file://`` URI
(``file:///home/me/shop/src/app.py``, as editors give it). An absolute path or URI names
its project by its root (the innermost root holding it, symlinks resolved when the path as
written is in none); one outside every root is a PathError naming the field. No ``..``
segment is taken in any form, and nothing is read from disk.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote as url_quote
from urllib.parse import unquote, urlsplit

from indexer.errors import PathError
from indexer.limits import MAX_PATHS, MAX_TEXT_CHARS, quote, text_problem
from indexer.models import Project

__all__ = ["Located", "file_uri", "locate_path", "project_paths"]

_SCHEME = re.compile(r"^(?:file:|[A-Za-z][A-Za-z0-9+.-]*://)", re.IGNORECASE)
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


@dataclass(frozen=True, slots=True)
class Located:
    """A path argument read: its project (None for a relative path, which names none) and
    the path relative to that project's root."""

    project: Project | None
    path: str


def file_uri(root: str, file_path: str) -> str:
    """The ``file://`` URI of ``file_path`` (relative to ``root``, an absolute folder)."""
    return "file://" + url_quote(posixpath.join(root, file_path), safe="/")


def _from_uri(value: str, field: str) -> str:
    """The absolute path a ``file://`` URI names."""
    parts = urlsplit(value)
    if parts.scheme.lower() != "file":
        raise PathError(field, f"{quote(value)} is a {parts.scheme}: URI; give a path or a file:// URI")
    if parts.netloc not in ("", "localhost"):
        raise PathError(field, f"{quote(value)} names host {quote(parts.netloc)}; only local file:// URIs")
    if parts.query or parts.fragment or value.rstrip().endswith(("?", "#")):
        raise PathError(field, f"{quote(value)} has a query or fragment (write # as %23, ? as %3F)")
    path = unquote(parts.path)
    if not path.startswith("/") or "\x00" in path:
        raise PathError(field, f"{quote(value)} does not name an absolute path")
    return path


def _relative(value: str, field: str) -> str:
    """A clean relative POSIX path (``./`` and repeated slashes dropped), or a PathError."""
    segments = [s for s in value.replace("\\", "/").split("/") if s not in ("", ".")]
    if ".." in segments:
        raise PathError(field, f"{quote(value)} must not contain a '..' segment")
    if not segments:
        raise PathError(field, f"{quote(value)} names a project root, not a file")
    return "/".join(segments)


def _inside(root: str, path: str) -> str | None:
    """``path`` relative to ``root`` when it lies below it (both absolute and normalised)."""
    if path == root:
        return ""
    prefix = root if root.endswith("/") else root + "/"
    return path[len(prefix) :] if path.startswith(prefix) else None


def _innermost(projects: Sequence[Project], path: str) -> tuple[Project, str] | None:
    """The project with the innermost root holding ``path``, and the path relative to it."""
    best: tuple[Project, str] | None = None
    for project in projects:
        rel = _inside(posixpath.normpath(project.root), path)
        if rel is not None and (best is None or len(project.root) > len(best[0].root)):
            best = (project, rel)
    return best


def locate_path(
    value: str, projects: Sequence[Project], field: str = "path", project: Project | None = None
) -> Located:
    """Read a path argument (relative, absolute inside a project's root, or a ``file://``
    URI) against ``projects`` (only ``project`` when one is given): its project and its
    project-relative path; a PathError naming ``field`` when it is none of those."""
    problem = text_problem(value, MAX_TEXT_CHARS)
    if problem is not None:
        raise PathError(field, problem)
    text = value.strip()
    if _SCHEME.match(text):
        text = _from_uri(text, field)
    elif _DRIVE.match(text) or text.startswith("\\"):
        raise PathError(field, f"{quote(value)} is not a path of this machine")
    if not text.startswith("/"):
        return Located(project, _relative(text, field))
    if ".." in text.split("/"):
        raise PathError(field, f"{quote(value)} must not contain a '..' segment")
    candidates = [project] if project is not None else list(projects)
    lexical = posixpath.normpath(text)
    found = _innermost(candidates, lexical) or _innermost(candidates, os.path.realpath(lexical))
    if found is None:
        where = f"project {quote(project.name)}'s root" if project is not None else "every project's root"
        raise PathError(field, f"{quote(value)} is outside {where}")
    if not found[1]:
        raise PathError(field, f"{quote(value)} is a project's root, not a file")
    return Located(found[0], _relative(found[1], field))


def project_paths(values: Sequence[str], project: Project, field: str = "paths") -> tuple[str, ...]:
    """Files or folders of ``project`` (each relative to its root, absolute inside it, or a
    ``file://`` URI) as paths relative to its root; a PathError naming ``field`` otherwise."""
    if len(values) > MAX_PATHS:
        raise PathError(field, f"must hold at most {MAX_PATHS} paths (got {len(values)})")
    return tuple(locate_path(value, [project], field, project).path for value in values)
