"""The scheduler: a heap of jobs ordered by when they are next due."""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(order=True)
class Job:
    """A function to run every ``interval`` seconds."""

    due: float
    name: str = field(compare=False)
    interval: float = field(compare=False)
    run: Callable[[], None] = field(compare=False)


class Scheduler:
    """Runs due jobs, one tick at a time."""

    def __init__(self, tick: float = 1.0) -> None:
        self.tick = tick
        self.jobs: list[Job] = []

    def add_job(self, name: str, interval: float, run: Callable[[], None]) -> Job:
        """Register a function to run every ``interval`` seconds."""
        job = Job(time.monotonic() + interval, name, interval, run)
        heapq.heappush(self.jobs, job)
        return job

    def run_pending(self, now: float) -> int:
        """Run every job that is due at ``now``; return how many ran."""
        ran = 0
        while self.jobs and self.jobs[0].due <= now:
            job = heapq.heappop(self.jobs)
            job.run()
            job.due = now + job.interval
            heapq.heappush(self.jobs, job)
            ran += 1
        return ran


def parse_interval(text: str) -> float:
    """Seconds in an interval such as ``5m`` or ``2h``."""
    units = {"s": 1, "m": 60, "h": 3600}
    return float(text[:-1]) * units[text[-1]]
