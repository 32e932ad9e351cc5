"""Kite: run functions on fixed intervals, retrying the ones that fail."""

from kite.retry import RetryPolicy, backoff_delay
from kite.scheduler import Job, Scheduler

__all__ = ["Job", "RetryPolicy", "Scheduler", "backoff_delay"]
