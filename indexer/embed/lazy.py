"""An embedder that loads the real model only when a text must actually be embedded."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from indexer.embed._protocol import Embedder, Vectors, embed_on_one_thread
from indexer.embed.query_graph import QueryGraph, query_graph_of
from indexer.errors import ModelMismatchError

__all__ = ["LazyEmbedder"]

log = logging.getLogger(__name__)


class LazyEmbedder:
    """Knows the model id and dimension up front; loads the model on the first embed call."""

    def __init__(self, load: Callable[[], Embedder], model_id: str, dimension: int) -> None:
        self._load = load
        #: The expected model id and vector length (from the store's record).
        self.model_id = model_id
        self.dimension = dimension
        self._model: Embedder | None = None
        self._lock = threading.Lock()
        self._loader: threading.Thread | None = None
        self._loader_lock = threading.Lock()  # not ``_lock``: the loader holds that one

    @property
    def loaded(self) -> bool:
        """True once the model has been loaded."""
        return self._model is not None

    def ready_soon(self, then: Callable[[], None]) -> bool:
        """True once the model is loaded; else start loading it in a background thread
        (once), which calls ``then()`` when it is done, loaded or failed, and say False.

        The index writer asks this before embedding, so that a save's lexical update never
        waits for the model's load (torch's import takes tens of seconds on a busy laptop).
        A failed load is not kept: the next call that needs the model loads it again and
        raises where the caller handles it.
        """
        with self._loader_lock:
            if self._model is not None:
                return True
            if self._loader is not None and not self._loader.is_alive():
                self._loader = None  # it failed: the caller's own load raises the cause
                return True
            if self._loader is None:
                self._loader = threading.Thread(
                    target=self._load_then, args=(then,), name="lode-model-load", daemon=True
                )
                self._loader.start()
            return False

    def _load_then(self, then: Callable[[], None]) -> None:
        try:
            self._get()
        except Exception:  # said again by the load that needs the model
            log.debug("loading the model in the background failed", exc_info=True)
        finally:
            then()

    def _get(self) -> Embedder:
        with self._lock:
            if self._model is None:
                model = self._load()
                if model.model_id != self.model_id or model.dimension != self.dimension:
                    raise ModelMismatchError(
                        f"loaded model {model.model_id!r} (dimension {model.dimension}) but the index "
                        f"expects {self.model_id!r} (dimension {self.dimension})"
                    )
                self._model = model
            return self._model

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed texts (loading the model first if needed)."""
        return self._get().embed(texts)

    def embed_on_one_thread(self, texts: Sequence[str]) -> Vectors:
        """The loaded model's ``embed_on_one_thread`` where it has one, else ``embed``."""
        return embed_on_one_thread(self._get(), texts)

    def embed_queries(self, queries: Sequence[str]) -> Vectors:
        """Embed queries (loading the model first if needed)."""
        return self._get().embed_queries(queries)

    def query_graph(self) -> QueryGraph | None:
        """The loaded model's ``query_graph()`` (loading it first); None when it has none."""
        return query_graph_of(self._get())

    def count_tokens(self, text: str) -> int:
        """Model tokens of ``text`` (loading the model first if needed)."""
        return self._get().count_tokens(text)
