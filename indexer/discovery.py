"""How a client finds the user's running lode server, and how it proves it is that user.

A ``lode serve`` that listens leaves one small JSON file, ``server.json``, in the per-user
runtime folder (``ServerConfig.runtime_dir``: ``$LODE_RUNTIME_DIR``, else
``$XDG_RUNTIME_DIR/lode``, else platformdirs' ``user_runtime_dir``)::

    {"url": "http://127.0.0.1:7370", "pid": 1234, "version": "0.1.0",
     "db": "/abs/path/of/index", "auth": "bearer" | "none",
     "token_file": "/abs/path" | null, "started_at": "2026-11-28T05:50:00Z"}

and removes it when it stops cleanly. A file whose ``pid`` is not alive on this machine is
stale: readers ignore it and the next server replaces it. ``token_file`` names a 0600 file
(in a 0700 folder) whose whole content, stripped, is the bearer token every client sends
(``Authorization: Bearer <token>``): the per-user secret that keeps other local accounts
out (``lode serve --no-auth`` serves without it). The token is made once and kept, so a
restarted server takes the same one and its clients need nothing new.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from indexer.config import LodeConfig, default_runtime_dir

__all__ = [
    "DISCOVERY_FILE",
    "TOKEN_FILE",
    "ServerRecord",
    "discovery_path",
    "load_or_create_token",
    "pid_alive",
    "read_server_record",
    "read_token",
    "remove_server_record",
    "runtime_dir",
    "write_server_record",
]

#: The discovery file's name inside the runtime folder.
DISCOVERY_FILE = "server.json"
#: The per-user token's file name inside the runtime folder.
TOKEN_FILE = "token"
#: Bytes of randomness in a token (as URL-safe base64: 43 characters).
_TOKEN_BYTES = 32


@dataclass(frozen=True, slots=True)
class ServerRecord:
    """What ``server.json`` says of the running server."""

    url: str
    """Where it answers (``http://127.0.0.1:7370``)."""
    pid: int
    """Its process id on this machine."""
    version: str
    """lode's version it runs."""
    db: str
    """The index it serves (an absolute folder or a URI)."""
    auth: str
    """``bearer`` (send the token of ``token_file``, or the key it was started with) or ``none``."""
    token_file: str | None
    """The 0600 file holding the bearer token; None when there is none to read (no auth,
    or a key the user gave with ``--api-key``)."""
    started_at: str
    """When it started listening (UTC, ISO 8601 with a ``Z``)."""

    @classmethod
    def from_json(cls, data: Any) -> ServerRecord | None:
        """The record a parsed ``server.json`` holds; None when it is not one."""
        if not isinstance(data, dict):
            return None
        try:
            record = cls(
                url=str(data["url"]),
                pid=int(data["pid"]),
                version=str(data.get("version", "")),
                db=str(data.get("db", "")),
                auth=str(data.get("auth", "none")),
                token_file=None if data.get("token_file") is None else str(data["token_file"]),
                started_at=str(data.get("started_at", "")),
            )
        except (KeyError, TypeError, ValueError):
            return None
        return record

    def token(self) -> str | None:
        """The bearer token of ``token_file``; None when there is none or it cannot be read
        (it belongs to another user)."""
        return read_token(Path(self.token_file)) if self.token_file else None


def runtime_dir(config: LodeConfig) -> Path:
    """The per-user runtime folder (``ServerConfig.runtime_dir`` or the platform's)."""
    return config.server.runtime_dir or default_runtime_dir()


def discovery_path(config: LodeConfig) -> Path:
    """Where ``server.json`` is."""
    return runtime_dir(config) / DISCOVERY_FILE


def pid_alive(pid: int) -> bool:
    """True when a process ``pid`` runs on this machine (one of another user's counts)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def read_server_record(config: LodeConfig) -> ServerRecord | None:
    """The running server's record; None when there is no file, it cannot be read, or
    its process is gone (a stale file)."""
    try:
        data = json.loads(discovery_path(config).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    record = ServerRecord.from_json(data)
    if record is None or not pid_alive(record.pid):
        return None
    return record


def _listening(url: str, timeout: float = 0.3) -> bool:
    """True when something accepts connections at ``url``'s host and port."""
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80), timeout=timeout):
            return True
    except (OSError, ValueError):
        return False


def _private_dir(path: Path) -> Path:
    """``path`` created if missing, readable by its user only (0700)."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(OSError):  # a folder of another owner stays as it is
        path.chmod(0o700)
    return path


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically, 0600 from its first byte."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def write_server_record(
    config: LodeConfig, url: str, *, auth: str, token_file: Path | None, version: str
) -> Path | None:
    """Leave this process's ``server.json``; None (nothing written) when another live
    server's record is there: the first one stays the user's server."""
    current = read_server_record(config)
    # another live server keeps its record; one naming this URL (this process listens
    # there now) or where nothing listens (its pid now runs something else) is stale
    if current is not None and current.pid != os.getpid() and current.url != url and _listening(current.url):
        return None
    record = ServerRecord(
        url=url,
        pid=os.getpid(),
        version=version,
        db=str(config.db),
        auth=auth,
        token_file=None if token_file is None else str(token_file),
        started_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )
    path = _private_dir(runtime_dir(config)) / DISCOVERY_FILE
    _write_private(path, json.dumps(asdict(record), indent=2) + "\n")
    return path


def remove_server_record(config: LodeConfig, pid: int | None = None) -> bool:
    """Remove ``server.json`` when it is the record of ``pid`` (default: this process);
    True when it was removed."""
    path = discovery_path(config)
    try:
        record = ServerRecord.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return False
    if record is None or record.pid != (os.getpid() if pid is None else pid):
        return False
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    return True


def read_token(path: Path) -> str | None:
    """The token a token file holds (stripped); None when it cannot be read or is empty."""
    try:
        token = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return token or None


def load_or_create_token(config: LodeConfig) -> tuple[str, Path]:
    """The per-user token and its file (0600 in the 0700 runtime folder), made at the
    first call and kept after."""
    path = _private_dir(runtime_dir(config)) / TOKEN_FILE
    token = read_token(path)
    if token is None:
        _write_private(path, secrets.token_urlsafe(_TOKEN_BYTES) + "\n")
        token = read_token(path)
    if token is None:
        raise OSError(f"cannot read the token file {path}")
    with contextlib.suppress(OSError):
        path.chmod(0o600)  # a file left readable to others (copied by hand) is closed again
    return token, path
