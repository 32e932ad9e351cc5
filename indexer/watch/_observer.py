"""Which watchdog observer watches a project: the native one, or polling as a fallback.

The native observer (inotify on Linux) can run out of watches: the kernel caps them
per user (``fs.inotify.max_user_watches``) and instances (``max_user_instances``).
watchdog raises when the project root itself cannot be watched, but silently skips
sub-folders past the limit, so after starting we also probe whether one more watch
is possible. The polling observer stats the tree every interval instead; it skips
ignored folders, so ``node_modules`` or ``.git`` cost nothing.
"""

from __future__ import annotations

import errno
import os
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserverVFS
from watchdog.utils import UnsupportedLibcError

from indexer.walker import IgnoreRules

__all__ = [
    "ObserverFactory",
    "inotify_limit_reached",
    "native_observer",
    "polling_observer",
    "silence_duplicate_watch_warning",
    "watch_limit_hint",
]

#: Builds an unstarted observer; injected by tests (e.g. one whose ``schedule`` raises).
ObserverFactory = Callable[[], BaseObserver]

_IN_DELETE_SELF = 0x00000400


def native_observer() -> BaseObserver:
    """The platform's event-driven observer (inotify, FSEvents, kqueue or Windows API)."""
    return Observer()


def silence_duplicate_watch_warning() -> None:
    """Hide watchdog's harmless "Callback with id … already exists" RuntimeWarning.

    watchdog 7's inotify emitter adds a watch twice when nested folders appear faster
    than it reads their events (``mkdir -p``, a ``git checkout``); it then overwrites
    the callback with itself and warns, from its reader thread, once per folder. Under
    ``-W error`` that warning would kill the reader thread, so the filter is narrow:
    this message, this category, watchdog's modules only.
    """
    warnings.filterwarnings(
        "ignore", message=r"Callback with id '\d+' already exists for watch", category=RuntimeWarning,
        module=r"watchdog\.",
    )  # fmt: skip


def polling_observer(rules: Callable[[], IgnoreRules], root: Path, interval: float) -> BaseObserver:
    """A polling observer that stats the tree every ``interval`` seconds, minus ignored folders."""
    return PollingObserverVFS(os.lstat, listdir_skipping_ignored(rules, root), polling_interval=interval)


def listdir_skipping_ignored(
    rules: Callable[[], IgnoreRules], root: Path
) -> Callable[[str | None], Iterator[os.DirEntry[str]]]:
    """``os.scandir`` without the entries the project's current rules ignore."""
    prefix = str(root).rstrip(os.sep) + os.sep

    def listdir(path: str | None) -> Iterator[os.DirEntry[str]]:
        folder = path or "."
        with os.scandir(folder) as it:
            entries = list(it)
        rel_dir = folder[len(prefix) :].replace(os.sep, "/") if folder.startswith(prefix) else ""
        current = rules()
        return iter([e for e in entries if not _skip(current, rel_dir, e)])

    return listdir


def _skip(rules: IgnoreRules, rel_dir: str, entry: os.DirEntry[str]) -> bool:
    try:
        is_dir = entry.is_dir(follow_symlinks=False)
    except OSError:
        return False
    rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
    return rules.matches(rel, is_dir=is_dir)


def inotify_limit_reached(path: Path) -> bool:
    """True if this user cannot add one more inotify watch or instance (False off Linux)."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        from watchdog.observers.inotify_c import inotify_add_watch, inotify_init
    except (ImportError, UnsupportedLibcError):
        return False
    fd = inotify_init()
    if fd < 0:
        return ctypes.get_errno() in (errno.EMFILE, errno.ENFILE, errno.ENOMEM)
    try:
        if inotify_add_watch(fd, os.fsencode(path), _IN_DELETE_SELF) < 0:
            return ctypes.get_errno() in (errno.ENOSPC, errno.ENOMEM)
        return False
    finally:
        os.close(fd)


def watch_limit_hint(code: int | None = errno.ENOSPC) -> str:
    """How to raise the inotify limit behind error ``code`` (empty when none applies)."""
    names = {errno.ENOSPC: "max_user_watches", errno.EMFILE: "max_user_instances"}
    if not sys.platform.startswith("linux") or code not in names:
        return ""
    name = names[code]
    try:
        limit = Path(f"/proc/sys/fs/inotify/{name}").read_text().strip()
    except OSError:
        limit = "?"
    return f"fs.inotify.{name} is {limit}; raise it with `sudo sysctl fs.inotify.{name}=<more>`"
