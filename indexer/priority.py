"""Thread priorities: the index writer yields the cores to searches (Linux niceness is per
thread, and threads and processes inherit their creator's)."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable

__all__ = ["lower_thread_priority", "threads_named"]

log = logging.getLogger(__name__)


def lower_thread_priority(nice: int, tid: int | None = None) -> bool:
    """Raise the niceness of thread ``tid`` (the calling thread by default) to ``nice``; True
    when it is at least that now. Nothing happens where the platform does not allow it."""
    if nice <= 0 or not hasattr(os, "setpriority"):
        return False
    tid = threading.get_native_id() if tid is None else tid
    try:
        if os.getpriority(os.PRIO_PROCESS, tid) < nice:
            os.setpriority(os.PRIO_PROCESS, tid, nice)
    except OSError as exc:  # a sandbox may refuse; the thread may have ended
        log.info("thread %d keeps its priority (%s)", tid, exc)
        return False
    return True


def threads_named(prefixes: Iterable[str]) -> list[int]:
    """Native ids of this process's threads whose OS name starts with one of ``prefixes``
    (Linux; empty elsewhere)."""
    wanted = tuple(prefixes)
    found: list[int] = []
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return found
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/comm", encoding="utf-8") as comm:
                if comm.read().strip().startswith(wanted):
                    found.append(int(tid))
        except OSError:  # ended meanwhile
            continue
    return found
