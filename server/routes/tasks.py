"""Tasks of the single writer: list, read, cancel."""

from __future__ import annotations

from typing import Annotated

from litestar import delete, get
from litestar.di import Provide
from litestar.params import FromPath, QueryParameter

from server import examples
from server.convert import to_task
from server.routes._common import Ctx, blocking, get_ctx, ok
from server.schemas import TaskOut

__all__ = ["task_routes"]

_deps = {"ctx": Provide(get_ctx, sync_to_thread=False)}
_TAGS = ["tasks"]


@get(
    "/api/v1/tasks",
    dependencies=_deps,
    tags=_TAGS,
    summary="Recent tasks",
    operation_id="list_tasks",
    responses=ok(list[TaskOut], "One running task", [examples.TASK]),
)
@blocking
def list_tasks(
    ctx: Ctx,
    project: Annotated[
        str | None, QueryParameter(description="Only tasks of this project id or name")
    ] = None,
    limit: Annotated[int, QueryParameter(ge=1, le=1000, description="At most this many, newest first")] = 100,
) -> list[TaskOut]:
    """Tasks newest first, live ones with current progress."""
    project_id = ctx.lode.store.projects.get(project).id if project else None
    return [to_task(t, ctx.worker.rate(t.id)) for t in ctx.worker.list(project_id, limit=limit)]


@get(
    "/api/v1/tasks/{task_id:str}",
    dependencies=_deps,
    tags=_TAGS,
    summary="One task",
    operation_id="get_task",
    responses=ok(TaskOut, "Embedding", examples.TASK),
)
@blocking
def get_task(ctx: Ctx, task_id: FromPath[str]) -> TaskOut:
    """A task: status, phase, counts, percent, ETA and errors."""
    return to_task(ctx.worker.get(task_id), ctx.worker.rate(task_id))


@delete(
    "/api/v1/tasks/{task_id:str}",
    dependencies=_deps,
    tags=_TAGS,
    status_code=200,
    summary="Cancel a task",
    operation_id="cancel_task",
    responses=ok(TaskOut, "Cancelled", examples.TASK),
)
@blocking
def cancel_task(ctx: Ctx, task_id: FromPath[str]) -> TaskOut:
    """Cancel a queued or running task (a running one stops after its current batch)."""
    ctx.require_writer()
    return to_task(ctx.worker.cancel(task_id))


task_routes = [list_tasks, get_task, cancel_task]
