"""Loaded only by the kill test's subprocesses (via PYTHONPATH): pauses after every
durable write so a SIGKILL lands between writes at a predictable moment."""

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
