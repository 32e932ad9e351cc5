"""The interface every embedding model implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = ["Embedder", "Vectors", "embed_on_one_thread"]

#: A float32 matrix of unit-length rows, one per input text.
Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors of a fixed dimension."""

    @property
    def model_id(self) -> str:
        """Stable id recorded in the store (a different id means different vectors)."""
        ...

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed document texts (chunks) as an ``(n, dimension)`` matrix."""
        ...

    def embed_queries(self, queries: Sequence[str]) -> Vectors:
        """Embed search queries as an ``(n, dimension)`` matrix."""
        ...

    def count_tokens(self, text: str) -> int:
        """Number of model tokens in ``text`` (for prompt budgets)."""
        ...


def embed_on_one_thread(embedder: Embedder, texts: Sequence[str]) -> Vectors:
    """``embedder.embed(texts)`` on one CPU thread where the embedder can limit its threads
    (``embed_on_one_thread``: a writer yielding the other cores to searches)."""
    limited = getattr(embedder, "embed_on_one_thread", None)
    return limited(texts) if limited is not None else embedder.embed(texts)
