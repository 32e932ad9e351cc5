"""The indexing process's memory: glibc allocator settings that keep it flat.

Phase 2 frees the model's activations, Arrow batches and Lance's buffers every batch, and
glibc keeps such freed blocks in its heaps once its *dynamic* mmap threshold has risen past
their size (it rises as big blocks are freed), spread over up to eight arenas per core, one
per thread that allocated: a long phase 2's memory grew with blocks nobody used (the
figures: docs/performance.md, "Memory and disk").

``limit_heap_growth`` fixes the thresholds (blocks of 128 KiB or more are mapped and
given back when freed; freed memory at a heap's top goes back over 128 KiB) and keeps
two arenas. Only glibc has ``mallopt`` with these parameters; elsewhere it does nothing.

``child_env`` gives the store's maintenance children (``store._lance._jobs``: compaction, index
merges and builds) the same settings through glibc's ``MALLOC_*`` variables.

``release_free_memory`` gives back the free pages inside the heaps, which the trim
threshold cannot reach (it trims a heap's top only): phase 2 calls it after each vector
write.

pyarrow allocates through its own allocator (mimalloc in its wheels), which keeps what it
freed, outside glibc's figures. ``limit_heap_growth`` and ``child_env`` send Arrow's memory
through glibc's ``malloc`` with the settings above (unless ``ARROW_DEFAULT_MEMORY_POOL``
chooses otherwise), where it goes back when freed.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from typing import Any

__all__ = [
    "ARENA_MAX",
    "ARROW_POOL",
    "MMAP_THRESHOLD",
    "TRIM_THRESHOLD",
    "child_env",
    "limit_heap_growth",
    "release_free_memory",
]

#: Blocks this big or bigger are mapped on their own and unmapped when freed (a fixed
#: threshold: setting it turns glibc's dynamic one off).
MMAP_THRESHOLD = 128 * 1024
#: Free memory above this at the top of a heap is given back to the system.
TRIM_THRESHOLD = 128 * 1024
#: Arenas glibc may create (its default: eight per core).
ARENA_MAX = 2
#: pyarrow's allocator for the writer: glibc's ``malloc``, with the settings above.
ARROW_POOL = "system"
#: The variable pyarrow reads for its default allocator (a user's choice is kept).
_ARROW_POOL_VARIABLE = "ARROW_DEFAULT_MEMORY_POOL"

# mallopt parameters (glibc's malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8


@functools.cache
def _glibc(name: str, *argtypes: Any) -> Any | None:
    """Function ``name`` of the C library the interpreter runs on, returning an int, or
    None where it has none (only glibc has ``mallopt`` and ``malloc_trim``)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError):
        return None
    function.argtypes = list(argtypes)
    function.restype = ctypes.c_int
    return function


@functools.cache
def limit_heap_growth() -> bool:
    """Set glibc's allocator so freed memory goes back to the system (once per process,
    before the model and the store allocate much: the writer calls it when it takes the
    index), and send pyarrow's allocations there too; True when glibc took the settings."""
    mallopt = _glibc("mallopt", ctypes.c_int, ctypes.c_int)
    if mallopt is None:
        return False
    settings = (
        (_M_MMAP_THRESHOLD, MMAP_THRESHOLD),
        (_M_TRIM_THRESHOLD, TRIM_THRESHOLD),
        (_M_ARENA_MAX, ARENA_MAX),
    )
    took = all(mallopt(param, value) == 1 for param, value in settings)
    if took and _ARROW_POOL_VARIABLE not in os.environ:
        import pyarrow

        pyarrow.set_memory_pool(pyarrow.system_memory_pool())
    return took


def child_env() -> dict[str, str]:
    """This process's environment with glibc's allocator variables set as
    ``limit_heap_growth`` sets them, pyarrow's allocator too (a value the user set is kept),
    for a child process."""
    env = dict(os.environ)
    env.setdefault(_ARROW_POOL_VARIABLE, ARROW_POOL)
    env.setdefault("MALLOC_MMAP_THRESHOLD_", str(MMAP_THRESHOLD))
    env.setdefault("MALLOC_TRIM_THRESHOLD_", str(TRIM_THRESHOLD))
    env.setdefault("MALLOC_ARENA_MAX", str(ARENA_MAX))
    return env


def _rss_bytes() -> int:
    """This process's resident set (0 where ``/proc`` has no ``statm``)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def release_free_memory() -> int:
    """Give the system back the free pages inside glibc's heaps (``malloc_trim``), which
    the trim threshold cannot reach (it trims only a heap's top); bytes of RSS released
    (0 elsewhere than on glibc)."""
    trim = _glibc("malloc_trim", ctypes.c_size_t)
    if trim is None:
        return 0
    before = _rss_bytes()
    trim(0)
    return max(0, before - _rss_bytes())
