"""An inotify emitter that never watches an ignored folder.

watchdog's inotify emitter watches every folder below the root, ignored ones included
(it walks the whole tree, and every folder created later): a ``.venv`` or
``node_modules`` costs thousands of watches, and a burst of writes inside one fills the
kernel's event queue ("Inotify queue overflowed") although the handler then drops every
one of those events. watchdog has no way to leave folders out (its issue #212), so this
emitter places its own watches: one per folder the project's ignore rules keep, decided
before the watch is placed, at start and for every folder created or moved in later.
Writes inside an ignored folder then reach lode as no event at all.

Events become the watchdog events ``ChangeHandler`` reads (a move as a deletion and a
creation: the handler marks both paths either way). A changed ignore file re-reads the
rules and re-places the watches below its folder; ``.git/info/exclude`` is watched
alone (``.git`` itself is not). On a queue overflow the watches are re-placed and
``on_overflow`` asks for a whole-project diff.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import logging
import os
import select
import struct
import threading
from collections.abc import Callable, Iterator
from typing import Any

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileSystemEvent,
)
from watchdog.observers.api import DEFAULT_EMITTER_TIMEOUT, EventEmitter, EventQueue, ObservedWatch

from indexer.walker import IGNORE_FILES, IgnoreRules

__all__ = ["EVENT_MASK", "PrunedInotifyEmitter", "add_watch", "inotify_available", "open_inotify"]

log = logging.getLogger(__name__)

_IN_MODIFY = 0x00000002
_IN_ATTRIB = 0x00000004
_IN_CLOSE_WRITE = 0x00000008
_IN_MOVED_FROM = 0x00000040
_IN_MOVED_TO = 0x00000080
_IN_CREATE = 0x00000100
_IN_DELETE = 0x00000200
_IN_DELETE_SELF = 0x00000400
_IN_MOVE_SELF = 0x00000800
_IN_Q_OVERFLOW = 0x00004000
_IN_IGNORED = 0x00008000
_IN_ONLYDIR = 0x01000000
_IN_DONT_FOLLOW = 0x02000000
_IN_ISDIR = 0x40000000
_IN_NONBLOCK = 0o4000
_IN_CLOEXEC = 0o2000000

#: What every watch asks for: content and name changes of the folder's entries.
EVENT_MASK = (
    _IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE
    | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR | _IN_DONT_FOLLOW
)  # fmt: skip
_HEADER = struct.Struct("iIII")
_READ_BYTES = 64 * 1024
#: The one folder inside ``.git`` that is watched (for ``exclude``).
_GIT_INFO = ".git/info"


class _Libc:
    """The three inotify calls, bound once per process (None off Linux)."""

    _functions: tuple[Any, Any, Any] | None = None
    _tried = False

    @classmethod
    def get(cls) -> tuple[Any, Any, Any] | None:
        if not cls._tried:
            cls._tried = True
            try:
                libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
                init1, add, rm = libc.inotify_init1, libc.inotify_add_watch, libc.inotify_rm_watch
            except (OSError, AttributeError):
                return None
            init1.argtypes, init1.restype = [ctypes.c_int], ctypes.c_int
            add.argtypes, add.restype = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32], ctypes.c_int
            rm.argtypes, rm.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
            cls._functions = (init1, add, rm)
        return cls._functions


def inotify_available() -> bool:
    """True where inotify can be used (Linux with a libc that has it)."""
    return _Libc.get() is not None


def open_inotify() -> int:
    """A new non-blocking inotify instance's descriptor; OSError (EMFILE…) when refused."""
    functions = _Libc.get()
    if functions is None:
        raise OSError(errno.ENOSYS, "inotify is not available")
    fd = int(functions[0](_IN_NONBLOCK | _IN_CLOEXEC))
    if fd < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return fd


def add_watch(fd: int, path: str, mask: int = EVENT_MASK) -> int:
    """Watch folder ``path`` on instance ``fd``; its watch descriptor, OSError when refused
    (ENOSPC: the user's watch limit is reached; ENOENT/ENOTDIR: it is gone)."""
    functions = _Libc.get()
    if functions is None:
        raise OSError(errno.ENOSYS, "inotify is not available")
    wd = int(functions[1](fd, os.fsencode(path), mask))
    if wd < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), path)
    return wd


def _remove_watch(fd: int, wd: int) -> None:
    functions = _Libc.get()
    if functions is not None:
        functions[2](fd, wd)  # fails harmlessly (EINVAL) for a watch the kernel dropped


