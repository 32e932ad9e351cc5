"""Debouncing: many file events become one batch of dirty paths.

A batch is due when no event arrived for the quiet window, or at the latest the
maximum delay after its first event, so a steady stream of saves still lands. Paths
are coalesced (a path under a dirty folder adds nothing) and bounded: past
``max_paths`` the deepest paths are replaced by their folders, level by level, and
past the top level the batch becomes "the whole project". Time comes from an
injectable clock, so tests drive it without sleeping.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["CHECKS", "Batch", "Clock", "Debouncer"]

#: Monotonic seconds; ``time.monotonic`` unless a test injects its own.
Clock = Callable[[], float]
#: Whole-project diffs that are checks: most find nothing (``TaskSink.submit_check``).
CHECKS = frozenset({"reconcile", "rescan", "recovered", "overflow"})


@dataclass(frozen=True, slots=True)
class Batch:
    """Paths that changed together, sent to the writer as one partial-update task."""

    paths: tuple[str, ...]
    """Project-relative POSIX paths of files or folders, sorted, none under another."""
    whole_project: bool
    """True when the whole project is to be re-diffed (``paths`` is then empty)."""
    events: int
    """File system events folded into this batch."""
    first_event_at: float
    """Clock time of the first event."""
    last_event_at: float
    """Clock time of the last event."""
    reason: str = "changes"
    """Why the batch was sent: ``changes``, ``reconcile`` (start), ``rescan`` (safety net),
    ``recovered`` (the folder is back) or ``overflow`` (the kernel dropped events)."""

    @property
    def submit_paths(self) -> tuple[str, ...]:
        """The ``paths`` argument of ``IndexWorker.submit`` (empty = whole project)."""
        return () if self.whole_project else self.paths

    @classmethod
    def whole(cls, reason: str, now: float) -> Batch:
        """A whole-project diff asked for at ``now`` (no event behind it)."""
        return cls(
            paths=(), whole_project=True, events=0, first_event_at=now, last_event_at=now, reason=reason
        )

    def merge(self, other: Batch) -> Batch:
        """One batch for two: the whole project when either is, else both batches' paths; a
        check only when both are checks."""
        whole = self.whole_project or other.whole_project
        both_checks = self.reason in CHECKS and other.reason in CHECKS
        return Batch(
            paths=() if whole else tuple(sorted({*self.paths, *other.paths})), whole_project=whole,
            events=self.events + other.events, first_event_at=min(self.first_event_at, other.first_event_at),
            last_event_at=max(self.last_event_at, other.last_event_at),
            reason=self.reason if both_checks else "changes",
        )  # fmt: skip


class Debouncer:
    """Collects dirty paths and says when they are due; thread-safe, no thread of its own."""

    def __init__(
        self, *, quiet: float, max_delay: float, max_paths: int = 256, clock: Clock = time.monotonic
    ) -> None:
        if quiet <= 0 or max_delay <= 0 or max_paths <= 0:
            raise ValueError("quiet, max_delay and max_paths must be > 0")
        self.quiet = quiet
        self.max_delay = max_delay
        self.max_paths = max_paths
        self._clock = clock
        self._lock = threading.Lock()
        self._paths: set[str] = set()
        self._whole = False
        self._events = 0
        self._first = 0.0
        self._last = 0.0

    # ---- feeding ---------------------------------------------------------------------
    def add(self, path: str) -> bool:
        """Mark ``path`` dirty (``""`` = the whole project); True if it opened a new batch."""
        now = self._clock()
        path = path.strip("/")
        with self._lock:
            opened = self._events == 0
            if opened:
                self._first = now
            self._last = now
            self._events += 1
            self._add_locked(path)
        return opened

    def _add_locked(self, path: str) -> None:
        if self._whole:
            return
        if not path:
            self._whole = True
            self._paths.clear()
            return
        if _covered(path, self._paths):
            return
        self._paths.add(path)
        if len(self._paths) > self.max_paths:
            self._collapse()

    def _collapse(self) -> None:
        """Replace the deepest paths by their folders until the set fits."""
        while len(self._paths) > self.max_paths:
            deepest = max(p.count("/") for p in self._paths)
            if deepest == 0:
                self._whole = True
                self._paths.clear()
                return
            kept = {p for p in self._paths if p.count("/") < deepest}
            kept |= {p.rsplit("/", 1)[0] for p in self._paths if p.count("/") == deepest}
            self._paths = _minimal(kept)

    # ---- reading ---------------------------------------------------------------------
    @property
    def pending_events(self) -> int:
        """Events waiting in the current batch."""
        return self._events

    @property
    def pending_paths(self) -> int:
        """Distinct paths waiting (0 with a whole-project batch)."""
        return len(self._paths)

    def due_at(self) -> float | None:
        """Clock time at which the pending batch is due (None when nothing is pending)."""
        with self._lock:
            if not self._events:
                return None
            return min(self._last + self.quiet, self._first + self.max_delay)

    def poll(self, now: float | None = None) -> Batch | None:
        """The pending batch if it is due at ``now`` (default: the clock), else None."""
        now = self._clock() if now is None else now
        with self._lock:
            if not self._events or now < min(self._last + self.quiet, self._first + self.max_delay):
                return None
            return self._take_locked()

    def take(self) -> Batch | None:
        """The pending batch now, due or not (None when nothing is pending)."""
        with self._lock:
            return self._take_locked() if self._events else None

    def _take_locked(self) -> Batch:
        batch = Batch(
            paths=() if self._whole else tuple(sorted(_minimal(self._paths))),
            whole_project=self._whole,
            events=self._events,
            first_event_at=self._first,
            last_event_at=self._last,
        )
        self._paths = set()
        self._whole = False
        self._events = 0
        return batch


def _covered(path: str, paths: set[str]) -> bool:
    """True if ``path`` or one of its folders is already in ``paths``."""
    return path in paths or _under_any(path, paths)


def _under_any(path: str, paths: set[str]) -> bool:
    """True if a folder above ``path`` is in ``paths``."""
    cut = path.find("/")
    while cut != -1:
        if path[:cut] in paths:
            return True
        cut = path.find("/", cut + 1)
    return False


def _minimal(paths: set[str]) -> set[str]:
    """``paths`` without those that lie under another member."""
    return {p for p in paths if not _under_any(p, paths)}
