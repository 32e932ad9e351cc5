"""Loaded only by the kill tests' subprocesses (via PYTHONPATH): pauses after every
durable write so a SIGKILL lands between writes at a predictable moment. With
``LODE_MODEL=fake-hash-256`` the model is the deterministic fake embedder (for a test whose
point is not the model)."""

import os
import time

import indexer.pipeline as _pipeline
import indexer.vectorizer as _vectorizer

_PAUSE = float(os.environ.get("LODE_TEST_PAUSE", "0.5"))
_flush = _pipeline._FileWriter.flush
_write = _vectorizer._write


def _slow_flush(self):  # type: ignore[no-untyped-def]
    _flush(self)
    time.sleep(_PAUSE)


def _slow_write(*args, **kwargs):  # type: ignore[no-untyped-def]
    _write(*args, **kwargs)
    time.sleep(_PAUSE)


_pipeline._FileWriter.flush = _slow_flush  # type: ignore[method-assign]
_vectorizer._write = _slow_write

if os.environ.get("LODE_MODEL") == "fake-hash-256":
    import indexer._index_access
    from indexer.embed import FakeEmbedder

    indexer._index_access.load_embedder = lambda *a, **k: FakeEmbedder()  # type: ignore[assignment]