def _parse(buffer: bytes) -> Iterator[tuple[int, int, int, str]]:
    """(watch descriptor, mask, cookie, name) of each event in a read buffer."""
    offset = 0
    while offset + _HEADER.size <= len(buffer):
        wd, mask, cookie, length = _HEADER.unpack_from(buffer, offset)
        start = offset + _HEADER.size
        name = buffer[start : start + length].rstrip(b"\0")
        offset = start + length
        yield wd, mask, cookie, os.fsdecode(name)


class PrunedInotifyEmitter(EventEmitter):
    """Emits a project's file events from inotify watches on the folders its rules keep.

    Built by a ``BaseObserver`` (``native_observer``), which passes ``rules`` (the
    project's current ``IgnoreRules``, or None to watch every folder) and
    ``on_overflow`` (called when the kernel dropped events).
    """

    def __init__(
        self,
        event_queue: EventQueue,
        watch: ObservedWatch,
        *,
        timeout: float = DEFAULT_EMITTER_TIMEOUT,
        event_filter: list[type[FileSystemEvent]] | None = None,
        rules: Callable[[], IgnoreRules | None] = lambda: None,
        on_overflow: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(event_queue, watch, timeout=timeout, event_filter=event_filter)
        self._root = os.path.abspath(str(watch.path))
        self._rules = rules
        self._on_overflow = on_overflow
        self._fd = -1
        self._wake_r, self._wake_w = -1, -1
        self._fds_lock = threading.Lock()
        #: watch descriptor → folder relative to the root ("" is the root), and back
        self._paths: dict[int, str] = {}
        self._wds: dict[str, int] = {}
        self.limit_reached = False
        """True once a folder could not be watched for the user's watch limit."""

    @property
    def watched_folders(self) -> list[str]:
        """The folders watched now, relative to the root (``""`` is the root)."""
        return sorted(self._wds)

    # ---- the thread --------------------------------------------------------------------
    def on_thread_start(self) -> None:
        """Open the inotify instance and watch the tree (OSError when the root cannot be
        watched, or the watch limit is reached: the caller falls back to polling)."""
        self._fd = open_inotify()
        try:
            self._wake_r, self._wake_w = os.pipe()
            self._watch_tree("", strict=True)
            if self.limit_reached:
                raise OSError(errno.ENOSPC, "inotify watch limit reached")
        except BaseException:
            self._close()
            raise

    def on_thread_stop(self) -> None:
        """Wake the reading thread so that it ends now, not after its poll times out."""
        with self._fds_lock:  # never a descriptor closed (and maybe reused) meanwhile
            if self._wake_w >= 0:
                with contextlib.suppress(OSError):
                    os.write(self._wake_w, b"!")

    def run(self) -> None:
        """Read and emit events until stopped, then release the watches."""
        try:
            while self.should_keep_running():
                self.queue_events(self.timeout)
        finally:
            self._close()

    def queue_events(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for events and emit them."""
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        poller.register(self._wake_r, select.POLLIN)
        ready = {fd for fd, _ in poller.poll(timeout * 1000)}
        if self._fd not in ready or not self.should_keep_running():
            return
        try:
            buffer = os.read(self._fd, _READ_BYTES)
        except BlockingIOError:
            return
        for wd, mask, _cookie, name in _parse(buffer):
            try:
                self._handle(wd, mask, name)
            except Exception:  # a raise would end the thread, and with it the watching
                log.exception("watcher: %s: cannot handle an inotify event", self._root)

    def _close(self) -> None:
        with self._fds_lock:
            for fd in (self._fd, self._wake_r, self._wake_w):
                if fd >= 0:
                    with contextlib.suppress(OSError):
                        os.close(fd)
            self._fd = self._wake_r = self._wake_w = -1
        self._paths.clear()
        self._wds.clear()

    # ---- events ------------------------------------------------------------------------
    def _handle(self, wd: int, mask: int, name: str) -> None:
        if mask & _IN_Q_OVERFLOW:
            self._overflowed()
            return
        folder = self._paths.get(wd)
        if folder is None:
            return  # a watch removed meanwhile
        if mask & _IN_IGNORED:
            self._forget(folder, wd)
            return
        if mask & (_IN_DELETE_SELF | _IN_MOVE_SELF):
            if folder == "":  # the project folder itself went away
                self.queue_event(DirDeletedEvent(self._root))
                self.stop()
            return  # a sub-folder's own removal: its parent reports it by name
        if not name:
            return
        rel = f"{folder}/{name}" if folder else name
        absolute = os.path.join(self._root, rel)
        if mask & _IN_ISDIR:
            self._folder_event(rel, absolute, mask)
        else:
            self._file_event(rel, absolute, mask)

    def _folder_event(self, rel: str, absolute: str, mask: int) -> None:
        if mask & (_IN_CREATE | _IN_MOVED_TO):
            if self._keeps(rel):
                self._watch_tree(rel)
            self.queue_event(DirCreatedEvent(absolute))
        elif mask & (_IN_DELETE | _IN_MOVED_FROM):
            self._unwatch_tree(rel)
            self.queue_event(DirDeletedEvent(absolute))

    def _file_event(self, rel: str, absolute: str, mask: int) -> None:
        if mask & (_IN_DELETE | _IN_MOVED_FROM):
            self.queue_event(FileDeletedEvent(absolute))
        elif mask & (_IN_CREATE | _IN_MOVED_TO):
            self.queue_event(FileCreatedEvent(absolute))
        elif mask & _IN_CLOSE_WRITE:
            self.queue_event(FileClosedEvent(absolute))
        elif mask & (_IN_MODIFY | _IN_ATTRIB):
            self.queue_event(FileModifiedEvent(absolute))
        name = rel.rsplit("/", 1)[-1]
        if name in IGNORE_FILES or rel == f"{_GIT_INFO}/exclude":
            # what is ignored below its folder changed: watch what is no longer ignored,
            # stop watching what now is (the handler re-reads the rules for its own use)
            rules = self._rules()
            if rules is not None:
                rules.invalidate()
            folder = rel.rpartition("/")[0] if name in IGNORE_FILES else ""
            self._rewatch(folder)

    def _overflowed(self) -> None:
        log.warning("watcher: %s: the kernel dropped file events; re-placing watches", self._root)
        self._rewatch("")
        if self._on_overflow is not None:
            self._on_overflow()

    # ---- watches -----------------------------------------------------------------------
    def _keeps(self, rel: str) -> bool:
        """Whether folder ``rel`` is watched: not ignored, not a symlink, or ``.git/info``."""
        if rel == _GIT_INFO:
            return True
        rules = self._rules()
        return rules is None or not rules.ignored(rel, is_dir=True)

    def _watch_tree(self, rel: str, strict: bool = False) -> None:
        """Watch folder ``rel`` and every folder below it the rules keep (the watch first,
        then the listing: a sub-folder made meanwhile is either listed or reported);
        ``strict``: OSError when the root itself cannot be watched."""
        stack = [rel]
        while stack:
            folder = stack.pop()
            if not self._add_folder(folder, strict):
                continue
            stack.extend(self._kept_subfolders(folder))
        if rel == "" and os.path.isdir(os.path.join(self._root, _GIT_INFO)):
            self._add_folder(_GIT_INFO)

    def _add_folder(self, rel: str, strict: bool = False) -> bool:
        absolute = os.path.join(self._root, rel) if rel else self._root
        try:
            wd = add_watch(self._fd, absolute)
        except OSError as exc:
            if rel == "" and strict:
                raise
            if exc.errno in (errno.ENOSPC, errno.ENOMEM):
                self.limit_reached = True
            return False  # gone or unreadable meanwhile: nothing to watch
        old = self._paths.get(wd)
        if old is not None and old != rel:
            self._wds.pop(old, None)  # the same folder under its new name (a move)
        self._paths[wd] = rel
        self._wds[rel] = wd
        return True

    def _kept_subfolders(self, rel: str) -> list[str]:
        absolute = os.path.join(self._root, rel) if rel else self._root
        rules = self._rules()
        found: list[str] = []
        try:
            with os.scandir(absolute) as entries:
                for entry in entries:
                    try:
                        if not entry.is_dir(follow_symlinks=False):
                            continue
                    except OSError:
                        continue
                    child = f"{rel}/{entry.name}" if rel else entry.name
                    if rules is None or not rules.matches(child, is_dir=True):
                        found.append(child)
        except OSError:
            pass
        return found

    def _unwatch_tree(self, rel: str) -> None:
        prefix = rel + "/"
        for folder in [f for f in self._wds if f == rel or f.startswith(prefix)]:
            wd = self._wds.pop(folder)
            self._paths.pop(wd, None)
            _remove_watch(self._fd, wd)

    def _forget(self, folder: str, wd: int) -> None:
        self._paths.pop(wd, None)
        if self._wds.get(folder) == wd:
            del self._wds[folder]

    def _rewatch(self, rel: str) -> None:
        """Make the watches below ``rel`` what the current rules say."""
        prefix = rel + "/" if rel else ""
        for folder in [f for f in self._wds if f and f.startswith(prefix)]:
            if folder in self._wds and not self._keeps(folder):
                self._unwatch_tree(folder)
        self._watch_tree(rel)
