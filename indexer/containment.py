"""Containment: nothing outside a project's root is ever read.

One rule, applied wherever a path enters (the walk, watcher events, explicit ``paths``,
registration): the *real* path (every symlink resolved) must lie inside the project's real
root. The reader checks it again on the opened file descriptor, so a file swapped for a
symlink, a FIFO or a device between the walk and the read is refused, not followed:
``open_contained`` opens without blocking (a FIFO with no writer would hang a read),
``fstat``s the descriptor (regular files only), asks the kernel which file it really is
(``/proc/self/fd``; ``F_GETPATH`` on macOS) and reads at most the size limit + 1 bytes
(a file growing during the run, or a ``/proc`` file that reads without end, stops there).

File names that are not valid UTF-8 are indexed under a display form: each byte that is
not part of valid UTF-8 is written ``\\xHH`` (``bad\\xffname.py``); ``real_relative`` maps
a display form back to the name on disk.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from indexer.errors import QUOTE_CHARS, PathError, clip
from indexer.limits import MAX_PATHS, relative_path_problem

__all__ = [
    "ContainedRead",
    "display_path",
    "is_inside",
    "outside_reason",
    "read_contained",
    "real_relative",
    "refuse_broad_root",
    "relative_paths",
    "resolve_project_root",
]

_F_GETPATH = 50  # macOS fcntl: the path of an open descriptor
_ESCAPED_BYTE = re.compile(rb"\\x([0-9a-f]{2})")
_READ_BLOCK = 1 << 16


def display_path(rel_path: str) -> str:
    """``rel_path`` as valid UTF-8: undecodable bytes (surrogate-escaped) become ``\\xHH``."""
    try:
        rel_path.encode("utf-8")
    except UnicodeEncodeError:
        return rel_path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return rel_path


def real_relative(root: Path, rel_path: str) -> str:
    """The on-disk relative name of a display path (the path itself when it exists as written)."""
    if "\\x" not in rel_path or os.path.lexists(root / rel_path):
        return rel_path
    raw = _ESCAPED_BYTE.sub(lambda m: bytes([int(m.group(1), 16)]), rel_path.encode("utf-8"))
    return os.fsdecode(raw)


def is_inside(real_root: str, real_path: str) -> bool:
    """True when the resolved ``real_path`` is ``real_root`` or lies below it."""
    if real_path == real_root:
        return True
    prefix = real_root if real_root.endswith(os.sep) else real_root + os.sep
    return real_path.startswith(prefix)


def outside_reason(root: Path, rel_path: str, follow_symlinks: bool) -> str | None:
    """Why ``root/rel_path`` may not be read (a symlink on the way leaves the root, or is not
    to be followed); None when it stays inside. ``root`` must be resolved already."""
    if not follow_symlinks:
        current = root
        for part in rel_path.split("/"):
            current = current / part
            if current.is_symlink():
                return "symlink (not followed)"
    try:
        real = os.path.realpath(root / rel_path)
    except (OSError, ValueError):
        return "unreadable path"
    if not is_inside(str(root), real):
        return "symlink leaves the project root"
    return None


@dataclass(frozen=True, slots=True)
class ContainedRead:
    """A file's bytes, or why they were not read."""

    data: bytes | None
    """The whole file (None when refused)."""
    reason: str = ""
    """Why not: ``vanished``, ``not a regular file``, ``too large (…)``, ``outside…``."""
    size: int = 0
    """Bytes seen (for a file refused as too large: at least the limit + 1)."""
    gone: bool = False
    """True when the file no longer exists (its rows should go)."""


