"""A deterministic embedder for unit tests: hashed bag of words and identifier parts.

Cosine similarity of two vectors is (up to hash collisions) the overlap of the texts'
words, so ranking tests behave sensibly, and the same text always gives the same vector.
Inject it through constructors; never patch.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Sequence

import blake3
import numpy as np

from indexer.embed._protocol import Vectors
from indexer.lexicon import split_identifier

__all__ = ["FakeEmbedder"]

_WORD = re.compile(r"[A-Za-z0-9_]+")


class FakeEmbedder:
    """Deterministic hashed bag-of-words vectors; counts the texts it embedded."""

    def __init__(self, dimension: int = 256, model_id: str = "fake-hash-256", delay: float = 0.0) -> None:
        self.dimension = dimension
        self.model_id = model_id
        #: Seconds slept per text embedded, to imitate a slow model in tests.
        self.delay = delay
        self._lock = threading.Lock()
        self.texts_embedded = 0
        self.fail_on: str | None = None

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed texts; raises if a text contains ``fail_on`` (to test failure handling)."""
        if self.fail_on is not None and any(self.fail_on in t for t in texts):
            raise RuntimeError(f"fake model refuses texts containing {self.fail_on!r}")
        if self.delay:
            time.sleep(self.delay * len(texts))
        with self._lock:
            self.texts_embedded += len(texts)
        return self._vectors(texts)

    def embed_queries(self, queries: Sequence[str]) -> Vectors:
        """Embed queries the same way as documents."""
        return self._vectors(queries)

    def count_tokens(self, text: str) -> int:
        """Words and identifier parts, as a stand-in for word-pieces."""
        return sum(max(1, len(split_identifier(w))) for w in _WORD.findall(text))

    def _vectors(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text):
                for part in {word.lower(), *split_identifier(word)}:
                    digest = blake3.blake3(part.encode()).digest(4)
                    out[row, int.from_bytes(digest, "little") % self.dimension] += 1.0
            norm = float(np.linalg.norm(out[row]))
            if norm == 0.0:
                out[row, 0] = 1.0
            else:
                out[row] /= norm
        return out
