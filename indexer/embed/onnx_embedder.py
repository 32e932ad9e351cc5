"""Documents and queries on the model's exported graphs alone: no torch in the process.

With ``document_encoder`` ``onnx`` or ``onnx-int8``, documents run on ONNX Runtime; the
torch model was then held only to tokenize, to count tokens and to embed queries on its
own copy: two float copies of the weights (~90 MB each) beside torch's libraries
(~300 MB), for nothing the graph cannot do. ``GraphEmbedder`` needs only the graph files
and the tokenizer that an export left in lode's cache (``onnx_queries``): documents through
``OnnxDocumentEncoder``, queries and token counts through ``QueryGraphEmbedder``. When the
cache has no graph yet, a child process exports it (``_export``), so torch never enters
this process. Queries on the same graph as documents, with one thread each, share one
session: the one-thread document session of a writer yielding to searches is the query
session (the graph's weights are held twice, not three times).

The float graph's vectors equal torch's, so with ``onnx`` a graph that fails falls back to
the torch model (loaded then); the int8 graph's vectors are keyed apart, so with
``onnx-int8`` documents never fall back (queries may: their vectors stay within cosine
0.999 of the graph's).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from indexer.config import EmbedConfig
from indexer.embed._export import export_in_child
from indexer.embed._protocol import Embedder, Vectors, embed_on_one_thread
from indexer.embed.onnx_documents import OnnxDocumentEncoder, default_threads
from indexer.embed.onnx_queries import cached_query_graph, cannot_export_marker, forget_graph, int8_path
from indexer.embed.query_graph import QueryGraph, QueryGraphEmbedder
from indexer.errors import EmbedError

__all__ = ["GraphEmbedder", "load_graph_embedder"]

log = logging.getLogger(__name__)


class GraphEmbedder:
    """The model's documents, queries and token counts on its exported graphs (no torch)."""

    def __init__(
        self,
        documents: OnnxDocumentEncoder,
        queries: QueryGraphEmbedder,
        query_graph: QueryGraph,
        fallback: Callable[[], Embedder],
    ) -> None:
        self.model_id = queries.model_id
        self.dimension = queries.dimension
        self._documents: OnnxDocumentEncoder | None = documents
        self._quantized = documents.quantized
        self._queries: QueryGraphEmbedder | None = queries
        self._query_graph = query_graph
        self._load_fallback = fallback
        self._fallback: Embedder | None = None
        self._lock = threading.Lock()

    @property
    def document_encoder(self) -> str:
        """What embeds document texts now: ``onnx``, ``onnx-int8`` or ``torch``."""
        if self._documents is None:
            return "torch"
        return "onnx-int8" if self._quantized else "onnx"

    def embed(self, texts: Sequence[str]) -> Vectors:
        """The unit vectors of document texts, in input order."""
        return self._embed(texts, one_thread=False)

    def embed_on_one_thread(self, texts: Sequence[str]) -> Vectors:
        """``embed`` on one intra-op thread (a writer yielding the other cores to searches)."""
        return self._embed(texts, one_thread=True)

    def _embed(self, texts: Sequence[str], *, one_thread: bool) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        documents = self._documents
        if documents is not None:
            try:
                return documents(texts, one_thread=one_thread)
            except Exception as exc:
                if self._quantized:  # never torch's vectors under the int8 key
                    raise EmbedError(f"the int8 document graph failed: {exc}") from exc
                log.warning("ONNX document embedding failed (%s); using torch from now on", exc)
                self._documents = None
        model = self._torch()
        return embed_on_one_thread(model, texts) if one_thread else model.embed(texts)

    def embed_queries(self, queries: Sequence[str]) -> Vectors:
        """The unit vectors of search queries (torch's model from the first failure on)."""
        encoder = self._queries
        if encoder is not None:
            try:
                return encoder.embed_queries(queries)
            except Exception as exc:  # a broken runtime must not break search
                log.warning("ONNX query embedding failed (%s); using torch from now on", exc)
                self._queries = None
        return self._torch().embed_queries(queries)

    def count_tokens(self, text: str) -> int:
        """Word-pieces of ``text`` with the model's tokenizer (no special tokens, no cut)."""
        encoder = self._queries
        return encoder.count_tokens(text) if encoder is not None else self._torch().count_tokens(text)

    def query_graph(self) -> QueryGraph | None:
        """How another process embeds queries as this one does (None once they fell back)."""
        return self._query_graph if self._queries is not None else None

    def _torch(self) -> Embedder:
        with self._lock:
            if self._fallback is None:
                self._fallback = self._load_fallback()
            return self._fallback


def load_graph_embedder(
    config: EmbedConfig, model_dir: str, fallback: Callable[[], Embedder], dimension: int | None = None
) -> GraphEmbedder | None:
    """A ``GraphEmbedder`` of the configured model (its documents on the graph that
    ``config.documents_by`` names), its graphs exported by a child process when the cache
    has none yet; None for a model whose layout cannot be exported. A cached graph that
    ONNX Runtime does not open is made again, once; then the failure raises ``EmbedError``."""
    if cannot_export_marker(model_dir).is_file():
        return None
    required = config.documents_by == "onnx-int8"
    int8 = "required" if required else "wanted" if config.int8_queries else None
    for attempt in (1, 2):
        spec = cached_query_graph(model_dir, int8=False)
        if spec is None or (required and not int8_path(Path(spec.graph)).is_file()):
            if not export_in_child(model_dir, int8=int8):
                return None
            spec = cached_query_graph(model_dir, int8=False)
            if spec is None:
                raise EmbedError("the model's exported graph is not in the cache after its export")
        try:
            return _open(config, spec, fallback, dimension)
        except (ImportError, MemoryError):  # not the graph's fault: keep it
            raise
        except Exception as exc:
            if attempt == 2:
                raise EmbedError(f"the model's exported graph cannot be opened: {exc}") from exc
            log.warning("the cached graph cannot be opened (%s): exporting it again", exc)
            forget_graph(Path(spec.graph))
    raise AssertionError("unreachable")  # pragma: no cover


def _open(
    config: EmbedConfig, spec: QueryGraph, fallback: Callable[[], Embedder], dimension: int | None
) -> GraphEmbedder:
    graph = Path(spec.graph)
    quantized = config.documents_by == "onnx-int8"
    documents_graph = int8_path(graph) if quantized else graph
    queries_graph = int8_path(graph) if config.int8_queries else graph
    if not queries_graph.is_file():  # its quantization failed (the export said why): float
        log.warning("queries run on the float graph: the int8 graph is not in the cache")
        queries_graph = graph
    threads = config.threads or 1
    query_spec = QueryGraph(str(queries_graph), spec.tokenizer, spec.max_length, threads)
    window = min(spec.max_length, config.document_max_tokens or spec.max_length)
    document_threads = config.document_threads or config.threads or default_threads()
    queries = QueryGraphEmbedder(query_spec, config.model, dimension or 0, fallback)
    shared = queries.session if documents_graph == queries_graph and threads == 1 else None
    documents = OnnxDocumentEncoder(
        documents_graph, spec.tokenizer, window, config.batch_size, document_threads,
        quantized=quantized, one_thread=shared,
    )  # fmt: skip
    if not dimension:
        queries.dimension = int(documents(["dimension"]).shape[1])
    return GraphEmbedder(documents, queries, query_spec, fallback)
