"""Durable tasks (``tasks``): the single writer's queue survives restarts."""

from __future__ import annotations

import dataclasses
from typing import Any

import pyarrow as pa

from indexer.errors import NotFoundError
from indexer.limits import quote as quote_value
from indexer.models import FINISHED_STATUSES, Task
from indexer.store._lance._db import Db
from indexer.store._rows import rows, to_row
from indexer.store._schema import TASKS, tasks_schema
from indexer.store._sql import and_all, equals, in_list

__all__ = ["Tasks"]


def _to_task(row: dict[str, Any]) -> Task:
    values: dict[str, Any] = {f.name: row.get(f.name) for f in dataclasses.fields(Task)}
    values["paths"] = tuple(values["paths"] or ())
    values["errors"] = tuple(values["errors"] or ())
    for name in ("files_total", "files_done", "chunks_done", "chunks_total", "chunks_embedded"):
        values[name] = int(values[name] or 0)
    values["full"] = bool(values["full"])
    values["message"] = values["message"] or ""
    return Task(**values)


class Tasks:
    """Create, update and list tasks."""

    def __init__(self, db: Db) -> None:
        self._db = db

    def save(self, task: Task) -> Task:
        """Insert or update a task row."""
        table = pa.Table.from_pylist([to_row(task)], schema=tasks_schema())
        with self._db.write_lock:
            self._db.table(TASKS).merge_insert(
                "id"
            ).when_matched_update_all().when_not_matched_insert_all().execute(table)
        return task

    def get(self, task_id: str) -> Task:
        """A task by id; NotFoundError otherwise."""
        found = rows(self._db.select(TASKS, in_list("id", [task_id]), limit=1))
        if not found:
            raise NotFoundError(f"no task {quote_value(task_id)}")
        return _to_task(found[0])

    def all(
        self, project_id: str | None = None, statuses: tuple[str, ...] = (), limit: int | None = None
    ) -> list[Task]:
        """Tasks, newest first, optionally of one project and in some states."""
        where = and_all([equals("project_id", project_id), in_list("status", statuses) if statuses else None])
        tasks = [_to_task(r) for r in rows(self._db.select(TASKS, where))]
        tasks.sort(key=lambda t: (t.created_at is not None, t.created_at), reverse=True)
        return tasks[:limit] if limit else tasks

    def prune(self, keep: int) -> int:
        """Drop finished tasks (done, failed, cancelled) but the ``keep`` newest; returns how
        many went. A watcher queues a task per save: unpruned, every queue read grows."""
        finished = in_list("status", FINISHED_STATUSES)
        found = rows(self._db.select(TASKS, finished, ["id", "finished_at", "created_at"]))
        if len(found) <= keep:
            return 0
        stamps = [(r["finished_at"] or r["created_at"], r["id"]) for r in found]
        stamps.sort(key=lambda s: s[0].timestamp() if s[0] is not None else 0.0, reverse=True)
        old = [task_id for _, task_id in stamps[keep:]]
        with self._db.write_lock:
            for start in range(0, len(old), 500):
                self._db.table(TASKS).delete(in_list("id", old[start : start + 500]))
        return len(old)
