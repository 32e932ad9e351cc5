"""HTTP types of the service: health, status, the store check, and every error."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from server.http.schemas._choices import HealthStatus
from server.http.schemas._fields import describe as _d
from server.http.schemas.projects import ProjectOut

__all__ = ["ErrorFieldOut", "ErrorOut", "HealthOut", "StatusOut", "StoreCheckOut", "StoreProblemOut"]


class ErrorFieldOut(msgspec.Struct):
    """What is wrong with one part of the request."""

    key: Annotated[str, _d("The field, parameter or header at fault, e.g. limit, node_types or Origin")]
    message: Annotated[str, _d("What is wrong with it")]
    source: Annotated[
        str, _d("Where it was: body, query, path, header, url, or server (the index, not the request)")
    ]


class ErrorOut(msgspec.Struct):
    """Every 4xx/5xx response."""

    status_code: Annotated[int, _d("HTTP status code")]
    detail: Annotated[str, _d("What went wrong, in one sentence")]
    extra: Annotated[
        list[ErrorFieldOut] | None, _d("The parts of the request at fault (null when none is named)")
    ] = None


class HealthOut(msgspec.Struct):
    """Liveness and readiness."""

    status: Annotated[
        HealthStatus,
        _d("ok when ready, starting while the model loads, degraded on a fault"),
    ]
    store_open: Annotated[
        bool,
        _d("True while the index folder exists (it is opened before serving; always true on object storage)"),
    ]
    model_loaded: Annotated[bool, _d("True once the embedding model is loaded")]
    worker_alive: Annotated[bool, _d("True while the index writer thread runs (never on a reader)")]
    version: Annotated[str, _d("lode version")]
    search_processes: Annotated[
        int, _d("search processes answering searches now (0: searches run in the server process)")
    ] = 0
    role: Annotated[
        Literal["writer", "reader"],
        _d("writer: this server writes the index; reader: it only reads it (lode serve --read-only)"),
    ] = "writer"
    index_version: Annotated[
        int | None,
        _d(
            "The newest version of the chunk table this server has seen: searches read it (a reader, "
            "for up to LODE_READ_CONSISTENCY_SECONDS after a newer commit, the one before); null "
            "before the first look"
        ),
    ] = None
    reason: Annotated[
        str | None,
        _d("Why the server is degraded or starting (null when ok), e.g. a storage failure and where"),
    ] = None


class StoreProblemOut(msgspec.Struct):
    """One inconsistency or damage the check found."""

    kind: Annotated[
        str,
        _d(
            "unreadable, index, duplicate, orphan, missing, stale, unembedded, hash, vector or "
            "columns; for work left to do, rechunk or reembed"
        ),
    ]
    table: Annotated[str, _d("The table it is in, e.g. code_chunks")]
    detail: Annotated[str, _d("What was seen, with an example row")]
    count: Annotated[int, _d("How many rows have it")]


class StoreCheckOut(msgspec.Struct):
    """The store verified: tables, data files, indexes and row agreement."""

    ok: Annotated[bool, _d("True when nothing is wrong")]
    problems: Annotated[list[StoreProblemOut], _d("Everything wrong (empty when ok)")]
    rows: Annotated[dict[str, int], _d("Rows read per table (-1: the table could not be read)")]
    indexes: Annotated[dict[str, str], _d("Each index and its answer to one query: ok, or the error")]
    seconds: Annotated[float, _d("How long the check took")]
    pending: Annotated[
        list[StoreProblemOut],
        _d("Work left for the index's writer, not damage: files and vectors to make again after an upgrade"),
    ] = msgspec.field(default_factory=list)


class StatusOut(msgspec.Struct):
    """The whole service at a glance."""

    version: Annotated[str, _d("lode version")]
    db: Annotated[str, _d("Index folder (database path) on the server's machine")]
    model_id: Annotated[str, _d("Embedding model id")]
    dimension: Annotated[int, _d("Length of the embedding vectors")]
    documents: Annotated[int, _d("Indexed files of every project")]
    chunks: Annotated[int, _d("Chunks of every project")]
    chunks_embedded: Annotated[int, _d("Chunks with a vector of their current text")]
    embedding_cache: Annotated[int, _d("Cached vectors, keyed by model and embedding-text hash")]
    file_errors: Annotated[int, _d("Files that failed to chunk or embed (retried on the next run)")]
    queue: Annotated[dict[str, int], _d("Tasks by status")]
    projects: Annotated[list[ProjectOut], _d("Every project with its index size")]
    worker_error: Annotated[str | None, _d("Last error of the index writer thread (null if none)")] = None
