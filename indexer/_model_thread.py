"""Phase 2's model calls on a thread of their own, which a save does not wait for."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

import numpy as np

from indexer.embed import Vectors

__all__ = ["ModelThread"]

#: How often the writer, waiting for a model call on the ``ModelThread``, checks whether a
#: save waits.
_MODEL_POLL_SECONDS = 0.01


class ModelThread:
    """The thread that runs phase 2's model calls for the index writer, which waits for each
    call while watching its stop signal: a save stops the pass at once, without waiting for
    the call in progress (half a second of CPU on 2 cores), which goes on here. Its vectors
    are not lost: the next pass gets them (``leftovers``) and puts them in the embedding
    cache, where they are found by the hash of the text they were made from."""

    def __init__(self, initializer: Callable[[], object] | None = None) -> None:
        self._pool = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="lode-model", initializer=initializer
        )
        self._left: list[tuple[list[str], Future[Vectors]]] = []
        self._lock = threading.Lock()

    def call(
        self,
        fn: Callable[[list[str]], Vectors],
        texts: list[str],
        keys: list[str],
        stopped: Callable[[], bool],
    ) -> Vectors | None:
        """``fn(texts)`` on the model's thread; None when ``stopped()`` first (the call goes
        on, its vectors kept by ``keys``, the texts' hashes, for ``leftovers``)."""
        future = self._pool.submit(fn, texts)
        while True:
            try:
                return future.result(timeout=_MODEL_POLL_SECONDS)
            except FutureTimeout:
                if stopped():
                    with self._lock:
                        self._left.append((keys, future))
                    return None

    def leftovers(self) -> dict[str, np.ndarray]:
        """Vectors of the calls a stop left that have ended since, by text hash (a call
        still running stays for the next time; one that failed is dropped)."""
        found: dict[str, np.ndarray] = {}
        with self._lock:
            ended = [(k, f) for k, f in self._left if f.done()]
            self._left = [(k, f) for k, f in self._left if not f.done()]
        for keys, future in ended:
            if future.exception() is not None:
                continue
            vectors = np.asarray(future.result())
            found.update(zip(keys, vectors, strict=False))
        return found

    def close(self) -> None:
        """Let the call in progress end on its own (never waited for)."""
        self._pool.shutdown(wait=False, cancel_futures=True)
