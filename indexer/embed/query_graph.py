"""Query embedding without torch: the exported ONNX graph and the model's tokenizer alone.

A process that only searches (a search process of ``lode serve``) needs query vectors,
not the model: loading sentence-transformers and torch costs ~500 MB of memory per
process. ``QueryGraph`` names what a loaded model's ONNX query encoder uses (the graph
file, the tokenizer as JSON, the sequence limit), so another process can embed queries
with ONNX Runtime and the ``tokenizers`` library only, and get the same vectors: the same
graph, fed the same word-pieces, one text at a time.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from indexer.embed._protocol import Embedder, Vectors

__all__ = ["QueryGraph", "QueryGraphEmbedder", "query_graph_of", "run_graph"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class QueryGraph:
    """What embedding a query through an exported graph needs."""

    graph: str
    """The ONNX file (transformer, mean pooling and L2 normalisation in one graph)."""
    tokenizer: str
    """The model's fast tokenizer, serialised (``tokenizers.Tokenizer.to_str``)."""
    max_length: int
    """Word-pieces the model reads (longer queries are cut, as the model cuts them)."""
    threads: int = 1
    """ONNX Runtime intra-op threads."""


def query_graph_of(embedder: object) -> QueryGraph | None:
    """``embedder.query_graph()`` for an embedder that has one (the real model, and the lazy
    one in front of it, which loads it first); None otherwise."""
    method = getattr(embedder, "query_graph", None)
    graph = method() if callable(method) else None
    return graph if isinstance(graph, QueryGraph) else None


def run_graph(session: Any, input_ids: Any, attention_mask: Any) -> np.ndarray:
    """The unit vectors an exported graph makes of a batch of word-piece ids and their mask."""
    ids, mask = np.asarray(input_ids, dtype=np.int64), np.asarray(attention_mask, dtype=np.int64)
    return np.asarray(session.run(None, {"input_ids": ids, "attention_mask": mask})[0], dtype=np.float32)


def open_session(path: str, threads: int, *, batches: bool = False) -> Any:
    """An ONNX Runtime session as query encoders use it: ``threads`` intra-op threads that
    sleep when idle, every graph optimisation. ``batches`` (document batches of many
    shapes): no memory pattern (a plan for one shape), but ONNX Runtime's memory arena,
    which reuses its blocks from one operator to the next. Without it each operator's
    output is a block of its own from ``malloc``, which the indexing process maps and
    unmaps for every block of 128 KiB or more (``indexer.memory``): the page faults made
    document batches ~2.8× slower (docs/performance.md). The arena keeps what the largest
    run needed, which ``BUCKET_TOKENS`` bounds; the process's sessions share one arena
    (``_shared_arena``)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    if batches:
        options.enable_mem_pattern = False
    if _shared_arena():
        options.add_session_config_entry("session.use_env_allocators", "1")
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # idle threads sleep: a search must not take CPU from indexing between queries
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


@functools.cache
def _shared_arena() -> bool:
    """Register one memory arena for every session of this process (once; True when ONNX
    Runtime took it). A writer's document session and its one-thread session (or a query
    session) each kept an arena as large as the largest batch's intermediates, ~130 MB for
    the int8 graph; they rarely run at once, and one arena serves both."""
    import onnxruntime as ort

    try:
        memory = ort.OrtMemoryInfo("Cpu", ort.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, ort.OrtMemType.DEFAULT)
        ort.create_and_register_allocator(memory, ort.OrtArenaCfg({}))
    except Exception as exc:  # an older runtime, or one registered already: sessions keep their own
        log.debug("sessions keep their own memory arenas: %s", exc)
        return False
    return True


class QueryGraphEmbedder:
    """Embeds queries through a ``QueryGraph``; document texts (which a search never
    embeds) go to the full model, loaded on first use by ``load_model``."""

    def __init__(
        self, spec: QueryGraph, model_id: str, dimension: int, load_model: Callable[[], Embedder]
    ) -> None:
        from tokenizers import Tokenizer

        self.model_id = model_id
        self.dimension = dimension
        self._tokenizer = Tokenizer.from_str(spec.tokenizer)
        self._tokenizer.no_padding()
        self._max_length = spec.max_length
        self._tokenizer.enable_truncation(max_length=spec.max_length)
        self._tokenizer_lock = threading.Lock()
        self._session = open_session(spec.graph, spec.threads)
        self._load_model = load_model
        self._model: Embedder | None = None
        self._model_lock = threading.Lock()

    @property
    def session(self) -> Any:
        """The ONNX Runtime session queries run on (thread-safe: another user may share it)."""
        return self._session

    def embed_queries(self, queries: Sequence[str]) -> Vectors:
        """Embed queries, one at a time (no padding to compute)."""
        out = np.zeros((len(queries), self.dimension), dtype=np.float32)
        for row, text in enumerate(queries):
            with self._tokenizer_lock:
                encoding = self._tokenizer.encode(text)
            out[row] = run_graph(self._session, [encoding.ids], [encoding.attention_mask])[0]
        return out

    def count_tokens(self, text: str) -> int:
        """Word-pieces of ``text`` (no special tokens, no truncation)."""
        with self._tokenizer_lock:
            self._tokenizer.no_truncation()
            try:
                return len(self._tokenizer.encode(text, add_special_tokens=False).ids)
            finally:
                self._tokenizer.enable_truncation(max_length=self._max_length)

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed document texts with the full model (loaded on first use)."""
        with self._model_lock:
            if self._model is None:
                self._model = self._load_model()
        return self._model.embed(texts)
