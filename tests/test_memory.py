"""The writer's allocator settings: memory freed between long-lived blocks goes back."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import textwrap

import pytest

from indexer.memory import MMAP_THRESHOLD, TRIM_THRESHOLD, child_env, limit_heap_growth

glibc_only = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt settings are glibc's")

# What both patterns below share: glibc's malloc, this process's RSS in MB, and ``count``
# blocks of ``size`` bytes touched, each followed by a 64-byte block that stays (as a cache
# entry made meanwhile) and so pins the heap between them.
_HEAP = textwrap.dedent(
    """
    import ctypes
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
    kept = []

    def rss():
        with open("/proc/self/status") as status:
            return next(int(l.split()[1]) // 1024 for l in status if l.startswith("VmRSS:"))

    def between_kept(count, size):
        blocks = []
        for _ in range(count):
            block = libc.malloc(size)
            libc.memset(block, 1, size)
            blocks.append(block)
            kept.append(libc.malloc(64))
        return blocks
    """
)

# 300 blocks of 1 MiB (as the model's activations or an Arrow batch) between kept blocks,
# then the big ones freed: the MB of RSS before and after the free.
_PATTERN = _HEAP + textwrap.dedent(
    """
    import sys
    if sys.argv[1] == "limit":
        from indexer.memory import limit_heap_growth
        assert limit_heap_growth()
    first = libc.malloc(4 << 20)  # a big block freed: glibc's dynamic threshold rises to it
    libc.memset(first, 1, 4 << 20)
    libc.free(first)
    blocks = between_kept(300, 1 << 20)
    before = rss()
    for block in blocks:
        libc.free(block)
    print(before, rss())
    """
)


def _rss_before_and_after_free(mode: str, env: dict[str, str] | None = None) -> tuple[int, int]:
    done = subprocess.run(
        [sys.executable, "-c", _PATTERN, mode],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env=env,
    )
    before, after = done.stdout.split()
    return int(before), int(after)


@glibc_only
def test_limit_heap_growth_gives_freed_blocks_back_to_the_system() -> None:
    held_before, held_after = _rss_before_and_after_free("default")
    given_before, given_after = _rss_before_and_after_free("limit")
    assert held_before >= 300  # the 300 MiB were touched both times
    assert given_before >= 300
    assert held_after >= 250  # glibc's defaults keep them between the small blocks
    assert given_after <= 100  # mapped on their own: unmapped when freed


@glibc_only
def test_limit_heap_growth_is_applied_once_per_process() -> None:
    assert limit_heap_growth() is True
    assert limit_heap_growth() is True


@glibc_only
def test_a_child_started_with_child_env_gives_freed_blocks_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's maintenance children take the writer's settings through glibc's variables."""
    for name in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_ARENA_MAX"):
        monkeypatch.delenv(name, raising=False)
    before, after = _rss_before_and_after_free("default", env=child_env())
    assert before >= 300
    assert after <= 100


def test_child_env_keeps_what_the_user_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    monkeypatch.setenv("LODE_SOMETHING", "kept")
    env = child_env()
    assert env["MALLOC_ARENA_MAX"] == "4"
    assert env["MALLOC_MMAP_THRESHOLD_"] == str(MMAP_THRESHOLD)
    assert env["MALLOC_TRIM_THRESHOLD_"] == str(TRIM_THRESHOLD)
    assert env["LODE_SOMETHING"] == "kept"


# 3,000 blocks of 64 KiB (under the mmap threshold: inside the heap) between kept blocks,
# then the big ones freed: RSS before the free, after it, and
# after ``release_free_memory`` (with what it says it released).
_FRAGMENTS = _HEAP + textwrap.dedent(
    """
    from indexer.memory import limit_heap_growth, release_free_memory
    assert limit_heap_growth()
    blocks = between_kept(3000, 64 << 10)
    before = rss()
    for block in blocks:
        libc.free(block)
    freed = rss()
    released = release_free_memory() >> 20
    print(before, freed, rss(), released)
    """
)


@glibc_only
def test_release_free_memory_gives_back_free_pages_inside_the_heap() -> None:
    """Freed blocks between blocks that stay are past the trim threshold's reach (it trims
    a heap's top only): ``malloc_trim`` gives their pages back."""
    done = subprocess.run(
        [sys.executable, "-c", _FRAGMENTS], capture_output=True, text=True, check=True, timeout=60
    )
    before, freed, after, released = (int(v) for v in done.stdout.split())
    assert before >= 180  # the 188 MiB were touched
    assert freed >= 150  # held between the small blocks that stay
    assert after <= freed - 150
    assert released >= 150


# Arrow arrays made and dropped on four threads (as phase 2's writes and cache reads make
# them: ~150 MB at once), the threads gone: anonymous RSS in MB before and after.
_ARROW = textwrap.dedent(
    """
    import sys, threading
    import numpy as np
    import pyarrow as pa
    if sys.argv[1] == "limit":
        from indexer.memory import limit_heap_growth
        assert limit_heap_growth()

    def anon():
        with open("/proc/self/status") as status:
            return next(int(l.split()[1]) // 1024 for l in status if l.startswith("RssAnon:"))

    def work():
        arrays = [pa.concat_arrays([pa.array(np.ones(20000)) for _ in range(10)]) for _ in range(30)]
        del arrays

    base = anon()
    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(pa.default_memory_pool().backend_name, pa.default_memory_pool().max_memory() >> 20, base, anon())
    """
)


def _arrow_after_free(mode: str, env: dict[str, str] | None = None) -> tuple[str, int, int, int]:
    done = subprocess.run(
        [sys.executable, "-c", _ARROW, mode], capture_output=True, text=True, check=True, timeout=60, env=env
    )
    backend, peak, base, after = done.stdout.split()
    return backend, int(peak), int(base), int(after)


@glibc_only
def test_limit_heap_growth_gives_arrows_freed_memory_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """pyarrow's own allocator (mimalloc in its wheels) kept ~175 MB of freed arrays made on
    other threads; the writer's Arrow memory goes through glibc's malloc with its settings."""
    monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL", raising=False)
    backend, peak, base, after = _arrow_after_free("limit")
    assert backend == "system"
    assert peak >= 100  # the arrays were made
    assert after <= base + 40


@glibc_only
def test_a_child_started_with_child_env_gives_arrows_freed_memory_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in (
        "ARROW_DEFAULT_MEMORY_POOL",
        "MALLOC_MMAP_THRESHOLD_",
        "MALLOC_TRIM_THRESHOLD_",
        "MALLOC_ARENA_MAX",
    ):
        monkeypatch.delenv(name, raising=False)
    backend, peak, base, after = _arrow_after_free("default", env=child_env())
    assert backend == "system"
    assert peak >= 100
    assert after <= base + 40


@glibc_only  # the "limit" mode asserts that glibc took the settings
def test_the_arrow_allocator_the_user_chose_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARROW_DEFAULT_MEMORY_POOL", "jemalloc")
    assert child_env()["ARROW_DEFAULT_MEMORY_POOL"] == "jemalloc"
    backend, _, _, _ = _arrow_after_free("limit", env=dict(os.environ))
    assert backend == "jemalloc"
