"""Talking to a running ``lode serve``: the CLI sends writes and searches through it, so
the server stays the single writer and its loaded model answers at once.

Plain ``http.client``: the CLI pays for a request, not for importing an HTTP library
(``lode search`` through a server is meant to answer in a few hundred milliseconds)."""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Callable
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import msgspec

from indexer.config import LodeConfig
from indexer.discovery import ServerRecord, read_server_record
from indexer.errors import (
    ConflictError,
    FieldError,
    LodeError,
    NotFoundError,
    ServerUnavailableError,
    StoreError,
    UnauthorizedError,
    ValidationError,
)
from indexer.search import ENGINE_ONLY, SearchOptions, SearchResponse
from indexer.writer import find_writer

__all__ = ["RemoteLode", "error_from_answer", "find_server", "search_response"]

#: How long a server that is there but slow gets to answer before the caller gives up.
_PATIENT_SECONDS = 5.0


def _base_url(config: LodeConfig) -> str:
    host = config.server.host
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{config.server.port}"


def _token_for(config: LodeConfig, url: str, record: ServerRecord | None) -> str | None:
    """The bearer token to send to the server at ``url``: the configured key (``--api-key``,
    ``LODE_API_KEY``), else the per-user token the discovery file names for that server."""
    if config.server.api_key:
        return config.server.api_key
    if record is not None and record.url.rstrip("/") == url.rstrip("/"):
        return record.token()
    return None


def _discovered(
    config: LodeConfig, record: ServerRecord | None, same_db: bool, timeout: float
) -> RemoteLode | None:
    """The server the discovery file names, when it answers ``/health`` (with ``same_db``:
    only when it serves ``config.db``)."""
    if record is None or (same_db and not _same_index(record.db, config.db)):
        return None
    health = _health(record.url, timeout)
    if not isinstance(health, dict) or "worker_alive" not in health:
        return None
    remote = RemoteLode(record.url, _token_for(config, record.url, record), timeout=60.0)
    remote.health = health
    return remote


def find_server(config: LodeConfig, timeout: float = 0.3, same_db: bool = False) -> RemoteLode | None:
    """The lode server at ``config.server.url`` (``LODE_URL``) when it is set; else the
    lode server writing ``config.db`` (found through the index's writer lock, on any
    port), else the one the discovery file names (``indexer.discovery``), else the one
    listening on the configured address if one answers ``/health`` (with ``same_db``: only
    if it serves ``config.db``, the index the caller chose). Its token is the configured
    key, else the one the discovery file names for it.

    None only when nothing listens there (or what listens is not lode): a lode server that
    is slow to answer, or will not say which index it serves, raises instead of being
    taken for none, since the caller would then write beside it."""
    record = read_server_record(config)
    if config.server.url:  # LODE_URL: that server or none
        return _answering(config, config.server.url.rstrip("/"), record, same_db, timeout)
    writer = find_writer(config)
    if writer is not None and writer.url:  # the server writing this index, whatever its port
        remote = RemoteLode(writer.url, _token_for(config, writer.url, record), timeout=timeout)
        health = _health(remote.base_url, timeout)
        if isinstance(health, dict) and "worker_alive" in health:
            remote.health = health
            remote.timeout = 60.0
            return remote
        raise ServerUnavailableError(
            f"{writer.describe()} holds the index {config.db} but does not answer at {writer.url}"
        )
    discovered = _discovered(config, record, same_db, timeout)
    if discovered is not None:
        return discovered
    return _answering(config, _base_url(config), record, same_db, timeout)


def _answering(
    config: LodeConfig, base: str, record: ServerRecord | None, same_db: bool, timeout: float
) -> RemoteLode | None:
    """The lode server at ``base`` when one answers ``/health`` (with ``same_db``: only if
    it serves ``config.db``)."""
    remote = RemoteLode(base, _token_for(config, base, record), timeout=timeout)
    health = _health(remote.base_url, timeout)  # a degraded server's 503 has the same body
    if not isinstance(health, dict) or "worker_alive" not in health:
        return None
    remote.health = health
    if same_db:
        remote.timeout = _PATIENT_SECONDS
        try:
            served = remote.get("/api/v1/status").get("db", "")
        except UnauthorizedError:
            # lode answers but will not say which index it writes: never guess "another one"
            # (a second writer beside it); the caller needs its key
            raise UnauthorizedError(
                f"a lode server at {remote.base_url} refused the API key, so whether it serves "
                f"{config.db} is unknown: set LODE_API_KEY to its key (or stop it; a server of "
                "another user of this machine keeps its token to itself)"
            ) from None
        except LodeError as exc:
            raise ServerUnavailableError(
                f"the lode server at {remote.base_url} did not say which index it serves ({exc})"
            ) from None
        if not _same_index(served, config.db):
            return None
    remote.timeout = 60.0
    return remote


def _same_index(served: str, db: Path | str) -> bool:
    """Whether the index a server says it serves is ``db`` (a folder, or a URI)."""
    if isinstance(db, str):
        return served.rstrip("/") == db.rstrip("/")
    return "://" not in served and Path(served).resolve() == db.resolve()


