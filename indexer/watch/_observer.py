"""Which watchdog observer watches a project: the native one, or polling as a fallback.

On Linux the native observer is lode's own inotify emitter (``_inotify``), which never
places a watch inside a folder the project's rules ignore; elsewhere it is watchdog's
(FSEvents, kqueue or the Windows API). inotify can run out of watches: the kernel caps
them per user (``fs.inotify.max_user_watches``) and instances (``max_user_instances``).
Starting fails when the tree cannot be watched whole, and since folders created later
may hit the limit unnoticed, the watcher also probes now and then whether one more watch
is possible. The polling observer stats the tree every interval instead; it skips
ignored folders too, so ``node_modules`` or ``.git`` cost nothing.
"""

from __future__ import annotations

import errno
import logging
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserverVFS

from indexer.walker import IgnoreRules
from indexer.watch._inotify import PrunedInotifyEmitter, add_watch, inotify_available, open_inotify

__all__ = [
    "ObserverFactory",
    "discard_observer",
    "inotify_limit_reached",
    "native_observer",
    "observer_running",
    "polling_observer",
    "watch_limit_hint",
]

#: Builds an unstarted observer; injected by tests (e.g. one whose ``schedule`` raises).
ObserverFactory = Callable[[], BaseObserver]

log = logging.getLogger(__name__)

_IN_DELETE_SELF = 0x00000400
#: How long stopping an observer waits for its threads.
_STOP_TIMEOUT = 10.0


def native_observer(
    rules: Callable[[], IgnoreRules | None] | None = None, on_overflow: Callable[[], None] | None = None
) -> BaseObserver:
    """The platform's event-driven observer: on Linux, inotify watches on the folders
    ``rules`` keep (every folder without rules; ``on_overflow`` is called when the
    kernel dropped events); elsewhere watchdog's (FSEvents, kqueue or Windows API)."""
    if sys.platform.startswith("linux") and inotify_available():
        return BaseObserver(PrunedInotifyEmitter, rules=rules or (lambda: None), on_overflow=on_overflow)
    from watchdog.observers import Observer

    return Observer()


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
    if not sys.platform.startswith("linux") or not inotify_available():
        return False
    try:
        fd = open_inotify()
    except OSError as exc:
        return exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOMEM)
    try:
        add_watch(fd, str(path), _IN_DELETE_SELF)
        return False
    except OSError as exc:
        return exc.errno in (errno.ENOSPC, errno.ENOMEM)
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


def observer_running(observer: BaseObserver | None) -> bool:
    """True while the observer and all its emitters (the threads reading events) run."""
    return observer is not None and observer.is_alive() and all(e.is_alive() for e in observer.emitters)


def discard_observer(observer: BaseObserver) -> None:
    """Stop an observer, started or not, and release its watches."""
    try:
        observer.stop()
        if observer.is_alive():
            observer.join(_STOP_TIMEOUT)
    except (OSError, RuntimeError):
        log.debug("watcher: error while stopping an observer", exc_info=True)
