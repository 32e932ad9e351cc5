"""Stopping the long-running commands (``lode serve``, ``lode watch``) within 2 s of
SIGINT or SIGTERM, at any moment, with the index whole.

A stop waits ``STOP_WAIT`` seconds for the index writer to finish its batch; if it is still
inside the model (a batch of long chunks takes seconds) or an optimize, the stop waits
only for the write unit in progress (``Db.hold_writes``: writes that belong together
are never cut; a single write is an atomic commit) and the process leaves without it.
Once everything is closed the process exits at once, without the interpreter's teardown
(slow with torch loaded): a writer thread left inside the model must not run on.

A process started with SIGINT ignored (``nohup lode watch . &``: a shell starts background
jobs so) would never stop on Ctrl-C; ``restore_sigint`` gives SIGINT back its handler.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from types import FrameType
from typing import NoReturn

__all__ = ["FAST_EXIT", "STOP_WAIT", "exit_now", "fast_exit_wanted", "restore_sigint", "stop_on_signals"]

#: Seconds a stop waits for the index writer before leaving it to the process's exit.
STOP_WAIT = 0.8
#: The key of the click context's ``obj`` that the ``lode`` entry point sets: the command
#: owns its process (a test invoking a command in-process must not end with it).
FAST_EXIT = "fast_exit"


def restore_sigint() -> None:
    """If SIGINT is ignored (inherited from ``nohup … &``), raise ``KeyboardInterrupt`` on
    it again, as Python does when it starts with SIGINT at its default."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@contextmanager
def stop_on_signals(stop: threading.Event) -> Iterator[None]:
    """Set ``stop`` on SIGINT or SIGTERM while the block runs (a second one of either
    raises ``KeyboardInterrupt``: a user who presses Ctrl-C twice means it)."""

    def handle(signum: int, frame: FrameType | None) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def fast_exit_wanted() -> bool:
    """True when the command runs as the ``lode`` process itself (``FAST_EXIT``)."""
    import click

    context = click.get_current_context(silent=True)
    obj = context.find_root().obj if context is not None else None
    return isinstance(obj, dict) and bool(obj.get(FAST_EXIT))


def exit_now(code: int = 0) -> NoReturn:
    """Flush the output and end the process without the interpreter's teardown (after an
    orderly stop: the store is closed, the index whole)."""
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)
