"""One writer per index on object storage: a lease object written with conditional puts.

An index at ``s3://bucket/prefix`` (or ``gs://``, ``az://``) has no folder to hold a
``flock`` in and is shared by processes on many machines, so its writer holds a *lease*
instead: the object ``<prefix>/writer.lease``, a JSON record of who writes (pid, host,
command, URL, like ``writer.lock``) with the time it was last renewed and how long it
lasts. Every change of the object is a conditional put (the object store's
``If-None-Match: *`` to create it, ``If-Match: <etag>`` to change it), so of two processes
that race for it exactly one wins, whatever the timing:

- **acquire**: no lease, or a released one, or one not renewed for its whole term (its
  writer crashed or was cut off), or one whose pid is dead on this very machine → put
  ours conditionally on what was read; a live lease of another process → ``WriterBusyError``
  naming it;
- **renew**: every third of the term, put the record again conditionally on our own last
  etag. A renewal that finds another etag, or that has not succeeded for a whole term,
  means another process may write now: the lease is *lost*, and the process stops at once
  (``on_lost``; by default it exits with status 75, as if killed: the index stays at its
  last commit, which is always readable);
- **release**: put a released record (conditionally), so the next writer need not wait.

Expiry compares the holder's renewal time with the reader's clock: the machines' clocks
must agree to well within the term (30 s by default; NTP keeps them within milliseconds).
A lease is only refused or taken, never waited for: a second writer is refused at once.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import asdict
from datetime import timedelta
from typing import Any

from indexer.errors import ConfigError, StoreError
from indexer.storage_failure import is_storage_failure, storage_error
from indexer.writer._info import UNKNOWN_WRITER, WriterBusyError, WriterInfo

__all__ = ["LEASE_OBJECT", "WriterLease", "current_lease_writer"]

log = logging.getLogger(__name__)

#: The lease's object name under the index's prefix.
LEASE_OBJECT = "writer.lease"
#: Exit status of a writer that lost its lease (EX_TEMPFAIL: a supervisor may start it again).
LOST_EXIT_STATUS = 75
#: Options of the object store's HTTP client (the others configure the store itself).
_CLIENT_KEYS = frozenset(
    (
        "allow_http allow_invalid_certificates connect_timeout default_content_type http1_only "
        "http2_keep_alive_interval http2_keep_alive_timeout http2_keep_alive_while_idle http2_only "
        "pool_idle_timeout pool_max_idle_per_host proxy_url proxy_ca_certificate proxy_excludes timeout "
        "user_agent"
    ).split()
)
_BOOLEAN_CLIENT_KEYS = frozenset(
    {"allow_http", "allow_invalid_certificates", "http1_only", "http2_only", "http2_keep_alive_while_idle"}
)
_UNKNOWN_KEY = re.compile(r"key: '([^']+)'")
#: Lance's options for retrying a failed request (``object_store_timeout_seconds``): the
#: lease's store takes them as its retry configuration.
_RETRY_KEYS = frozenset({"client_retry_timeout", "client_max_retries"})


def _retry_config(options: Mapping[str, str]) -> dict[str, Any]:
    """obstore's retry configuration from Lance's retry options (seconds, a count)."""
    retry: dict[str, Any] = {}
    try:
        if "client_retry_timeout" in options:
            retry["retry_timeout"] = timedelta(seconds=float(options["client_retry_timeout"]))
        if "client_max_retries" in options:
            retry["max_retries"] = int(options["client_max_retries"])
    except ValueError as exc:
        raise ConfigError(f"storage option: {exc}") from None
    return retry


def _object_store(db: str, options: Mapping[str, str]) -> Any:
    """An obstore store rooted at the index's prefix, configured like Lance's (the same
    object_store engine): client options apart, options only Lance knows left out."""
    from obstore.exceptions import UnknownConfigurationKeyError
    from obstore.store import from_url

    config: dict[str, Any] = {
        k: v for k, v in options.items() if k not in _CLIENT_KEYS and k not in _RETRY_KEYS
    }
    client: dict[str, Any] = {
        k: (str(v).strip().lower() in ("1", "true", "yes", "on") if k in _BOOLEAN_CLIENT_KEYS else v)
        for k, v in options.items()
        if k in _CLIENT_KEYS
    }
    retry = _retry_config(options)
    for _ in range(len(config) + 1):
        try:
            return from_url(
                db, config=config or None, client_options=client or None, retry_config=retry or None,  # type: ignore[arg-type]
            )  # fmt: skip
        except UnknownConfigurationKeyError as exc:  # an option of Lance's own, not the store's
            found = _UNKNOWN_KEY.search(str(exc))
            if found is None or found.group(1) not in config:
                raise
            config.pop(found.group(1))
    raise StoreError(f"cannot configure the object store of {db}")


def _read(store: Any) -> tuple[dict[str, Any], str | None] | None:
    """The lease record and its etag; None when there is no lease object."""
    import obstore
    from obstore.exceptions import NotFoundError

    try:
        found = obstore.get(store, LEASE_OBJECT)
        raw = bytes(found.bytes())
    except (NotFoundError, FileNotFoundError):
        return None
    try:
        record = json.loads(raw)
    except ValueError:
        record = {}
    return (record if isinstance(record, dict) else {}), found.meta.get("e_tag")


def _info(record: Mapping[str, Any]) -> WriterInfo:
    return WriterInfo(
        pid=int(record.get("pid", 0) or 0),
        host=str(record.get("host", "?")),
        command=str(record.get("command", "another lode process")),
        url=record.get("url") or None,
        started_at=str(record.get("started_at", "")),
    )


def _live(record: Mapping[str, Any], now: float) -> bool:
    """Whether a lease record still holds: not released, renewed within its term, and not
    the record of a dead process of this machine."""
    if record.get("released"):
        return False
    try:
        renewed = float(record.get("renewed_at", 0))
        term = float(record.get("ttl_seconds", 0))
    except (TypeError, ValueError):
        return False
    if now > renewed + term:
        return False
    return not (record.get("host") == socket.gethostname() and not _pid_alive(int(record.get("pid", 0) or 0)))


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, someone else's
        return True
    return True


def current_lease_writer(db: str, options: Mapping[str, str]) -> WriterInfo | None:
    """The process holding the lease of the index at ``db`` now (None: nobody holds it)."""
    try:
        found = _read(_object_store(db, options))
    except Exception as exc:
        if not is_storage_failure(exc):
            raise
        raise storage_error(exc, db, doing=f"read the writer's lease of {db}") from exc
    if found is None or not _live(found[0], time.time()):
        return None
    return _info(found[0])


def _exit_lost(db: str) -> None:
    log.critical("lost the writer's lease of %s: another process may write it now; stopping", db)
    logging.shutdown()
    os._exit(LOST_EXIT_STATUS)


class _Held:
    """The lease this process holds on one index, shared by its users, and its renewer."""

    def __init__(self, lease: WriterLease, record: dict[str, Any], e_tag: str | None) -> None:
        self.lease = lease
        self.record = record
        self.e_tag = e_tag
        self.users = 0
        self.stop = threading.Event()
        self.last_renewed = time.monotonic()
        #: One renewal at a time (the renewer's, or one that adds the server's URL).
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._renew_until_stopped, name="lode-lease", daemon=True)

    @property
    def info(self) -> WriterInfo:
        return _info(self.record)

    def _renew_until_stopped(self) -> None:
        period = self.lease.ttl / 3
        while not self.stop.wait(period):
            self.renew()

    def renew(self) -> None:
        """Put the record again, conditionally on our last etag (``on_lost`` when lost)."""
        from obstore.exceptions import NotFoundError, PreconditionError

        try:
            with self.lock:
                record = {**self.record, "renewed_at": time.time()}
                self.e_tag = self.lease.put(record, self.e_tag)
                self.record = record
                self.last_renewed = time.monotonic()
            return
        except (PreconditionError, NotFoundError):
            log.error("the writer's lease of %s was taken by another process", self.lease.db)
        except Exception:  # the store is unreachable: try again until the term is over
            if time.monotonic() - self.last_renewed < self.lease.ttl:
                log.warning("renewing the writer's lease of %s failed", self.lease.db, exc_info=True)
                return
            log.error("the writer's lease of %s could not be renewed for its whole term", self.lease.db)
        self.stop.set()
        self.lease.on_lost()


_HELD: dict[str, _Held] = {}
_HELD_LOCK = threading.Lock()


def _release_all() -> None:
    """At a normal exit, release the leases still held (a command that never closed its
    ``Lode``), so the next writer need not wait for them to expire."""
    for held in list(_HELD.values()):
        held.users = 1
        lease = held.lease
        lease._holding = True
        lease.release()


atexit.register(_release_all)


class WriterLease:
    """This process's claim to be the writer of an index on object storage (re-entrant
    within the process, like ``WriterLock``)."""

    def __init__(
        self,
        db: str,
        options: Mapping[str, str],
        ttl: float = 30.0,
        on_lost: Callable[[], None] | None = None,
    ) -> None:
        self.db = db
        self.options = dict(options)
        self.ttl = ttl
        self.on_lost: Callable[[], None] = on_lost or (lambda: _exit_lost(db))
        self._holding = False
        self._store: Any = None

    @property
    def held(self) -> bool:
        """True while this claim holds the lease."""
        return self._holding

    def _objects(self) -> Any:
        if self._store is None:
            self._store = _object_store(self.db, self.options)
        return self._store

    def put(self, record: Mapping[str, Any], e_tag: str | None) -> str | None:
        """Write the lease record: create it (``e_tag`` None) or replace the version with
        ``e_tag``; the new etag. AlreadyExistsError/PreconditionError when someone was first."""
        import obstore

        mode: Any = "create" if e_tag is None else {"e_tag": e_tag}
        result = obstore.put(self._objects(), LEASE_OBJECT, json.dumps(record).encode(), mode=mode)
        return result.get("e_tag")

    def acquire(self, command: str, url: str | None = None) -> WriterInfo:
        """Take the lease (or join this process's hold of it); a ``WriterBusyError`` naming
        the process that holds it when it is another one."""
        if self._holding:
            return _HELD[self.db].info
        with _HELD_LOCK:
            held = _HELD.get(self.db)
            if held is None:
                held = self._take(command, url)
                _HELD[self.db] = held
                held.thread.start()
            elif url and not held.record.get("url"):
                held.record = {**held.record, "url": url}
                held.renew()
            held.users += 1
            self._holding = True
            return held.info

    def _take(self, command: str, url: str | None) -> _Held:
        from obstore.exceptions import AlreadyExistsError, PreconditionError

        record = {
            **asdict(WriterInfo.of_this_process(command, url)),
            "token": uuid.uuid4().hex,
            "ttl_seconds": self.ttl,
        }
        for _ in range(3):  # lost races are retried on what the winner wrote
            try:
                found = _read(self._objects())
                if found is not None and _live(found[0], time.time()):
                    raise WriterBusyError(self.db, _info(found[0]))
                record["renewed_at"] = time.time()
                e_tag = self.put(record, found[1] if found is not None else None)
            except (AlreadyExistsError, PreconditionError):
                continue
            except WriterBusyError:
                raise
            except Exception as exc:
                if not is_storage_failure(exc):
                    raise
                raise storage_error(exc, self.db, doing=f"take the writer's lease of {self.db}") from exc
            return _Held(self, record, e_tag)
        found = _read(self._objects())
        raise WriterBusyError(self.db, _info(found[0]) if found else UNKNOWN_WRITER)

    def release(self) -> None:
        """Give the claim up; the lease is released when the process's last claim is."""
        if not self._holding:
            return
        with _HELD_LOCK:
            self._holding = False
            held = _HELD.get(self.db)
            if held is None:
                return
            held.users -= 1
            if held.users > 0:
                return
            del _HELD[self.db]
        held.stop.set()
        held.thread.join(timeout=10)
        try:
            self.put({**held.record, "released": True, "renewed_at": time.time()}, held.e_tag)
        except Exception:  # taken meanwhile, or unreachable: it expires on its own
            log.warning("releasing the writer's lease of %s failed", self.db, exc_info=True)
