"""The interface every embedding model implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = ["Embedder", "Vectors"]

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
