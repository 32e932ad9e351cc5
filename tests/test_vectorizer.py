"""Phase 2's model batches: at most so many texts and so many characters a model call."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer._embed_batches import model_batches
from indexer.api import Lode
from indexer.config import load_config
from indexer.embed import FakeEmbedder
from indexer.models import Chunk, StoredChunk


def _stored(n: int, length: int) -> StoredChunk:
    content = "x" * length
    chunk = Chunk(n, content, f"h{n}", 0, length, 1, 1, "python", "function", f"f{n}", "", (), (), ())
    return StoredChunk(f"c{n}", "file", "project", "a.py", chunk)


def _lengths(batches: list[list[list[StoredChunk]]]) -> list[list[int]]:
    return [[len(group[0].chunk.content) for group in batch] for batch in batches]


def test_short_texts_go_as_many_as_the_size_allows() -> None:
    groups = [[_stored(n, 100)] for n in range(150)]
    batches = list(model_batches(groups, 64))
    assert [len(b) for b in batches] == [64, 64, 22]


def test_long_texts_go_fewer_at_a_time_within_the_character_budget() -> None:
    # sorted by length, as phase 2 hands them over: 40 short, then 40 of the model's full window
    groups = [[_stored(n, 200)] for n in range(40)] + [[_stored(40 + n, 5_000)] for n in range(40)]
    batches = list(model_batches(groups, 64, budget=16_384))
    for batch in _lengths(batches):
        assert sum(min(length, 1_024) for length in batch) <= 16_384
    assert [len(b) for b in batches] == [48, 16, 16]  # 40 short + 8 long (8,000 + 8,192 chars)
    assert sum(len(b) for b in batches) == 80  # every text once, in order
    assert [g[0].chunk.chunk_hash for b in batches for g in b] == [f"h{n}" for n in range(80)]


def test_a_text_longer_than_the_budget_goes_alone_and_nothing_is_empty() -> None:
    groups = [[_stored(0, 10)], [_stored(1, 50_000)], [_stored(2, 50_000)]]
    assert _lengths(list(model_batches(groups, 64, budget=500))) == [[10], [50_000], [50_000]]
    assert list(model_batches([], 64)) == []


@pytest.mark.parametrize("size", [1, 3])
def test_the_size_still_bounds_a_batch(size: int) -> None:
    groups = [[_stored(n, 10)] for n in range(7)]
    assert all(len(b) <= size for b in model_batches(groups, size))


def test_phase_two_embeds_each_text_once_in_budgeted_calls(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    for n in range(80):  # 80 distinct functions of ~600 characters, one chunk each
        body = "\n".join(f"    step_{k} = value * {k} + {n}" for k in range(20))
        (repo / f"m{n}.py").write_text(f"def long_{n}(value):\n{body}\n    return value\n")
    embedder = FakeEmbedder()
    calls: list[int] = []
    embed = embedder.embed

    def counting(texts: list[str]) -> object:
        calls.append(len(texts))
        return embed(texts)

    embedder.embed = counting  # type: ignore[method-assign]
    lode = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=embedder)
    try:
        report = lode.index(repo, name="repo")
    finally:
        lode.close()
    assert report.chunks_written == 80
    assert report.chunks_embedded == 80
    assert embedder.texts_embedded == sum(calls) == 80  # each text once
    assert 16 <= max(calls) <= 16_384 // 550  # ~600 characters each: ~27 a call, not 64


@pytest.mark.slow
def test_phase_two_waits_while_a_big_optimize_runs_in_children(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model's working memory beside a big optimize's child took the writer and its
    children past 1.5 GB: phase 2 makes no model call while one runs, and goes on after."""
    import threading
    import time

    from indexer.store._lance import _children, _maintenance
    from indexer.vectorizer import embed_backlog

    repo = tmp_path / "repo"
    repo.mkdir()
    for n in range(20):
        (repo / f"m{n}.py").write_text(f"def f_{n}(value):\n    return value + {n}\n")
    embedder = FakeEmbedder()
    calls: list[float] = []
    embed = embedder.embed

    def timed(texts: list[str]) -> object:
        calls.append(time.monotonic())
        return embed(texts)

    embedder.embed = timed  # type: ignore[method-assign]
    lode = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=embedder)
    try:
        lode.index(repo, name="repo", embed=False)
        store = lode.store
        entered, release = threading.Event(), threading.Event()
        real = _maintenance.Maintenance._optimize_searched_table

        def held(self: object, name: str, here: bool) -> None:
            entered.set()
            assert release.wait(30)
            real(self, name, here)  # type: ignore[arg-type]

        monkeypatch.setattr(_children, "CHILD_MIN_ROWS", 0)  # a big store: children
        monkeypatch.setattr(_maintenance.Maintenance, "_optimize_searched_table", held)
        optimizing = threading.Thread(target=store.maintenance.optimize)
        optimizing.start()
        assert entered.wait(30)
        done: list[object] = []
        phase2 = threading.Thread(target=lambda: done.append(embed_backlog(store, embedder)))
        phase2.start()
        time.sleep(1.0)
        assert calls == []  # waiting for the optimize, not beside it
        released = time.monotonic()
        release.set()
        optimizing.join(60)
        phase2.join(60)
        assert done
        assert calls
        assert min(calls) >= released
        assert store.chunks.count(embedded=True) == store.chunks.count() == 20
    finally:
        release.set()
        lode.close()


def test_a_cancelled_phase_two_stops_waiting_for_an_optimize(tmp_path: Path) -> None:
    import threading

    from indexer.vectorizer import embed_backlog

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("def f(value):\n    return value\n")
    embedder = FakeEmbedder()
    lode = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=embedder)
    try:
        lode.index(repo, name="repo", embed=False)
        store = lode.store
        store.maintenance._idle.clear()  # an optimize running in children, as above
        cancel = threading.Event()
        threading.Timer(0.5, cancel.set).start()
        stats = embed_backlog(store, embedder, cancel=cancel)
        assert embedder.texts_embedded == 0
        assert stats.embedded == 0
        store.maintenance._idle.set()
        embed_backlog(store, embedder)
        assert store.chunks.count(embedded=True) == 1
    finally:
        lode.close()


def test_a_long_phase_two_gives_free_heap_pages_back_after_its_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long phase 2 of 107k chunks grew its writer by 11-17 % in some runs; glibc kept
    free pages inside its heaps (4-72 MB given back a write): each write past the
    backlog's front gives them back."""
    from indexer import vectorizer

    repo = tmp_path / "repo"
    repo.mkdir()
    for n in range(12):
        (repo / f"m{n}.py").write_text(f"def f_{n}(value):\n    return value + {n}\n")
    released: list[int] = []
    monkeypatch.setattr(vectorizer, "release_free_memory", lambda: released.append(1) or 0)
    embedder = FakeEmbedder()
    lode = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=embedder)
    try:
        lode.index(repo, name="repo", embed=False)
        vectorizer.embed_backlog(lode.store, embedder, batch_size=2, write_rows=2)
        assert lode.store.chunks.count(embedded=True) == 12
    finally:
        lode.close()
    assert len(released) >= 4  # 6 writes of 2, the first one (the front) without
