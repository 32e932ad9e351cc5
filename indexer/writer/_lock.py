"""One writer per index, whatever the port: a lock in the index folder.

The process that writes an index (``lode serve``, ``lode watch``, ``lode mcp``, an
in-process ``lode index``) holds an exclusive ``flock`` on ``<index>/writer.lock`` for as
long as it writes, and keeps its facts in the file: pid, host, the command, and the URL
where it answers when it is a server. Any other lode process that would write the same
index reads them (``current_writer``) and goes through that URL, or refuses with a message
naming the writer. The kernel releases the lock when its holder dies, however it dies, so a
stale lock (a dead pid) is simply taken over. Readers never take it: any number of
processes search an index while one writes it.

Within one process the lock is shared: every ``Lode`` of the same index holds it once.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import asdict
from pathlib import Path

from indexer.writer._info import UNKNOWN_WRITER, WriterBusyError, WriterInfo

__all__ = ["LOCK_FILE", "WriterLock", "current_writer"]

#: The lock's file name inside the index folder.
LOCK_FILE = "writer.lock"
#: How long an acquire retries while another process only reads the lock's facts.
_ACQUIRE_SECONDS = 1.0


def _lock_path(db: Path) -> Path:
    return Path(db) / LOCK_FILE


def _read(fd: int) -> WriterInfo | None:
    os.lseek(fd, 0, os.SEEK_SET)
    raw = b""
    while chunk := os.read(fd, 4096):
        raw += chunk
    try:
        return WriterInfo(**json.loads(raw))
    except (ValueError, TypeError):
        return None


def current_writer(db: Path) -> WriterInfo | None:
    """The process writing ``db`` now (None when nothing holds its lock)."""
    import fcntl

    path = _lock_path(db)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:  # held: its facts are current
            held = _read(fd)
            return held or WriterInfo(0, "?", "another lode process", None, "")
        fcntl.flock(fd, fcntl.LOCK_UN)  # free: what the file says is a dead writer's
        return None
    finally:
        os.close(fd)


class _Held:
    """The lock this process holds on one index, shared by its users."""

    def __init__(self, fd: int, info: WriterInfo) -> None:
        self.fd = fd
        self.info = info
        self.users = 0


_HELD: dict[str, _Held] = {}
_HELD_LOCK = threading.Lock()


class WriterLock:
    """This process's claim to be the writer of one index (re-entrant within the process)."""

    def __init__(self, db: Path) -> None:
        self.db = Path(db)
        self._key = str(self.db.resolve())
        self._holding = False

    @property
    def held(self) -> bool:
        """True while this claim holds the lock."""
        return self._holding

    def acquire(self, command: str, url: str | None = None) -> WriterInfo:
        """Take the lock (or join this process's hold of it); a WriterBusyError naming the
        other process when another one writes the index."""
        if self._holding:
            return _HELD[self._key].info
        with _HELD_LOCK:
            held = _HELD.get(self._key)
            if held is None:
                held = _HELD[self._key] = self._take(command, url)
            elif url and not held.info.url:
                held.info = self._write_info(held.fd, command, url)
            held.users += 1
            self._holding = True
            return held.info

    def release(self) -> None:
        """Give the claim up; the lock is released when the process's last claim is."""
        if not self._holding:
            return
        with _HELD_LOCK:
            self._holding = False
            held = _HELD.get(self._key)
            if held is None:
                return
            held.users -= 1
            if held.users <= 0:
                del _HELD[self._key]
                import fcntl

                os.ftruncate(held.fd, 0)
                fcntl.flock(held.fd, fcntl.LOCK_UN)
                os.close(held.fd)

    def _take(self, command: str, url: str | None) -> _Held:
        import fcntl

        self.db.mkdir(parents=True, exist_ok=True)
        fd = os.open(_lock_path(self.db), os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        deadline = time.monotonic() + _ACQUIRE_SECONDS
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                other = _read(fd)
                # a reader holds it shared for an instant; a writer's facts are written
                if (other is not None and other.pid != os.getpid()) or time.monotonic() > deadline:
                    os.close(fd)
                    raise WriterBusyError(self.db, other or UNKNOWN_WRITER) from None
                time.sleep(0.02)
        return _Held(fd, self._write_info(fd, command, url))

    @staticmethod
    def _write_info(fd: int, command: str, url: str | None) -> WriterInfo:
        info = WriterInfo.of_this_process(command, url)
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, json.dumps(asdict(info)).encode())
        os.fsync(fd)
        return info
