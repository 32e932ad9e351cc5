"""Projects: register, list, read, change, delete, re-index, list files."""

from __future__ import annotations

import dataclasses
from typing import Annotated

from litestar import Controller, Response, delete, get, patch, post
from litestar.openapi import ResponseSpec
from litestar.params import Body, FromPath, QueryParameter

from indexer.api import check_project_fields
from indexer.errors import StoreError
from indexer.locations import project_paths
from server.convert import to_project, to_task
from server.http._common import Ctx, blocking, error_responses, example, ok
from server.http.examples import core as examples
from server.http.schemas.projects import (
    FileOut,
    FilesPage,
    IndexRequest,
    ProjectCreate,
    ProjectCreated,
    ProjectOut,
    ProjectPatch,
    TaskOut,
)

__all__ = ["ProjectController"]

#: How long DELETE waits for its task before answering 202 with it instead of 204.
DELETE_WAIT_SECONDS = 60.0


class ProjectController(Controller):
    """Registered folders: register, list, read, change, forget, re-index, list files."""

    path = "/api/v1/projects"
    tags = ("projects",)

    @post(
        status_code=201,
        summary="Register a folder and queue its full index",
        operation_id="create_project",
        responses=ok(
            ProjectCreated,
            "Registered, indexing queued",
            examples.PROJECT_CREATED,
            201,
            errors=(400, 409, 413, 503),
        ),
    )
    @blocking
    def create_project(
        self,
        ctx: Ctx,
        data: Annotated[
            ProjectCreate,
            Body(
                examples=example(
                    "A repository", {"path": "/home/me/src/shop", "name": "shop", "exclude": ["*.min.js"]}
                )
            ),
        ],
    ) -> ProjectCreated:
        """Register a readable folder as a project and queue the task that indexes it."""
        project, task = ctx.register(data.path, data.name, data.include, data.exclude, force=data.force)
        return ProjectCreated(project=to_project(ctx, project), task_id=task.id)

    @get(
        summary="List projects",
        operation_id="list_projects",
        responses=ok(
            list[ProjectOut], "One project", [examples.PROJECT], errors=(503,), description="Every project"
        ),
    )
    @blocking
    def list_projects(self, ctx: Ctx) -> list[ProjectOut]:
        """Every project with its files, chunks, last index time and current task."""
        return [to_project(ctx, p) for p in ctx.lode.store.projects.all()]

    @get(
        "/{project_id:str}",
        summary="One project",
        operation_id="get_project",
        responses=ok(ProjectOut, "A project", examples.PROJECT, errors=(404, 503)),
    )
    @blocking
    def get_project(self, ctx: Ctx, project_id: FromPath[str]) -> ProjectOut:
        """A project by id or name."""
        return to_project(ctx, ctx.lode.store.projects.get(project_id))

    @patch(
        "/{project_id:str}",
        summary="Rename or change globs",
        operation_id="patch_project",
        responses=ok(ProjectOut, "Updated", examples.PROJECT, errors=(400, 404, 409, 413, 503)),
    )
    @blocking
    def patch_project(
        self,
        ctx: Ctx,
        project_id: FromPath[str],
        data: Annotated[
            ProjectPatch, Body(examples=example("New globs", {"exclude": ["vendor/", "*.min.js"]}))
        ],
    ) -> ProjectOut:
        """Change a project's name or include/exclude globs; new globs queue a re-index."""
        ctx.require_writer()
        store = ctx.lode.store
        project = store.projects.get(project_id)
        changes: dict[str, object] = {}
        check_project_fields(data.name, data.include or (), data.exclude or ())
        if data.name is not None:
            changes["name"] = data.name
        for field in ("include", "exclude"):
            value = getattr(data, field)
            if value is not None:
                changes[field] = tuple(value)
        updated = dataclasses.replace(project, **changes)  # type: ignore[arg-type]
        store.projects.save(updated)
        if updated.include != project.include or updated.exclude != project.exclude:
            ctx.worker.submit(project.id)
            ctx.unwatch(project.id)
            ctx.watch(updated)
        return to_project(ctx, updated)

    @delete(
        "/{project_id:str}",
        status_code=204,
        summary="Forget a project",
        operation_id="delete_project",
        description=(
            "204 once the project and its index rows are gone. Deletes run before queued index "
            "work, but wait for another project's running file pass: if the delete has not "
            "finished within 60 s, the answer is 202 with its task, to poll."
        ),
        responses={
            204: ResponseSpec(
                data_container=None, description="Deleted: the project and its index rows are gone"
            ),
            202: ResponseSpec(
                data_container=TaskOut,
                description="Still queued or running: poll the task",
                examples=example("Delete still queued", examples.DELETE_TASK),
                generate_examples=False,
            ),
            **error_responses(400, 404, 409, 413, 503),
        },
    )
    @blocking
    def delete_project(self, ctx: Ctx, project_id: FromPath[str]) -> Response[None]:
        """Remove the project and every index row it owns; source files are never touched."""
        ctx.require_writer()
        project = ctx.lode.store.projects.get(project_id)
        ctx.unwatch(project.id)
        task = ctx.worker.submit(project.id, kind="delete")
        task = ctx.worker.wait(task.id, timeout=DELETE_WAIT_SECONDS)
        if task.live:
            return Response(content=to_task(task), status_code=202)  # type: ignore[arg-type]
        if task.status != "done":
            ctx.watch(project)  # still there: keep it fresh
            raise StoreError(f"deleting project {project.name!r} failed: {task.message or task.status}")
        return Response(content=None, status_code=204)

    @post(
        "/{project_id:str}/index",
        status_code=202,
        summary="Queue a (partial) re-index",
        operation_id="index_project",
        responses=ok(TaskOut, "Queued", examples.TASK, 202, errors=(400, 404, 409, 413, 503)),
    )
    @blocking
    def index_project(
        self,
        ctx: Ctx,
        project_id: FromPath[str],
        data: Annotated[
            IndexRequest,
            Body(examples=example("Two paths", {"paths": ["src/app.py", "docs/"], "full": False})),
        ],
    ) -> TaskOut:
        """Refresh some paths (files or folders) or the whole project; joins a queued task."""
        ctx.require_writer()
        project = ctx.lode.store.projects.get(project_id)
        task = ctx.worker.submit(project.id, paths=project_paths(data.paths, project), full=data.full)
        return to_task(task)

    @get(
        "/{project_id:str}/files",
        summary="Indexed files",
        operation_id="list_files",
        responses=ok(FilesPage, "First page", examples.FILES, errors=(400, 404, 503)),
    )
    @blocking
    def list_files(
        self,
        ctx: Ctx,
        project_id: FromPath[str],
        offset: Annotated[int, QueryParameter(ge=0, le=10_000_000, description="Files to skip")] = 0,
        limit: Annotated[int, QueryParameter(ge=1, le=1000, description="Files per page")] = 100,
    ) -> FilesPage:
        """A page of the project's indexed files, by path."""
        project = ctx.lode.store.projects.get(project_id)
        docs, total = ctx.lode.store.documents.page(project.id, offset, limit)
        files = [
            FileOut(id=d.id, path=d.file_path, language=d.primary_language, languages=list(d.languages),
                    chunk_count=d.chunk_count, file_size=d.file_size, indexed_at=d.indexed_at)
            for d in docs
        ]  # fmt: skip
        return FilesPage(files=files, total=total, offset=offset, limit=limit)
