"""What the index announces as it happens, for clients that follow it instead of polling
(``GET /api/v1/events``): a task's progress, files re-indexed, a project's embedding
coverage, and the index version a server answers from.

The writer (``indexer._task_queue``) and the server's ``VersionWatch`` publish on their
own threads; an ``EventHub`` hands each event to every listener at once, on that thread,
so a listener must only hand it on (the server's puts it on an event loop's queue).
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import secrets
import sys
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Final

from indexer.models import Task

__all__ = ["EVENT_KINDS", "EventHub", "IndexEvent", "Listener"]

log = logging.getLogger(__name__)

#: ``task``: a task was queued, moved or ended; ``files``: files of a project were written
#: or removed (re-indexed); ``coverage``: a project's share of chunks with a vector changed;
#: ``version``: the index this server answers from has a new version.
EVENT_KINDS: Final[tuple[str, ...]] = ("task", "files", "coverage", "version")


@dataclass(frozen=True, slots=True)
class IndexEvent:
    """One change of the index or of its writer's work."""

    kind: str
    """One of ``EVENT_KINDS``."""
    project_id: str | None = None
    """The project it concerns (None for ``version``)."""
    task: Task | None = None
    """``task``: the task as it is now."""
    rate: float = 0.0
    """``task``: its embedding rate (chunks/s) in phase 2."""
    paths: tuple[str, ...] = ()
    """``files``: project-relative paths written or removed."""
    chunks_total: int = 0
    """``coverage``: chunks of the project."""
    chunks_embedded: int = 0
    """``coverage``: chunks of the project with a vector."""
    semantic_coverage: float = 0.0
    """``coverage``: their share, 0-1."""
    version: int | None = None
    """``version``: the chunk table version now answered from."""
    id: int = 0
    """Its place in the order the hub published events (from 1; 0 before it is published)."""


Listener = Callable[[IndexEvent], None]


class EventHub:
    """Hands every published event to every listener, on the publishing thread, and keeps
    the latest ones so a client that reconnects gets what it missed."""

    RECENT_EVENTS: ClassVar[int] = 1000
    """Events kept for replay."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: dict[int, Listener] = {}
        self._ids = itertools.count(1)
        self._last = 0
        self.run = secrets.token_hex(4)
        """This hub's run: event ids count from 1 again in each (a restarted server)."""
        self._recent: deque[IndexEvent] = deque(maxlen=self.RECENT_EVENTS)

    @property
    def listening(self) -> bool:
        """True while someone listens (publishers skip work no one would see)."""
        return bool(self._listeners)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Start handing events to ``listener``; returns what stops it."""
        return self.subscribe_after(sys.maxsize, listener)[2]

    def subscribe_after(
        self, last_id: int, listener: Listener
    ) -> tuple[list[IndexEvent], int, Callable[[], None]]:
        """Like ``subscribe``, with the kept events published after ``last_id`` (in order) and
        how many of those were no longer kept; nothing falls between the two."""
        key = next(self._ids)
        with self._lock:
            self._listeners[key] = listener
            missed = [e for e in self._recent if e.id > last_id]
            first = missed[0].id if missed else self._last + 1
            lost = max(0, first - last_id - 1)

        def unsubscribe() -> None:
            with self._lock:
                self._listeners.pop(key, None)

        return missed, lost, unsubscribe

    def publish(self, event: IndexEvent) -> None:
        """Number ``event``, keep it, and hand it to every listener (one that fails is
        logged and skipped)."""
        with self._lock:
            self._last += 1
            event = dataclasses.replace(event, id=self._last)
            self._recent.append(event)
            listeners = list(self._listeners.values())
        for listener in listeners:
            try:
                listener(event)
            except Exception:
                log.debug("an event listener failed", exc_info=True)
