"""Outlines kept current: one per project, rebuilt when the index version changes.

Every write to the index (a pipeline run, a watcher batch) changes ``store.index_version()``;
the next request then rebuilds the project's outline, re-reading chunks only of files
whose content hash changed (the other file subtrees are reused as they are).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from indexer.models import Project
from indexer.outline._gc import paused_gc
from indexer.outline._model import OutlineNode
from indexer.outline._outline import Outline
from indexer.outline._tree import assemble
from indexer.outline._units import build_file
from indexer.store import Store

__all__ = ["OutlineCache"]

#: Projects whose outlines are kept at once.
MAX_PROJECTS = 16


@dataclass(frozen=True, slots=True)
class _File:
    """A built file subtree and the document version it was built from."""

    document_id: str
    content_hash: str
    chunk_count: int
    node: OutlineNode


@dataclass(frozen=True, slots=True)
class _Entry:
    store: Store
    version: int
    outline: Outline
    files: dict[str, _File]


class OutlineCache:
    """The current outline of each project (thread-safe; one build at a time)."""

    def __init__(self) -> None:
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, store: Store, project_ref: str) -> Outline:
        """The outline of a project (by id or name) at the store's current index version."""
        project = store.projects.get(project_ref)
        version = store.index_version()
        entry = self._fresh(store, project, version)
        if entry is not None:
            return entry.outline
        with self._lock:
            entry = self._fresh(store, project, version)
            if entry is None:
                previous = self._entries.get(project.id)
                reusable = previous if previous is not None and previous.store is store else None
                entry = _build(store, project, version, reusable)
                self._entries[project.id] = entry
            self._entries.move_to_end(project.id)
            while len(self._entries) > MAX_PROJECTS:
                self._entries.popitem(last=False)
            return entry.outline

    def _fresh(self, store: Store, project: Project, version: int) -> _Entry | None:
        entry = self._entries.get(project.id)
        if entry is None or entry.store is not store or entry.version != version:
            return None
        return entry if entry.outline.project == project.name else None

    def clear(self) -> None:
        """Forget every outline."""
        with self._lock:
            self._entries.clear()


def _build(store: Store, project: Project, version: int, previous: _Entry | None) -> _Entry:
    states = store.documents.states(project.id)
    files: dict[str, _File] = {}
    stale = []
    for path, state in states.items():
        old = previous.files.get(path) if previous is not None else None
        if old is not None and (old.document_id, old.content_hash, old.chunk_count) == (
            state.id, state.content_hash, state.chunk_count
        ):  # fmt: skip
            files[path] = old
        else:
            stale.append(state)
    chunks = store.chunks.by_file([s.id for s in stale])
    with paused_gc():
        for state in stale:
            node = build_file(state.file_path, chunks.pop(state.id, []))
            files[state.file_path] = _File(state.id, state.content_hash, state.chunk_count, node)
        root, nodes = assemble(project.name, [files[p].node for p in sorted(files)])
    documents = {path: f.document_id for path, f in files.items()}
    outline = Outline(project.name, root, nodes, documents, store.documents, version)
    return _Entry(store, version, outline, files)