def read_contained(
    path: str | Path, root: str | Path, limit: int, follow_symlinks: bool = True
) -> ContainedRead:
    """Read ``path`` if it is a regular file inside ``root`` of at most ``limit`` bytes."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return ContainedRead(None, "vanished during the run", gone=True)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return ContainedRead(None, "symlink (not followed)")
        return ContainedRead(None, f"unreadable ({exc.strerror})")
    try:
        return _read_open(fd, str(path), os.path.realpath(root), limit)
    finally:
        os.close(fd)


def _read_open(fd: int, path: str, real_root: str, limit: int) -> ContainedRead:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        return ContainedRead(None, "not a regular file")
    real = _descriptor_path(fd, path, info)
    if real is None or not is_inside(real_root, real):
        return ContainedRead(None, "resolves outside the project root")
    if info.st_size > limit:
        return ContainedRead(None, f"too large ({info.st_size} bytes > {limit})", size=info.st_size)
    parts: list[bytes] = []
    got = 0
    try:
        while got <= limit:
            block = os.read(fd, min(_READ_BLOCK, limit + 1 - got))
            if not block:
                break
            parts.append(block)
            got += len(block)
    except OSError as exc:
        return ContainedRead(None, f"unreadable ({exc.strerror})")
    if got > limit:
        return ContainedRead(None, f"too large (over {limit} bytes while read)", size=got)
    return ContainedRead(b"".join(parts), size=got)


def _descriptor_path(fd: int, path: str, info: os.stat_result) -> str | None:
    """The real path of an open descriptor, from the kernel where it can tell."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}").removesuffix(" (deleted)")
    except OSError:
        pass
    if sys.platform == "darwin":  # pragma: no cover - not Linux
        import fcntl

        try:
            raw = fcntl.fcntl(fd, _F_GETPATH, b"\0" * 1024)
            return os.fsdecode(raw.split(b"\0", 1)[0])
        except OSError:
            return None
    real = os.path.realpath(path)  # pragma: no cover - neither Linux nor macOS
    try:  # pragma: no cover
        again = os.stat(real)
    except OSError:  # pragma: no cover
        return None
    same = (again.st_dev, again.st_ino) == (info.st_dev, info.st_ino)  # pragma: no cover
    return real if same else None  # pragma: no cover


#: Folders never registered as a project without ``force``: indexing them reads the system.
_SYSTEM_FOLDERS = frozenset(
    "/ /bin /boot /dev /etc /lib /lib32 /lib64 /libx32 /opt /proc /root /run /sbin /srv /sys /tmp "
    "/usr /var /home /Users /Library /System /Applications /private /Volumes /mnt /media".split()
)


def refuse_broad_root(root: Path, field: str = "path", *, force: bool = False) -> None:
    """A PathError when ``root`` (resolved) is ``/``, a system folder or the home folder itself,
    unless ``force``: such a project reads thousands of unrelated (or unreadable) files."""
    if force:
        return
    text = str(root)
    home = os.path.realpath(Path.home())
    why = None
    if text in _SYSTEM_FOLDERS or any(text.startswith(p + "/") for p in ("/proc", "/sys", "/dev")):
        why = "is a system folder"
    elif text == home:
        why = "is your home folder"
    if why is not None:
        raise PathError(
            field,
            f"{text} {why}: indexing it would read everything below it; "
            "register a project folder instead, or pass force to do it anyway",
        )


def resolve_project_root(path: str | Path, field: str = "path", *, force: bool = False) -> Path:
    """An absolute, readable folder, or a PathError naming ``field``; ``/``, a system folder
    or the home folder itself only with ``force``."""
    raw = str(path).strip()
    if not raw:
        raise PathError(field, "is empty")
    shown = clip(raw, QUOTE_CHARS)
    if "\x00" in raw:
        raise PathError(field, "contains a NUL character")
    try:
        candidate = Path(raw).expanduser()
        if not candidate.exists():
            raise PathError(field, f"{shown} does not exist")
        if not candidate.is_dir():
            raise PathError(field, f"{shown} is not a folder")
        if not os.access(candidate, os.R_OK | os.X_OK):
            raise PathError(field, f"{shown} is not readable")
        root = candidate.resolve()
    except (OSError, RuntimeError, ValueError) as exc:
        raise PathError(field, f"{shown} cannot be used: {exc.__class__.__name__}") from None
    refuse_broad_root(root, field, force=force)
    return root


def relative_paths(paths: Sequence[str], field: str = "paths") -> tuple[str, ...]:
    """Project-relative POSIX paths (no leading slash, no ``..``; at most ``MAX_PATHS``), or
    a PathError naming ``field``."""
    if len(paths) > MAX_PATHS:
        raise PathError(field, f"must hold at most {MAX_PATHS} paths (got {len(paths)})")
    out = []
    for path in paths:
        problem = relative_path_problem(path)
        if problem is not None:
            raise PathError(field, problem)
        out.append(path.strip("/"))
    return tuple(out)
