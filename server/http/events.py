"""``GET /api/v1/events``: server-sent events of the writer's tasks and the index's changes,
so a client follows an index run (or an editor its project) without polling."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from typing import Annotated, Any

import anyio.to_thread
from litestar import Controller, get
from litestar.openapi import ResponseSpec
from litestar.params import HeaderParameter, QueryParameter
from litestar.response import ServerSentEvent, ServerSentEventMessage
from litestar.serialization import encode_json

from indexer.errors import ValidationError
from indexer.events import EVENT_KINDS, EventHub, IndexEvent
from indexer.models import Task
from server.context import ServerContext
from server.convert import to_task
from server.http._common import Ctx, error_responses, example
from server.http.schemas.events import (
    CoverageEventOut,
    FilesEventOut,
    HelloEventOut,
    LaggedEventOut,
    VersionEventOut,
)

__all__ = ["EventController"]

#: Events a slow client may fall behind by before they are dropped (it is told: ``lagged``).
QUEUE_EVENTS = 1000
#: Seconds between keep-alive comments while nothing happens.
KEEP_ALIVE_SECONDS = 15.0
#: Live tasks sent when a stream opens (where each run is now).
_SNAPSHOT_TASKS = 50

_EXAMPLE = (
    'event: hello\ndata: {"read_only":false,"kinds":["task","files","coverage","version"],'
    '"project_id":null,"version":12}\n\n'
    'event: task\ndata: {"id":"0190…","status":"running","phase":"embed","percent":46.0,…}\n\n'
    'event: files\ndata: {"project_id":"6f1c…","paths":["src/app.py"]}\n\n'
    'event: coverage\ndata: {"project_id":"6f1c…","chunks_total":5120,"chunks_embedded":2400,'
    '"semantic_coverage":0.4688}\n\n'
)


class EventController(Controller):
    """Server-sent events."""

    path = "/api/v1/events"
    tags = ("events",)

    @get(
        summary="Follow tasks and index changes (server-sent events)",
        operation_id="stream_events",
        description=(
            "A `text/event-stream` that stays open; each event's data is JSON. First `hello` "
            "({read_only, kinds, project_id, version}: what this server streams), then a `task` "
            "event for each live task, then as they happen: `task` (a TaskOut) when a task is "
            "queued, moves (at most 4 a second) or ends; `files` ({project_id, paths}) when files "
            "of a project were written or removed; `coverage` ({project_id, chunks_total, "
            "chunks_embedded, semantic_coverage}) when a project's share of chunks with a vector "
            "changed; `version` ({version}) when the index answered from has a new version; "
            "`lagged` ({dropped}) when a slow client missed events. Each event after `hello` "
            "has an `id`: a client that reconnects with the standard `Last-Event-ID` header gets "
            "the events it missed first (the last 1,000 are kept; `lagged` says how many more "
            "were lost, e.g. across a server restart). A reader (lode serve --read-only) sends "
            "`version` events only. A comment line keeps an idle stream alive."
        ),
        responses={
            200: ResponseSpec(
                data_container=str,
                media_type="text/event-stream",
                description="The event stream",
                examples=example("An index run", _EXAMPLE),
                generate_examples=False,
            ),
            **error_responses(400, 404, 503),
        },
    )
    async def stream_events(
        self,
        ctx: Ctx,
        project: Annotated[
            str | None, QueryParameter(description="Only events of this project id or name (and version)")
        ] = None,
        last_event_id: Annotated[
            str | None,
            HeaderParameter(
                name="Last-Event-ID",
                description="The id of the last event a reconnecting client received (as "
                "sent, e.g. a1b2c3d4-17): the events after it are sent first",
                max_length=100,
            ),
        ] = None,
    ) -> ServerSentEvent:
        """Tasks' progress and the index's changes as they happen."""
        after = _after(ctx.events, last_event_id)
        project_id = None
        if project:
            project_id = (await anyio.to_thread.run_sync(ctx.lode.store.projects.get, project)).id
        return ServerSentEvent(_stream(ctx, project_id, after))


def _after(hub: EventHub, last_event_id: str | None) -> int | None:
    """The event number a reconnecting client had (0: none of this server run's), or None."""
    if last_event_id is None:
        return None
    run, _, number = last_event_id.strip().partition("-")
    if not number.isdigit() or not run:
        raise ValidationError("Last-Event-ID", "must be an event id this server sent, like a1b2c3d4-17")
    return int(number) if run == hub.run else 0


async def _stream(
    ctx: ServerContext, project_id: str | None, after: int | None
) -> AsyncIterator[ServerSentEventMessage]:
    """The events of one client: hello, the live tasks, then each event as it comes."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[IndexEvent] = asyncio.Queue(maxsize=QUEUE_EVENTS)
    dropped = [0]

    def put(event: IndexEvent) -> None:
        if queue.full():
            dropped[0] += 1
        else:
            queue.put_nowait(event)

    def wanted(event: IndexEvent) -> bool:
        return project_id is None or event.project_id in (None, project_id)

    def listener(event: IndexEvent) -> None:  # on the publishing thread
        if wanted(event):
            loop.call_soon_threadsafe(put, event)

    # before the snapshot: nothing falls between
    missed, lost, unsubscribe = ctx.events.subscribe_after(sys.maxsize if after is None else after, listener)
    try:
        yield _hello(ctx, project_id)
        for message in _replay(ctx, [e for e in missed if wanted(e)], lost):
            yield message
        for task in await anyio.to_thread.run_sync(_live_tasks, ctx, project_id):
            yield _message("task", to_task(task, ctx.worker.rate(task.id)))
        while True:
            try:
                event = await asyncio.wait_for(queue.get(), KEEP_ALIVE_SECONDS)
            except TimeoutError:
                yield ServerSentEventMessage(data=None, comment="keep-alive")
                continue
            if dropped[0]:
                yield _message("lagged", LaggedEventOut(dropped=dropped[0]))
                dropped[0] = 0
            yield _event_message(ctx, event)
    finally:
        unsubscribe()


def _replay(ctx: ServerContext, missed: list[IndexEvent], lost: int) -> list[ServerSentEventMessage]:
    """What a reconnecting client missed: how many were lost, then the kept ones in order."""
    lagged = [_message("lagged", LaggedEventOut(dropped=lost))] if lost else []
    return lagged + [_event_message(ctx, event) for event in missed]


def _hello(ctx: ServerContext, project_id: str | None) -> ServerSentEventMessage:
    kinds = ["version"] if ctx.read_only else list(EVENT_KINDS)
    version = ctx.versions.version if ctx.versions is not None else None
    hello = HelloEventOut(read_only=ctx.read_only, kinds=kinds, project_id=project_id, version=version)
    return _message("hello", hello)


def _live_tasks(ctx: ServerContext, project_id: str | None) -> list[Task]:
    """The project's (or every project's) live tasks, oldest first."""
    return [t for t in reversed(ctx.worker.list(project_id, limit=_SNAPSHOT_TASKS)) if t.live]


def _event_message(ctx: ServerContext, event: IndexEvent) -> ServerSentEventMessage:
    """An event as sent, with its id."""
    ident = f"{ctx.events.run}-{event.id}"
    if event.kind == "task" and event.task is not None:
        return _message("task", to_task(event.task, event.rate), ident)
    if event.kind == "files" and event.project_id is not None:
        files = FilesEventOut(project_id=event.project_id, paths=list(event.paths))
        return _message("files", files, ident)
    if event.kind == "coverage" and event.project_id is not None:
        coverage = CoverageEventOut(
            project_id=event.project_id,
            chunks_total=event.chunks_total,
            chunks_embedded=event.chunks_embedded,
            semantic_coverage=event.semantic_coverage,
        )
        return _message("coverage", coverage, ident)
    return _message("version", VersionEventOut(version=event.version or 0), ident)


def _message(kind: str, data: Any, ident: str | None = None) -> ServerSentEventMessage:
    return ServerSentEventMessage(event=kind, data=encode_json(data).decode(), id=ident)
