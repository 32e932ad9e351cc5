"""Other lode processes using an index: what a migration must never run beside.

A lode of this version writes an index only while it holds the writer's claim
(``writer_claim``), and never migrates one it does not write. An older lode kept no claim
(before lode held a writer lock), so nothing on disk says it is running: its index
opened, it writes whenever its watcher fires, and holds none of its files open between
writes. What does show is its process: a ``lode`` command (the
console script, or ``python -m server`` / ``python -m indexer``) whose index is this one —
its ``--db`` argument, else its ``LODE_DB``, else the per-user default of its environment.

``index_users`` finds such processes through ``/proc`` (Linux); elsewhere it finds none,
and only the writer's claim protects a migration. It never counts this process or its
ancestors (the shell or script that started it); its own workers run no ``lode`` command.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from pathlib import Path

from indexer.errors import ConflictError

__all__ = ["IndexUser", "index_users", "refuse_index_users"]

_PROC = Path("/proc")
#: ``python -m NAME`` entry points of lode.
_MODULES = frozenset({"server", "indexer", "server.cli", "indexer.cli"})


@dataclass(frozen=True, slots=True)
class IndexUser:
    """A process that uses an index."""

    pid: int
    command: str
    """Its command line, cut to a readable length."""

    def describe(self) -> str:
        """``pid 4242: lode serve ~/src/shop``."""
        return f"pid {self.pid}: {self.command}"


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:  # gone meanwhile, or another user's
        return None


def _argv(pid: int) -> list[str]:
    raw = _read(_PROC / str(pid) / "cmdline") or b""
    return [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]


def _environ(pid: int) -> dict[str, str]:
    raw = _read(_PROC / str(pid) / "environ") or b""
    pairs = (part.decode("utf-8", "replace").partition("=") for part in raw.split(b"\0") if part)
    return {key: value for key, _, value in pairs}


def _parent(pid: int) -> int:
    raw = _read(_PROC / str(pid) / "stat") or b""
    # "pid (comm) state ppid ...": comm may hold spaces and parentheses
    fields = raw.rsplit(b")", 1)[-1].split()
    return int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else 0


def _is_lode(argv: list[str]) -> bool:
    """True for a lode command line: the ``lode`` script (run by its interpreter or not) or
    ``python -m server`` / ``python -m indexer``."""
    names = [os.path.basename(a) for a in argv[:2]]
    if "lode" in names:
        return True
    return any(a == "-m" and b in _MODULES for a, b in itertools.pairwise(argv))


def _db_of(pid: int, argv: list[str]) -> Path | None:
    """The index folder a lode process uses (None: an object-storage URI)."""
    given = None
    for i, arg in enumerate(argv):
        if arg == "--db" and i + 1 < len(argv):
            given = argv[i + 1]
        elif arg.startswith("--db="):
            given = arg.removeprefix("--db=")
    env = _environ(pid)
    given = given or env.get("LODE_DB")
    if given is None:
        data = env.get("XDG_DATA_HOME") or os.path.join(env.get("HOME", "~"), ".local", "share")
        return Path(data) / "lode" / "index"
    if "://" in given and not given.startswith("file://"):
        return None
    path = Path(given.removeprefix("file://")).expanduser()
    if not path.is_absolute():
        try:
            path = Path(os.readlink(_PROC / str(pid) / "cwd")) / path
        except OSError:
            return None
    return path


def _same(a: Path, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def _ancestors() -> set[int]:
    """This process and the ones that started it (a ``lode`` shell script among them)."""
    ours = {os.getpid()}
    pid = os.getppid()
    while pid > 1 and pid not in ours:
        ours.add(pid)
        pid = _parent(pid)
    return ours


def index_users(db: Path | str) -> list[IndexUser]:
    """Other lode processes that use the index folder ``db`` (none for an object-storage
    URI, or where ``/proc`` is missing)."""
    if not isinstance(db, Path) or not _PROC.is_dir():
        return []
    ours = _ancestors()
    found = []
    for pid in (int(name) for name in os.listdir(_PROC) if name.isdigit()):
        if pid in ours:
            continue
        argv = _argv(pid)
        if not argv or not _is_lode(argv):
            continue
        used = _db_of(pid, argv)
        if used is not None and _same(used, db):
            command = " ".join(argv)
            found.append(IndexUser(pid, command if len(command) <= 160 else command[:160] + "…"))
    return found


def refuse_index_users(db: Path | str) -> None:
    """A ``ConflictError`` naming the other lode processes that use the index ``db``, if
    any: a migration under them would let an older lode write rows without the new columns."""
    users = index_users(db)
    if users:
        named = "; ".join(u.describe() for u in users[:3])
        more = f" and {len(users) - 3} more" if len(users) > 3 else ""
        raise ConflictError(
            f"the index at {db} needs an upgrade, and other lode processes use it ({named}{more}): "
            "stop them first (an older lode would go on writing rows without the new columns)"
        )
