"""Tasks of the single writer: list, read, cancel."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, delete, get
from litestar.params import FromPath, QueryParameter

from server.convert import to_task
from server.http._common import Ctx, blocking, ok
from server.http.examples import core as examples
from server.http.schemas.projects import TaskOut

__all__ = ["TaskController"]


class TaskController(Controller):
    """The writer's tasks."""

    path = "/api/v1/tasks"
    tags = ("tasks",)

    @get(
        summary="Recent tasks",
        operation_id="list_tasks",
        responses=ok(
            list[TaskOut],
            "One running task",
            [examples.TASK],
            errors=(400, 404, 503),
            description="Tasks, newest first",
        ),
    )
    @blocking
    def list_tasks(
        self,
        ctx: Ctx,
        project: Annotated[
            str | None, QueryParameter(description="Only tasks of this project id or name")
        ] = None,
        limit: Annotated[
            int, QueryParameter(ge=1, le=1000, description="At most this many, newest first")
        ] = 100,
    ) -> list[TaskOut]:
        """Tasks newest first, live ones with current progress."""
        project_id = ctx.lode.store.projects.get(project).id if project else None
        return [to_task(t, ctx.worker.rate(t.id)) for t in ctx.worker.list(project_id, limit=limit)]

    @get(
        "/{task_id:str}",
        summary="One task",
        operation_id="get_task",
        responses=ok(TaskOut, "Embedding", examples.TASK, errors=(404, 503)),
    )
    @blocking
    def get_task(self, ctx: Ctx, task_id: FromPath[str]) -> TaskOut:
        """A task: status, phase, counts, percent, ETA and errors."""
        return to_task(ctx.worker.get(task_id), ctx.worker.rate(task_id))

    @delete(
        "/{task_id:str}",
        status_code=200,
        summary="Cancel a task",
        operation_id="cancel_task",
        responses=ok(TaskOut, "Cancelled", examples.TASK, errors=(400, 404, 409, 413, 503)),
    )
    @blocking
    def cancel_task(self, ctx: Ctx, task_id: FromPath[str]) -> TaskOut:
        """Cancel a queued or running task (a running one stops after its current batch)."""
        ctx.require_writer()
        return to_task(ctx.worker.cancel(task_id))
