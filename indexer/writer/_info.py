"""Who writes an index, and the error that names it to a second writer."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from indexer.errors import ConflictError

__all__ = ["WriterBusyError", "WriterInfo"]


@dataclass(frozen=True, slots=True)
class WriterInfo:
    """Who writes an index."""

    pid: int
    """The writing process."""
    host: str
    """The machine it runs on."""
    command: str
    """What it is: ``lode serve``, ``lode watch``, ``lode mcp``, ``lode index``…"""
    url: str | None
    """Where it answers HTTP (a server), else None."""
    started_at: str
    """When it took the lock (ISO 8601)."""

    @classmethod
    def of_this_process(cls, command: str, url: str | None) -> WriterInfo:
        """This process as the writer, from now on."""
        now = datetime.now(UTC).isoformat(timespec="seconds")
        return cls(pid=os.getpid(), host=socket.gethostname(), command=command, url=url, started_at=now)

    def describe(self) -> str:
        """``lode serve (pid 4242, http://127.0.0.1:7370)``."""
        where = f", {self.url}" if self.url else ""
        return f"{self.command} (pid {self.pid} on {self.host}{where})"


#: A writer whose facts could not be read.
UNKNOWN_WRITER = WriterInfo(0, "?", "lode", None, "")


class WriterBusyError(ConflictError):
    """Another process writes this index; ``writer`` says which."""

    def __init__(self, db: Path | str, writer: WriterInfo) -> None:
        how = (
            f"go through it (it answers at {writer.url}), or stop it first"
            if writer.url
            else "stop it first, or run `lode serve` so that every command goes through one writer"
        )
        super().__init__(f"the index {db} is written by {writer.describe()}: {how}", "db")
        self.writer = writer