def _exchange(
    method: str, url: str, body: Any = None, headers: dict[str, str] | None = None, timeout: float = 60.0
) -> tuple[int, str, bytes]:
    """One HTTP request: (status, reason, body). Raises TimeoutError when the server takes
    longer than ``timeout``, OSError or HTTPException when it cannot be reached."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)
    payload = None if body is None else json.dumps(body).encode()
    sent = {"Accept": "application/json", **(headers or {})}
    if payload is not None:
        sent["Content-Type"] = "application/json"
    try:
        connection.request(method, parts.path + (f"?{parts.query}" if parts.query else ""), payload, sent)
        response = connection.getresponse()
        return response.status, response.reason, response.read()
    finally:
        connection.close()


def _health(base_url: str, timeout: float) -> Any:
    """The body ``/health`` answers; None when nothing listens there (or it is not JSON).
    Something that accepts but stays silent is asked again, patiently, then raises."""
    for wait in (timeout, _PATIENT_SECONDS):
        try:
            return json.loads(_exchange("GET", base_url + "/health", timeout=wait)[2])
        except TimeoutError:  # something listens but is busy
            continue
        except (OSError, http.client.HTTPException, ValueError):
            return None
    raise ServerUnavailableError(
        f"something at {base_url} accepts connections but did not answer /health within "
        f"{_PATIENT_SECONDS:.0f} s: a busy lode server? (stop it, or use another port)"
    )


class RemoteLode:
    """A thin JSON client of lode's HTTP API (errors come back as lode's own errors)."""

    def __init__(self, base_url: str, api_key: str | None = None, timeout: float = 60.0) -> None:
        self.base_url = base_url
        self.api_key = api_key
        self.timeout = timeout
        self.health: dict[str, Any] = {}
        """What the server's ``/health`` said when it was found."""

    @property
    def writer_alive(self) -> bool:
        """False when the server said its index writer stopped (it is degraded); a reader
        (``lode serve --read-only``) has none and answers a write with a 409 naming it."""
        return bool(self.health.get("worker_alive", True)) or self.health.get("role") == "reader"

    def _request(self, method: str, path: str, body: Any = None) -> Any:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            status, reason, content = _exchange(method, self.base_url + path, body, headers, self.timeout)
        except (OSError, http.client.HTTPException) as exc:
            raise ServerUnavailableError(f"lode server at {self.base_url} did not answer: {exc!r}") from exc
        if status >= 400:
            _raise(self.base_url, status, reason, content)
        return json.loads(content) if content else None

    def get(self, path: str) -> Any:
        """GET a JSON resource."""
        return self._request("GET", path)

    def post(self, path: str, body: Any) -> Any:
        """POST JSON, return the JSON answer."""
        return self._request("POST", path, body)

    def index(
        self,
        path: str,
        name: str | None,
        full: bool,
        progress: Callable[[dict[str, Any]], None] | None = None,
        force: bool = False,
    ) -> dict[str, Any]:
        """Register (or find) the folder on the server, queue its index and wait for the task."""
        body: dict[str, Any] = {
            "path": path,
            **({"name": name} if name else {}),
            **({"force": True} if force else {}),
        }
        created = self.post("/api/v1/projects", body)
        project_id = created["project"]["id"]
        task_id = created["task_id"]
        if full:
            task_id = self.post(f"/api/v1/projects/{project_id}/index", {"full": True})["id"]
        started = time.monotonic()
        while True:
            task = self.get(f"/api/v1/tasks/{task_id}")
            if progress is not None:
                progress(task)
            if task["status"] not in ("queued", "running"):
                break
            time.sleep(0.25)
        return {
            "via": "server",
            "project_id": project_id,
            "task": task,
            "seconds": round(time.monotonic() - started, 3),
        }

    def search(self, options: SearchOptions) -> SearchResponse:
        """Run a search on the server."""
        body = asdict(options)
        body["scope_depth"] = list(options.scope_depth) if options.scope_depth else None
        unset = {f.name: f.default for f in fields(SearchOptions) if f.name in ENGINE_ONLY}
        for name, value in unset.items():  # not fields of the route: sent only when set (a 400)
            if body[name] == value:
                del body[name]
        return search_response(self.post("/api/v1/search", body))


def _raise(base_url: str, status: int, reason: str, content: bytes) -> None:
    raise error_from_answer(status, content, reason, base_url)


def error_from_answer(status: int, content: bytes, reason: str = "", base_url: str = "") -> LodeError:
    """The lode error an HTTP answer in lode's error shape stands for (the inverse of the
    server's error mapping): a 400 names its fields, a 404 its field, a 409 the conflict, a
    503 the store's failure."""
    try:
        body = json.loads(content)
    except ValueError:
        body = None
    if not isinstance(body, dict):
        body = {"detail": content.decode("utf-8", "replace")}
    detail = str(body.get("detail", reason))
    extra = body.get("extra")
    named = extra[0].get("key") if isinstance(extra, list) and extra and isinstance(extra[0], dict) else None
    if status == 400 and isinstance(extra, list) and extra:
        errors = [
            FieldError(str(e.get("key", "request")), str(e.get("message", detail)))
            for e in extra
            if isinstance(e, dict)
        ] or [FieldError("request", detail)]
        first, *more = errors
        return ValidationError(first.field, first.message, more=tuple(more))
    if status == 404:
        return NotFoundError(detail, str(named) if named else None)
    if status == 401:
        return UnauthorizedError(f"lode server at {base_url.removeprefix('http://')}: {detail}")
    if status == 409:
        return ConflictError(detail, str(named) if named and named != "request" else None)
    if status == 503:
        return StoreError(detail)
    return LodeError(f"server answered {status}: {detail}")


def search_response(content: bytes | dict[str, Any]) -> SearchResponse:
    """A search's JSON answer (``SearchResponseOut``'s shape) as the engine's response."""
    data = json.loads(content) if isinstance(content, bytes) else content
    return msgspec.convert(data, SearchResponse)
