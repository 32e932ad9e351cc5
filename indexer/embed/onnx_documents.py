"""Document embedding on ONNX Runtime: phase 2's batches through the exported graph.

Phase 2 is bound by the model's encode rate, and ONNX Runtime runs the same graph as
torch faster on the CPU. The graph is the one queries use (``onnx_queries``: transformer,
mean pooling and L2 normalisation, exported once into lode's cache); documents are fed in
length buckets: a call's texts are tokenized once, sorted by their word-piece count, and
each run of ``batch_size`` of them is padded only to its own longest text.

The float graph's vectors equal torch's (cosine ≥ 0.9999, a slow test checks it on code
texts), so an index embedded by torch and one embedded by this encoder are one vector
space: the store keys them alike. The int8 graph (``document_encoder = "onnx-int8"``) makes
other vectors (cosine ~0.999 to torch's; each token's activations are quantized over
their own range, ``indexer.embed._int8``, so a text's vector does not depend on its
batch); the store keys int8 vectors apart
(``indexer.store``: an index embedded by the other kind is embedded again, progressively).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from indexer.embed._protocol import Vectors
from indexer.embed.onnx_queries import exported_graph
from indexer.embed.query_graph import open_session, run_graph

__all__ = [
    "BUCKET_TOKENS",
    "OnnxDocumentEncoder",
    "default_threads",
    "length_buckets",
    "onnx_document_encoder",
]

log = logging.getLogger(__name__)


def onnx_document_encoder(
    model: Any, model_dir: str, *, batch_size: int, threads: int | None
) -> OnnxDocumentEncoder | None:
    """An encoder of document texts equivalent to ``model.encode(...,
    normalize_embeddings=True)`` through the model's exported float graph (for a process
    that loaded torch anyway; the int8 graph runs in ``onnx_embedder``, without torch);
    None for a model layout the export does not handle. Failures to export raise (the
    caller decides what falls back to what)."""
    graph = exported_graph(model, model_dir)
    if graph is None:
        return None
    backend = getattr(getattr(model[0], "tokenizer", None), "backend_tokenizer", None)
    if backend is None:  # a slow (Python) tokenizer: torch tokenizes, torch encodes
        return None
    return OnnxDocumentEncoder(
        graph,
        backend.to_str(),
        int(model.max_seq_length),
        batch_size,
        threads or default_threads(),
        quantized=False,
    )


#: Word-pieces (rows × padded width) one run may hold: the graph materializes each layer's
#: attention scores (rows × 12 heads × width²) where torch's fused attention does not, so
#: 32 texts of 256 word-pieces took ~110 MB more at the peak than torch; 8 of them (32 of
#: 64) peak as torch does (measured with the writer's allocator settings,
#: ``indexer.memory``).
BUCKET_TOKENS = 2048


def length_buckets(lengths: Sequence[int], batch_size: int, tokens: int = BUCKET_TOKENS) -> list[list[int]]:
    """Indexes of ``lengths`` sorted by length (longest first: a failure on memory shows at
    once), cut into runs of at most ``batch_size`` texts and ``tokens`` word-pieces once
    padded (at least one text): each run is padded to its own longest."""
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    buckets: list[list[int]] = []
    for i in order:
        if (
            buckets
            and len(buckets[-1]) < batch_size
            and lengths[buckets[-1][0]] * (len(buckets[-1]) + 1) <= tokens
        ):
            buckets[-1].append(i)
        else:
            buckets.append([i])
    return buckets


class OnnxDocumentEncoder:
    """Unit vectors of document texts through an exported graph, in length buckets."""

    def __init__(
        self,
        graph: Path,
        tokenizer: str,
        max_length: int,
        batch_size: int,
        threads: int,
        *,
        quantized: bool,
        one_thread: Any = None,
    ) -> None:
        """``one_thread``: a session of one intra-op thread on the same graph to run
        ``one_thread`` calls on (a query encoder's: one session's weights fewer); without
        it one is opened on first use."""
        from tokenizers import Tokenizer

        self.graph = graph
        """The ONNX file this encoder runs."""
        self.quantized = quantized
        """True for the int8 graph (vectors keyed apart from torch's)."""
        self._tokenizer = Tokenizer.from_str(tokenizer)
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_length=max_length)
        self._batch_size = batch_size
        self._session = open_session(str(graph), threads, batches=True)
        self._one_thread: Any = one_thread
        self._lock = threading.Lock()

    def __call__(self, texts: Sequence[str], *, one_thread: bool = False) -> Vectors:
        """The unit vectors of ``texts``, in input order (``one_thread``: on a session of
        one intra-op thread, opened on first use, for a writer yielding to searches)."""
        with self._lock:
            # stripped, as sentence-transformers strips a text before tokenizing it
            encodings = [e.ids for e in self._tokenizer.encode_batch([text.strip() for text in texts])]
            session = self._session
            if one_thread:
                if self._one_thread is None:
                    self._one_thread = open_session(str(self.graph), 1, batches=True)
                session = self._one_thread
        parts: list[tuple[list[int], np.ndarray]] = []
        for bucket in length_buckets([len(ids) for ids in encodings], self._batch_size):
            width = max(len(encodings[i]) for i in bucket)
            ids = np.zeros((len(bucket), width), dtype=np.int64)
            mask = np.zeros((len(bucket), width), dtype=np.int64)
            for row, i in enumerate(bucket):
                ids[row, : len(encodings[i])] = encodings[i]
                mask[row, : len(encodings[i])] = 1
            parts.append((bucket, run_graph(session, ids, mask)))
        if not parts:
            return np.zeros((0, 0), dtype=np.float32)
        out = np.empty((len(texts), parts[0][1].shape[1]), dtype=np.float32)
        for bucket, vectors in parts:
            out[np.asarray(bucket)] = vectors
        return out


def default_threads() -> int:
    """Intra-op threads of the document session when none are configured: the cores this
    process may use, at most 8 (ONNX Runtime's own default counts the machine's)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(1, min(8, cores))
