"""Searches in flight, so that the index writer's phase 2 can yield the cores to them.

Even at niceness 10 the model embedding a backlog takes a share of the CPU from searches
asked back to back (it fills every gap between them), and slows them (docs/performance.md,
"History and notes"). While searches run, phase 2 therefore embeds in small batches
and waits before each for a pause in the searches, at most a few times as long as its last
batch took, so it never stops for good however many searches arrive (under searches asked
back to back it keeps a small share of its pace; see ``vectorizer._YIELD_WAIT_FACTOR``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["QUIET_SECONDS", "SearchActivity"]

#: A search ended this recently still counts as activity (the next one of a client asking
#: back to back arrives within a few ms).
QUIET_SECONDS = 0.05
#: How often a waiting writer checks whether it was asked to stop (a saved file queued).
_STOP_POLL = 0.02


class SearchActivity:
    """A count of searches in flight and the time the last one ended (thread-safe)."""

    def __init__(self, quiet: float = QUIET_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        """No search yet; ``quiet`` is how long after a search the activity lasts."""
        self.quiet = quiet
        self._clock = clock
        self._in_flight = 0
        self._last_end = -float("inf")
        self._changed = threading.Condition()
        self.started = 0
        """Searches begun so far."""

    def begin(self) -> None:
        """A search starts."""
        with self._changed:
            self._in_flight += 1
            self.started += 1

    def end(self) -> None:
        """A search ends."""
        with self._changed:
            self._in_flight = max(0, self._in_flight - 1)
            self._last_end = self._clock()
            self._changed.notify_all()

    @contextmanager
    def searching(self) -> Iterator[None]:
        """Count the enclosed block as a search in flight."""
        self.begin()
        try:
            yield
        finally:
            self.end()

    def busy(self) -> bool:
        """True while a search runs or one ended less than ``quiet`` seconds ago."""
        with self._changed:
            return self._busy()

    def _busy(self) -> bool:
        return self._in_flight > 0 or self._clock() - self._last_end < self.quiet

    def wait_for_pause(self, limit: float, stop: Callable[[], bool] | None = None) -> float:
        """Block until no search has run for ``quiet`` seconds, ``limit`` seconds passed, or
        ``stop()`` is true (checked every ``_STOP_POLL`` s); returns the seconds waited."""
        began = self._clock()
        with self._changed:
            while self._busy() and not (stop is not None and stop()):
                left = limit - (self._clock() - began)
                if left <= 0:
                    break
                if not self._in_flight:
                    left = min(left, self._last_end + self.quiet - self._clock())
                self._changed.wait(left if stop is None else min(left, _STOP_POLL))
        return self._clock() - began
