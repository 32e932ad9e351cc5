"""From watchdog events to dirty project paths.

Runs on the observer's thread. Events inside ignored folders (``.git`` during a
checkout, ``node_modules``…) and editors' temporary files are dropped; a changed
``.gitignore``/``.lodeignore`` refreshes the rules and marks its folder, so files it now
ignores leave the index and files it no longer ignores enter it. A move marks both its
source (gone) and its destination (new), which also covers atomic saves (write a temp
file, rename it over the original).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler

from indexer.containment import display_path
from indexer.walker import IGNORE_FILES, IgnoreRules

__all__ = ["ChangeHandler", "PathChange", "is_editor_temp", "iter_changes"]

log = logging.getLogger(__name__)

#: Re-read (with a new ``IgnoreRules``) when it changes; it holds repository-wide patterns.
_GIT_INFO_EXCLUDE = ".git/info/exclude"

#: Names editors write next to a file while saving it; they never reach the index.
_EDITOR_TEMP = re.compile(
    r"""(
        .*\.(?:sw[a-px]|swpx)   # vim swap files (.x.py.swp, .swo, .swx, .swpx)
      | .*~                     # backups (x.py~)
      | \.\#.*                  # emacs lock links
      | \#.*\#                  # emacs auto-save
      | 4913                    # vim's "can I write here" probe
      | .*\.tmp                 # generic write-then-rename temp files
      | .*___jb_(?:tmp|old)___  # JetBrains safe write
      | \.~lock\..*\#           # LibreOffice locks
    )\Z""",
    re.VERBOSE,
)

#: Event types that never change what is indexed.
_SKIPPED_TYPES = frozenset({"opened", "closed_no_write"})


@dataclass(frozen=True, slots=True)
class PathChange:
    """One path touched by an event."""

    rel_path: str
    """Relative to the project root, POSIX separators; ``""`` is the root itself."""
    is_dir: bool
    """The event was about a folder."""
    gone: bool
    """The path was deleted or moved away."""


def is_editor_temp(name: str) -> bool:
    """True for file names editors use transiently while saving (``.x.swp``, ``x~``, ``4913``…)."""
    return _EDITOR_TEMP.match(name) is not None


def iter_changes(event: FileSystemEvent, root: str) -> Iterator[PathChange]:
    """The paths under ``root`` that ``event`` touched (none for opens and folder mtime bumps)."""
    kind = event.event_type
    if kind in _SKIPPED_TYPES or (event.is_directory and kind in ("modified", "attrib")):
        return
    src = _relative(event.src_path, root)
    if src is not None:
        yield PathChange(src, event.is_directory, gone=kind in ("deleted", "moved"))
    if kind == "moved" and event.dest_path:
        dest = _relative(event.dest_path, root)
        if dest is not None:
            yield PathChange(dest, event.is_directory, gone=False)


def _relative(path: bytes | str, root: str) -> str | None:
    text = os.fsdecode(path)
    if not text:
        return None
    if text == root:
        return ""
    prefix = root if root.endswith(os.sep) else root + os.sep
    if not text.startswith(prefix):
        return None
    rel = text[len(prefix) :]
    return display_path(rel.replace(os.sep, "/") if os.sep != "/" else rel)


class ChangeHandler(FileSystemEventHandler):
    """Feeds the dirty paths of one project's events to ``mark`` (``""`` = whole project)."""

    def __init__(
        self,
        root: Path,
        mark: Callable[[str], None],
        *,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        on_root_gone: Callable[[], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        self.root = root
        self._root_text = str(root)
        self._include = tuple(include)
        self._exclude = tuple(exclude)
        self._mark = mark
        self._on_root_gone = on_root_gone
        self._on_error = on_error
        self.rules = IgnoreRules(root, self._include, self._exclude)
        """The project's ignore rules; replaced when ``.git/info/exclude`` changes."""

    def dispatch(self, event: FileSystemEvent) -> None:
        """Handle one event; an error is reported, never raised into watchdog's thread."""
        try:
            for change in iter_changes(event, self._root_text):
                self.handle(change)
        except Exception as exc:  # a raise here would silently end the observer thread
            log.exception("watcher: cannot handle %r", event)
            if self._on_error is not None:
                self._on_error(exc)

    def handle(self, change: PathChange) -> None:
        """Mark what ``change`` makes dirty, if anything."""
        rel = change.rel_path
        if not rel:
            if change.gone and self._on_root_gone is not None:
                self._on_root_gone()
            return
        folder, _, name = rel.rpartition("/")
        if rel == _GIT_INFO_EXCLUDE and not change.is_dir:
            self.rules = IgnoreRules(self.root, self._include, self._exclude)
            self._mark("")
        elif name in IGNORE_FILES and not change.is_dir:
            if not (folder and self.rules.ignored(folder, is_dir=True)):
                self.rules.invalidate()
                self._mark(folder)
        elif not is_editor_temp(name) and not self.rules.ignored(rel, is_dir=change.is_dir):
            self._mark(rel)
