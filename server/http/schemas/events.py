"""HTTP types of the event stream (``GET /api/v1/events``): the data of each event."""

from __future__ import annotations

from typing import Annotated

import msgspec

from server.http.schemas._fields import describe as _d

__all__ = ["CoverageEventOut", "FilesEventOut", "HelloEventOut", "LaggedEventOut", "VersionEventOut"]


class HelloEventOut(msgspec.Struct):
    """The first event of a stream: what this server streams."""

    read_only: Annotated[bool, _d("True on a reader (lode serve --read-only): it has no writer")]
    kinds: Annotated[
        list[str],
        _d(
            "The event kinds this server sends: task, files, coverage and version from the writer; "
            "version alone from a reader (follow the writer's stream for the rest)"
        ),
    ]
    project_id: Annotated[str | None, _d("The project the stream is limited to (null: every project)")]
    version: Annotated[int | None, _d("The chunk table version answered from now (null until known)")]


class FilesEventOut(msgspec.Struct):
    """Files of a project were re-indexed: written (searchable now) or removed."""

    project_id: Annotated[str, _d("Project id")]
    paths: Annotated[list[str], _d("Project-relative paths written or removed by one write")]


class CoverageEventOut(msgspec.Struct):
    """A project's share of chunks with a vector changed."""

    project_id: Annotated[str, _d("Project id")]
    chunks_total: Annotated[int, _d("Chunks of the project")]
    chunks_embedded: Annotated[int, _d("Chunks of the project with a vector")]
    semantic_coverage: Annotated[float, _d("Their share, 0-1")]


class VersionEventOut(msgspec.Struct):
    """The index this server answers from has a new version."""

    version: Annotated[int, _d("The chunk table version answered from now")]


class LaggedEventOut(msgspec.Struct):
    """Events were dropped: the client read too slowly; re-read what it shows."""

    dropped: Annotated[int, _d("How many events were dropped")]
