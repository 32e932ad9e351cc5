"""Loaded only by the kill test's subprocesses (via PYTHONPATH): pauses after every
durable write so a SIGKILL lands between writes at a predictable moment."""

import os
import time

_PAUSE = float(os.environ.get("LODE_TEST_PAUSE", "0.5"))


def _slow(cls: type, name: str) -> None:
    original = getattr(cls, name)

    def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
        result = original(*args, **kwargs)
        time.sleep(_PAUSE)
        return result

    setattr(cls, name, wrapper)


import indexer.pipeline as _pipeline  # noqa: E402
import indexer.vectorizer as _vectorizer  # noqa: E402

_slow(_pipeline._FileWriter, "flush")
_vectorizer._write = (lambda original: lambda *a, **k: (original(*a, **k), time.sleep(_PAUSE))[0])(
    _vectorizer._write
)
