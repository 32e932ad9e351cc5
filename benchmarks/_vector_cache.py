"""Document vectors remembered across benchmark runs (the corpora are pinned, the model is
deterministic): a re-run embeds only texts it has not seen, so the quality benchmark's
minutes go to searching, not to re-computing the same vectors.

Query vectors are never cached (their time belongs to the measured search latency), and
the throughput benchmarks use the model directly.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from blake3 import blake3

from indexer.embed import Embedder
from indexer.embed._protocol import Vectors

__all__ = ["CachedEmbedder"]


class CachedEmbedder:
    """An ``Embedder`` that keeps ``embed`` results in SQLite, keyed by model, kind of
    vector (``EmbedConfig.vector_encoder``: int8 vectors apart; torch's and the float
    ONNX graph's are the same vectors) and text."""

    def __init__(self, inner: Embedder, path: Path, kind: str = "float") -> None:
        self.inner = inner
        self._tag = "" if kind == "float" else f"@{kind}"
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), check_same_thread=False)
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vector BLOB NOT NULL)")
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def model_id(self) -> str:
        """The wrapped model's id."""
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        """The wrapped model's dimension."""
        return self.inner.dimension

    def _key(self, text: str) -> bytes:
        return blake3(f"{self.model_id}{self._tag}\0{text}".encode()).digest()

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Vectors of ``texts``: remembered ones read back, the others computed and stored."""
        keys = [self._key(t) for t in texts]
        with self._lock:
            known: dict[bytes, np.ndarray] = {}
            for start in range(0, len(keys), 500):
                part = keys[start : start + 500]
                marks = ",".join("?" * len(part))
                for key, blob in self._db.execute(
                    f"SELECT key, vector FROM vectors WHERE key IN ({marks})", part
                ):
                    known[key] = np.frombuffer(blob, dtype=np.float32)
        missing = [i for i, k in enumerate(keys) if k not in known]
        if missing:
            fresh = self.inner.embed([texts[i] for i in missing])
            with self._lock:
                self._db.executemany(
                    "INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                    [
                        (keys[i], np.asarray(v, dtype=np.float32).tobytes())
                        for i, v in zip(missing, fresh, strict=True)
                    ],
                )
                self._db.commit()
            known.update(
                (keys[i], np.asarray(v, dtype=np.float32)) for i, v in zip(missing, fresh, strict=True)
            )
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, key in enumerate(keys):
            out[row] = known[key]
        return out

    def embed_queries(self, queries: Sequence[str]) -> Vectors:
        """Queries go to the model every time (their cost is part of search latency)."""
        return self.inner.embed_queries(queries)

    def count_tokens(self, text: str) -> int:
        """The wrapped model's token count."""
        return self.inner.count_tokens(text)

    def close(self) -> None:
        """Close the SQLite file."""
        with self._lock:
            self._db.close()
