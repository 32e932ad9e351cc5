"""Projects: registered folders (``projects``)."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pyarrow as pa

from indexer.errors import ConflictError, NotFoundError
from indexer.limits import quote as quote_value
from indexer.models import Project
from indexer.store._lance._db import Db
from indexer.store._rows import now, rows, to_row
from indexer.store._schema import (
    CHUNKS,
    DOCUMENTS,
    FILE_ERRORS,
    INTENTS,
    PROJECTS,
    SYMBOLS,
    TASKS,
    projects_schema,
)
from indexer.store._sql import in_list, quote

__all__ = ["Projects"]


def _to_project(row: dict[str, Any]) -> Project:
    values = {f.name: row[f.name] for f in dataclasses.fields(Project)}
    return Project(
        **{**values, "include": tuple(row["include"] or ()), "exclude": tuple(row["exclude"] or ())}
    )


class Projects:
    """Create, read, update and delete projects."""

    def __init__(self, db: Db) -> None:
        self._db = db

    def all(self) -> list[Project]:
        """Every project, by name (cached for a second; this process's changes show at once)."""
        cached = self._db.cache.get("projects")
        if cached is not None:
            return list(cached)
        table = self._db.table(PROJECTS).to_arrow()
        projects = sorted((_to_project(r) for r in rows(table)), key=lambda p: (p.name, p.id))
        self._db.cache.put("projects", projects)
        return list(projects)

    def get(self, ref: str) -> Project:
        """The project with this id or name; NotFoundError otherwise."""
        for project in self.all():
            if ref in (project.id, project.name):
                return project
        raise NotFoundError(f"no project {quote_value(ref)}")

    def find_by_root(self, root: str) -> Project | None:
        """The project registered for this absolute folder, if any."""
        for project in self.all():
            if project.root == root:
                return project
        return None

    def add(self, name: str, root: str, include: Sequence[str] = (), exclude: Sequence[str] = ()) -> Project:
        """Register a folder; names and roots are unique."""
        with self._db.write_lock:
            for other in self.all():
                if other.name == name:
                    raise ConflictError(
                        f"a project named {quote_value(name)} already exists (root {other.root})", "name"
                    )
                if other.root == root:
                    raise ConflictError(f"{root} is already registered as project {other.name!r}", "path")
            stamp = now()
            project = Project(
                id=str(uuid.uuid4()),
                name=name,
                root=root,
                include=tuple(include),
                exclude=tuple(exclude),
                created_at=stamp,
                updated_at=stamp,
            )
            self._db.table(PROJECTS).add(pa.Table.from_pylist([to_row(project)], schema=projects_schema()))
            self._db.cache.clear()
            return project

    def save(self, project: Project) -> Project:
        """Write a changed project (name, globs, timestamps) back."""
        with self._db.write_lock:
            for other in self.all():
                if other.id != project.id and other.name == project.name:
                    raise ConflictError(f"a project named {quote_value(project.name)} already exists", "name")
            table = pa.Table.from_pylist([to_row(project)], schema=projects_schema())
            self._db.table(PROJECTS).merge_insert("id").when_matched_update_all().execute(table)
            self._db.cache.clear()
            return project

    def mark_indexed(self, project_id: str, stamp: datetime) -> None:
        """Stamp a project's last index (only its timestamps: a rename or new globs saved
        while the run went on stay)."""
        with self._db.write_lock:
            where = f"id = {quote(project_id)}"
            self._db.table(PROJECTS).update(
                where=where, values={"last_indexed_at": stamp, "updated_at": stamp}
            )
            self._db.cache.clear()

    def delete(self, project_id: str) -> None:
        """Remove a project and every index row it owns (never its source files)."""
        with self._db.write_unit(), self._db.write_lock:
            where = f"project_id = {quote(project_id)}"
            for name in (CHUNKS, SYMBOLS, DOCUMENTS, FILE_ERRORS, INTENTS):
                self._db.table(name).delete(where)
            # its delete tasks stay (a retried DELETE waits on its own), pruned like any other
            self._db.table(TASKS).delete(f"{where} AND kind != 'delete'")
            self._db.table(PROJECTS).delete(in_list("id", [project_id]))
            self._db.cache.clear()
