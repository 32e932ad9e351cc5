"""The index writer yields the cores to searches: ``SearchActivity`` counts searches in
flight, and phase 2 embeds in small batches that wait for a pause in them (bounded)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from indexer.activity import SearchActivity
from indexer.api import Lode
from indexer.embed import Embedder
from indexer.search import SearchOptions
from indexer.vectorizer import embed_backlog


def test_activity_lasts_while_searches_run_and_a_moment_after() -> None:
    activity = SearchActivity(quiet=0.2)
    assert not activity.busy()
    with activity.searching():
        assert activity.busy()
        with activity.searching():
            assert activity.busy()
    assert activity.busy()  # the next search of a client asking back to back is near
    time.sleep(0.3)
    assert not activity.busy()
    assert activity.started == 2


def test_wait_for_pause_ends_with_the_searches_or_at_its_limit() -> None:
    activity = SearchActivity(quiet=0.05)
    assert activity.wait_for_pause(5.0) < 0.01  # nothing to wait for
    activity.begin()
    started = time.monotonic()
    waited = activity.wait_for_pause(0.3)  # a search that does not end: the limit holds
    assert 0.25 <= waited < 1.0
    assert 0.25 <= time.monotonic() - started < 1.0
    threading.Timer(0.2, activity.end).start()
    waited = activity.wait_for_pause(10.0)  # returns once the search ended and a quiet moment passed
    assert 0.2 <= waited < 2.0
    assert not activity.busy()


def test_a_writer_asked_to_stop_waits_no_longer() -> None:
    """A saved file preempts phase 2: its wait for a pause in the searches ends at once."""
    activity = SearchActivity()
    activity.begin()
    stop = threading.Event()
    threading.Timer(0.1, stop.set).start()
    waited = activity.wait_for_pause(10.0, stop.is_set)
    assert 0.08 <= waited < 1.0
    assert activity.wait_for_pause(10.0, stop.is_set) < 0.05


class _Recording:
    """An embedder that records how many texts each call got."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.calls: list[int] = []
        self.one_thread: list[int] = []
        self.model_id, self.dimension = inner.model_id, inner.dimension

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(len(texts))
        return self.inner.embed(texts)

    def embed_on_one_thread(self, texts: list[str]) -> np.ndarray:
        self.one_thread.append(len(texts))
        return self.embed(texts)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self.inner.embed_queries(texts)


@pytest.mark.parametrize("searching", [False, True])
def test_phase_two_yields_to_searches_and_still_finishes(lode: Lode, repo: Path, searching: bool) -> None:
    """With a search in flight all along, phase 2 embeds 16 texts at a time and waits
    before each call (at most a few times the last call's time; the model then runs on one
    thread), yet embeds everything; with none it never waits and uses every thread."""
    lode.index(repo, embed=False)
    store, project = lode.store, lode.store.projects.get("repo")
    embedder = _Recording(lode.lazy_embedder)
    activity = SearchActivity()
    if searching:
        activity.begin()
    started = time.monotonic()
    stats = embed_backlog(store, embedder, project.id, activity=activity)  # type: ignore[arg-type]
    assert store.vectors.coverage(project.id) == 1.0
    assert stats.embedded == sum(embedder.calls) > 16
    assert max(embedder.calls) <= 16
    if searching:
        assert stats.yielded_seconds > 0
        assert time.monotonic() - started < 30
        assert embedder.one_thread == embedder.calls
    else:
        assert stats.yielded_seconds == 0
        assert not embedder.one_thread


def test_searches_through_the_api_are_counted(lode: Lode, repo: Path) -> None:
    lode.index(repo)
    before = lode.activity.started
    lode.search(SearchOptions(query="apply discount", granularity="chunk"))
    assert lode.activity.started == before + 1
    assert not lode.activity._in_flight
