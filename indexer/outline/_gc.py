"""Building outlines without the cyclic garbage collector's full passes."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while a build allocates many long-lived objects.

    A build makes hundreds of thousands of small objects that survive it; the collector's
    full passes over them cost more than the build itself.
    The outline holds no reference cycles, so pausing loses nothing; reference counting
    keeps freeing memory meanwhile.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
