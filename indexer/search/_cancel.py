"""Stopping a search whose client went away: the caller runs it inside ``cancellable``
with an event it sets once the client is gone, and the search checks it between its
stages (``raise_if_cancelled``), so the thread is free for the next search at once."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from indexer.errors import SearchCancelledError

__all__ = ["cancellable", "raise_if_cancelled"]

_CANCEL: ContextVar[threading.Event | None] = ContextVar("lode_search_cancel", default=None)


@contextmanager
def cancellable(event: threading.Event) -> Iterator[None]:
    """Searches run inside stop at their next stage once ``event`` is set."""
    token = _CANCEL.set(event)
    try:
        yield
    finally:
        _CANCEL.reset(token)


def raise_if_cancelled() -> None:
    """Raise ``SearchCancelledError`` when the search running here was cancelled."""
    event = _CANCEL.get()
    if event is not None and event.is_set():
        raise SearchCancelledError("search cancelled: its client went away")
