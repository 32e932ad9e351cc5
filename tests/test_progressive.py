"""Lexical-first progressive indexing: searchable before any vector exists, vectors fill
in behind, edits jump the queue, and a stopped phase 2 resumes where it stopped."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from indexer import pipeline
from indexer import tasks as tasks_module
from indexer.api import Lode
from indexer.chunker import embedding_text
from indexer.config import LodeConfig, load_config
from indexer.embed import FakeEmbedder
from indexer.models import ChunkFilter
from indexer.roles import embed_rank
from indexer.search import SearchOptions
from indexer.store._lance import _maintenance as maintenance
from indexer.tasks import IndexWorker
from indexer.vectorizer import embed_backlog


def _hits(lode: Lode, query: str, **kw: object) -> list[tuple[str, str]]:
    resp = lode.search(SearchOptions(query=query, granularity="chunk", limit=20, **kw))  # type: ignore[arg-type]
    return [(h.file_path, h.node_name) for g in resp.groups for h in g.chunks]


def test_lexical_search_and_filters_work_before_any_vector(lode: Lode, repo: Path) -> None:
    lode.index(repo, embed=False)
    project = lode.store.projects.get("repo")
    assert lode.store.vectors.coverage(project.id) == 0.0
    assert ("src/shop/pricing.py", "apply_discount") in _hits(lode, "apply_discount", mode="lexical")
    assert _hits(lode, "cart", mode="lexical", node_types=("method",), languages=("python",))
    hybrid = lode.search(SearchOptions(query="apply discount", granularity="chunk"))
    assert hybrid.groups, "hybrid falls back to lexical results"
    assert hybrid.semantic_coverage == {project.id: 0.0}
    assert any("semantic index incomplete" in w for w in hybrid.warnings)
    semantic = lode.search(SearchOptions(query="apply discount", granularity="chunk", mode="semantic"))
    assert semantic.groups == ()
    assert any("semantic index incomplete" in w for w in semantic.warnings)


def test_hybrid_fills_in_as_embedding_proceeds(lode: Lode, repo: Path) -> None:
    lode.index(repo, embed=False)
    store = lode.store
    project = store.projects.get("repo")

    class StopAfter:
        """Stop phase 2 once some vectors are written."""

        def is_set(self) -> bool:
            return store.chunks.count(project.id, embedded=True) >= 5

    embed_backlog(store, lode.lazy_embedder, project.id, cancel=StopAfter(), batch_size=5, write_rows=5)
    partial = store.vectors.coverage(project.id)
    assert 0.0 < partial < 1.0
    before = lode.search(
        SearchOptions(query="session token expiry", granularity="chunk", mode="semantic", limit=50)
    )
    embed_backlog(store, lode.lazy_embedder, project.id)
    assert store.vectors.coverage(project.id) == 1.0
    after = lode.search(
        SearchOptions(query="session token expiry", granularity="chunk", mode="semantic", limit=50)
    )
    count = lambda r: sum(len(g.chunks) for g in r.groups)  # noqa: E731
    assert count(after) > count(before)
    assert after.warnings == ()


def test_stopped_phase_two_resumes_without_embedding_twice(tmp_path: Path, repo: Path) -> None:
    embedder = FakeEmbedder()
    lode = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=embedder)
    lode.index(repo, embed=False)
    store = lode.store
    project = store.projects.get("repo")
    stop = threading.Event()
    calls = {"n": 0}
    real_embed = embedder.embed

    def counting_embed(texts):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 2:
            stop.set()
        return real_embed(texts)

    embedder.embed = counting_embed  # type: ignore[method-assign]
    first = embed_backlog(store, embedder, project.id, cancel=stop, batch_size=4)
    assert 0 < store.chunks.count(project.id, embedded=True) < store.chunks.count(project.id)
    second = embed_backlog(store, embedder, project.id, batch_size=4)
    total = store.chunks.count(project.id)
    assert store.chunks.count(project.id, embedded=True) == total
    distinct = {
        c.chunk.chunk_hash
        for c in store.chunks.of_files([s.id for s in store.documents.states(project.id).values()])
    }
    assert first.embedded + second.embedded == len(distinct) == embedder.texts_embedded
    assert first.embedded + second.embedded + first.cache_hits + second.cache_hits == total
    lode.close()


def test_edit_during_a_long_phase_two_is_searchable_at_once_and_embedded_first(
    tmp_path: Path, repo: Path
) -> None:
    embedder = FakeEmbedder(delay=0.02)
    bulk = repo / "bulk"
    bulk.mkdir()
    for i in range(150):
        (bulk / f"m{i}.py").write_text(f"def bulk_function_{i}(x):\n    return x * {i}\n")
    config = load_config(env={}, overrides={"db": tmp_path / "db"})
    lode = Lode(config, embedder=embedder)
    project = lode.register(repo)
    worker = IndexWorker(lode.store, embedder, config)
    worker.start()
    try:
        first = worker.submit(project.id)
        deadline = time.monotonic() + 30
        while worker.get(first.id).phase != "embed" and time.monotonic() < deadline:
            time.sleep(0.02)
        assert worker.get(first.id).phase == "embed"
        (repo / "src/shop/fresh.py").write_text("def freshly_saved_helper():\n    return 'new'\n")
        edit = worker.submit(project.id, paths=("src/shop/fresh.py",))
        searchable = worker.wait(edit.id, timeout=10, phase1_only=True)
        assert searchable.phase in ("embed", "done")
        assert worker.get(first.id).status == "running", "the edit did not wait for the backlog"
        assert ("src/shop/fresh.py", "freshly_saved_helper") in _hits(
            lode, "freshly_saved_helper", mode="lexical"
        )
        store = lode.store
        fresh = store.documents.find(project.id, "src/shop/fresh.py")
        assert fresh is not None
        deadline = time.monotonic() + 10
        while not all(c.embedded for c in store.chunks.of_files([fresh.id])) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert all(c.embedded for c in store.chunks.of_files([fresh.id]))
        assert store.vectors.coverage(project.id) < 1.0, "the edited file got its vector before the backlog"
        embedder.delay = 0.0  # shown: the rest of the backlog need not take its time
        done = worker.wait(first.id, timeout=60)
        assert done.status == "done"
        assert store.vectors.coverage(project.id) == 1.0
    finally:
        worker.stop()
        lode.close()


_PROJECT = {
    "src/billing/invoice.py": "def total_due(lines):\n    return sum(line.amount for line in lines)\n",
    "src/billing/ledger.py": "class Ledger:\n    def post(self, entry):\n        self.entries.append(entry)\n",
    "src/billing/tax.py": "def vat(amount, rate=0.2):\n    return round(amount * rate, 2)\n",
    "tests/test_invoice.py": "def test_total_due():\n    assert total_due([]) == 0\n",
    "tests/test_tax.py": "def test_vat():\n    assert vat(10) == 2\n",
    "README.md": "# Billing\n\nInvoices, a ledger and tax rules for the shop.\n",
    "docs/guide.md": "# Guide\n\nPost every invoice to the ledger before closing the month.\n",
    "examples/demo.py": "from billing.invoice import total_due\nprint(total_due([]))\n",
    "src/billing/api_pb2.py": "# Generated by the protocol buffer compiler.\nDESCRIPTOR = None\n",
}


class _Recording(FakeEmbedder):
    """The fake model, keeping the texts it embedded in order."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed, and remember the texts."""
        self.seen.extend(texts)
        return super().embed(texts)


def test_implementation_code_is_embedded_before_docs_examples_tests_and_generated_files(
    tmp_path: Path, config: LodeConfig
) -> None:
    for rel, text in _PROJECT.items():
        (tmp_path / "billing" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "billing" / rel).write_text(text)
    embedder = _Recording()
    lode = Lode(config, embedder=embedder)
    try:
        lode.index(tmp_path / "billing", name="billing", embed=False)
        store = lode.store
        project = store.projects.get("billing")
        order = [cid for cid, _ in store.vectors.backlog(project.id)]
        chunks = {c.id: c for c in store.chunks.get(order)}
        roles = [chunks[cid].role for cid in order]
        assert roles == sorted(roles, key=embed_rank)
        assert roles[0] == "implementation"
        assert roles[-1] == "generated"
        assert {"docs", "example", "test"} <= set(roles)
        code = {embedding_text(c.file_path, c.chunk) for c in chunks.values() if c.role == "implementation"}
        assert len(code) == 4  # two functions, a class and its method

        class AfterTheCode:
            """Stop phase 2 once as many texts as there are code chunks were embedded."""

            def is_set(self) -> bool:
                return len(embedder.seen) >= len(code)

        embed_backlog(store, embedder, project.id, cancel=AfterTheCode(), batch_size=1, write_rows=1)
        assert set(embedder.seen[: len(code)]) == code  # one window: still the code first
        assert store.vectors.coverage(project.id, "implementation") == 1.0
        assert store.vectors.coverage(project.id) < 1.0
        status = next(p for p in lode.status()["projects"] if p["id"] == project.id)
        assert status["implementation_coverage"] == 1.0
        assert status["semantic_coverage"] < 1.0
    finally:
        lode.close()


def test_task_progress_reports_both_phases(tmp_path: Path, repo: Path) -> None:
    embedder = FakeEmbedder(delay=0.01)
    config = load_config(env={}, overrides={"db": tmp_path / "db"})
    lode = Lode(config, embedder=embedder)
    project = lode.register(repo)
    worker = IndexWorker(lode.store, embedder, config)
    worker.start()
    try:
        task = worker.submit(project.id)
        seen: set[str] = set()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            current = worker.get(task.id)
            seen.add(current.phase)
            if current.phase == "embed":
                assert current.files_total == current.files_done == 12
                assert current.chunks_total >= current.chunks_embedded
            if not current.live:
                break
            time.sleep(0.005)
        assert {"embed", "done"} <= seen
        final = worker.get(task.id)
        assert final.chunks_embedded == final.chunks_total > 0
    finally:
        worker.stop()
        lode.close()
    assert ChunkFilter  # the filter type used by the store API stays importable


def test_words_are_searchable_while_the_first_index_is_still_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The full-text index is made from the first batch of a first index; rows written after
    it are found too (scanned until folded in), so word queries answer long before phase 1
    ends."""
    monkeypatch.setattr(pipeline, "_BATCH_FILES", 20)  # (200 by default: 450 files showed as much)
    root = tmp_path / "big"
    for n in range(45):  # three write batches of at most 20 files
        (root / f"pkg{n // 10}").mkdir(parents=True, exist_ok=True)
        (root / f"pkg{n // 10}" / f"mod{n}.py").write_text(
            f"def handler_{n}(request):\n    return 'ticket{n} processed by the zebrafish{n} queue'\n"
        )
    lode = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    seen: list[tuple[int, bool, bool]] = []
    written = [0]

    def during(state: object) -> None:
        done = getattr(state, "files_done", 0)
        chunks = getattr(state, "chunks_done", 0)
        if getattr(state, "phase", "") != "chunk" or not done or done >= 45 or chunks == written[0]:
            return  # (progress between writes: the files done are not written yet)
        written[0] = chunks
        first = bool(_hits(lode, "zebrafish0 queue", mode="lexical"))
        latest = bool(_hits(lode, f"zebrafish{done - 1}", mode="lexical"))
        seen.append((done, first, latest))

    try:
        lode.index(root, name="big", embed=False, progress=during)
    finally:
        lode.close()
    assert len(seen) >= 2, seen
    assert all(first and latest for _, first, latest in seen), seen


def test_vectors_are_written_in_groups_after_the_backlog_front(
    lode: Lode, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The front of the backlog is written batch by batch; the rest in writes of at least
    ``write_rows`` vectors (but the last), and every chunk ends up embedded once."""
    lode.index(repo, embed=False)
    store = lode.store
    project = store.projects.get("repo")
    writes: list[int] = []
    real = store.vectors.write

    def counting(ids, vectors, text_hashes):  # type: ignore[no-untyped-def]
        writes.append(len(ids))
        return real(ids, vectors, text_hashes)

    monkeypatch.setattr(store.vectors, "write", counting)
    total = store.chunks.count(project.id)
    assert total > 30
    stats = embed_backlog(store, lode.lazy_embedder, project.id, batch_size=2, write_rows=10)
    assert store.vectors.coverage(project.id) == 1.0
    assert sum(writes) == total == stats.embedded + stats.cache_hits
    front = 0
    while front < len(writes) and sum(writes[:front]) < 10:
        assert writes[front] <= 2
        front += 1
    assert all(n >= 10 for n in writes[front:-1])
    assert len(writes) < total // 2


def test_a_finished_run_leaves_no_row_outside_the_indexes(
    lode: Lode, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows the indexes miss are scanned by every query (a fresh 700-chunk project searched
    2-3x slower until the 5-minute optimize): a run that changed a sizable share of the
    table folds its rows in before it returns."""
    monkeypatch.setattr(maintenance, "OPTIMIZE_MIN_ROWS", 8)
    lode.index(repo)
    assert lode.store.chunks.count() > 8
    assert lode.store.indexes.unindexed_rows() == 0
    # one saved file is a small change: it stays outside the indexes until more piles up
    (repo / "src" / "shop" / "pricing.py").write_text("def fresh_total(cart):\n    return 0\n")
    lode.index(repo)
    assert 0 < lode.store.indexes.unindexed_rows() < 8


def test_a_long_phase_two_folds_its_rows_in_as_it_goes(
    lode: Lode, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Phase 2 rewrites every row it embeds; on a big project it runs for an hour, so it
    optimizes whenever enough rows changed, not only at the end."""
    monkeypatch.setattr(maintenance, "OPTIMIZE_MIN_ROWS", 8)
    lode.index(repo, embed=False)
    store = lode.store
    project = store.projects.get("repo")
    assert store.indexes.unindexed_rows() == 0
    calls: list[int] = []
    real = store.maintenance.optimize

    def counting(**kw):  # type: ignore[no-untyped-def]
        calls.append(store.chunks.count(project.id, embedded=True))
        return real(**kw)

    monkeypatch.setattr(store.maintenance, "optimize", counting)
    embed_backlog(store, lode.lazy_embedder, project.id, batch_size=2, write_rows=8)
    total = store.chunks.count(project.id)
    assert store.vectors.coverage(project.id) == 1.0
    assert len([n for n in calls if n < total]) >= 2, calls


def test_the_worker_optimizes_when_quiet_not_between_edits(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An optimize holds the write lock for ~1-4 s: the worker runs it once no task has
    been busy for a moment, so a file saved right after another is not queued behind it."""
    monkeypatch.setattr(maintenance, "OPTIMIZE_MIN_ROWS", 8)
    # any row left over is folded in once quiet (with 4, a slow machine could optimize
    # between two saves and leave the last save's 1-3 rows below the threshold)
    monkeypatch.setattr(maintenance, "OPTIMIZE_QUIET_MIN_ROWS", 1)
    monkeypatch.setattr(tasks_module, "_QUIET_SECONDS", 0.3)
    embedder = FakeEmbedder()
    config = load_config(env={}, overrides={"db": tmp_path / "db"})
    lode = Lode(config, embedder=embedder)
    project = lode.register(repo)
    worker = IndexWorker(lode.store, embedder, config)
    busy: list[bool] = []
    real = lode.store.maintenance.optimize

    def watching(**kw):  # type: ignore[no-untyped-def]
        # a task the worker was running (a queued one may arrive while it optimizes)
        busy.append(any(t.status == "running" for t in worker.list(project.id)))
        return real(**kw)

    monkeypatch.setattr(lode.store.maintenance, "optimize", watching)
    worker.start()
    try:
        worker.wait(worker.submit(project.id).id, timeout=30)
        for n in range(3):
            (repo / "src" / f"saved_{n}.py").write_text(f"def saved_{n}(x):\n    return x + {n}\n")
            task = worker.submit(project.id, paths=[f"src/saved_{n}.py"])
            worker.wait(task.id, timeout=30)
        deadline = time.monotonic() + 10
        while lode.store.indexes.unindexed_rows() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(busy), busy
        assert lode.store.indexes.unindexed_rows() == 0
        assert busy, "the quiet worker optimized"
    finally:
        worker.stop()
        lode.close()


def test_an_idle_writer_folds_in_smaller_changes(
    lode: Lode, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A change too small to hold up a busy writer is folded in once it is idle (here
    smaller than what makes the end of a run fold: its 70 new rows and their rewrites)."""
    monkeypatch.setattr(maintenance, "FORCED_FOLD_ROWS", 500)
    lode.index(repo)
    store = lode.store
    store.maintenance.optimize()
    assert store.indexes.unindexed_rows() == 0
    (repo / "src" / "shop" / "pricing.py").write_text(
        "".join(f"def fresh_{n}(x):\n    return x + {n}\n\n\n" for n in range(70))
    )
    lode.index(repo)
    assert store.maintenance.threshold(quiet=True) < store.maintenance.threshold()
    assert store.indexes.unindexed_rows() > 0
    assert not store.maintenance.maybe_optimize()
    assert store.maintenance.maybe_optimize(quiet=True)
    assert store.indexes.unindexed_rows() == 0


def test_rows_a_stopped_server_left_unfolded_are_folded_by_the_next(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The changed-rows counter lives in the process: a new worker starts from what the
    indexes miss, so rows a stopped server left outside them are folded once it is idle."""
    monkeypatch.setattr(tasks_module, "_QUIET_SECONDS", 0.3)
    monkeypatch.setattr(maintenance, "OPTIMIZE_QUIET_MIN_ROWS", 4)
    config = load_config(env={}, overrides={"db": tmp_path / "db"})
    lode = Lode(config, embedder=FakeEmbedder())
    lode.index(repo)
    assert lode.store.indexes.unindexed_rows() >= 4
    lode.close()
    lode = Lode(config, embedder=FakeEmbedder())
    worker = IndexWorker(lode.store, lode.lazy_embedder, config)
    worker.start()
    try:
        deadline = time.monotonic() + 10
        while lode.store.indexes.unindexed_rows() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert lode.store.indexes.unindexed_rows() == 0
    finally:
        worker.stop()
        lode.close()


@pytest.mark.skipif(not hasattr(os, "setpriority"), reason="per-thread niceness is a Linux/Unix feature")
@pytest.mark.parametrize("nice", [0, 10])
def test_the_writer_thread_yields_the_cores_to_searches(tmp_path: Path, nice: int) -> None:
    """The writer runs at ``index_nice`` (searches, at the process's own niceness, come
    first); the thread that started it keeps its niceness."""
    config = load_config(env={"LODE_INDEX_NICE": str(nice)}, overrides={"db": tmp_path / "db"})
    assert config.server.index_nice == nice
    lode = Lode(config, embedder=FakeEmbedder())
    worker = IndexWorker(lode.store, lode.embedder, config)
    base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    seen: list[int] = []
    real_step = worker._step

    def step() -> bool:
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        return real_step()

    worker._step = step  # type: ignore[method-assign]
    worker.start()
    try:
        deadline = time.monotonic() + 10
        while not seen and time.monotonic() < deadline:
            time.sleep(0.02)
        assert seen
        assert seen[0] == max(base, nice)
        assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == base
    finally:
        worker.stop()
        lode.close()


@pytest.mark.skipif(not hasattr(os, "setpriority"), reason="per-thread niceness is a Linux/Unix feature")
def test_the_model_runs_below_the_writer_so_a_save_gets_the_cores(tmp_path: Path) -> None:
    """Phase 2's model calls run at ``model_nice`` (19), below the writer's ``index_nice``
    (10): a save's lexical update, on the writer, takes the cores the model was using."""
    config = load_config(overrides={"db": tmp_path / "db"})
    assert (config.server.index_nice, config.server.model_nice) == (10, 19)
    seen: list[int] = []

    class Recording(FakeEmbedder):
        def embed(self, texts: Sequence[str]) -> np.ndarray:
            seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
            return super().embed(texts)

    lode = Lode(config, embedder=Recording())
    root = tmp_path / "p"
    root.mkdir()
    (root / "a.py").write_text("def alpha():\n    return 1\n")
    project = lode.register(root, name="p")
    worker = IndexWorker(lode.store, lode.embedder, config)
    base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    worker.start()
    try:
        worker.wait(worker.submit(project.id).id, timeout=60)
        assert seen
        assert set(seen) == {max(base, 19)}
    finally:
        worker.stop()
        lode.close()


def test_model_nice_out_of_range_is_a_config_error(tmp_path: Path) -> None:
    from indexer.errors import ConfigError

    with pytest.raises(ConfigError, match="model_nice"):
        load_config(env={"LODE_MODEL_NICE": "-1"}, overrides={"db": tmp_path / "db"})


def test_index_nice_out_of_range_is_a_config_error(tmp_path: Path) -> None:
    from indexer.errors import ConfigError

    with pytest.raises(ConfigError, match="index_nice"):
        load_config(env={"LODE_INDEX_NICE": "25"}, overrides={"db": tmp_path / "db"})


def _many_chunks(root: Path, files: int) -> Path:
    """``files`` files of 4 chunks each (functions long enough not to be merged)."""
    body = "\n".join(
        f"    total = total + value * {k} - {k} // 3  # step {k} of the running sum" for k in range(12)
    )
    for n in range(files):
        folder = root / f"pkg{n // 50}"
        folder.mkdir(parents=True, exist_ok=True)
        text = "\n\n".join(
            f"def compute_{n}_{j}(value):\n    total = 0\n{body}\n    return total\n" for j in range(4)
        )
        (folder / f"mod{n}.py").write_text(text + "\n")
    return root


@pytest.mark.parametrize("through", ["api", "worker"])
def test_the_end_of_a_run_leaves_no_fragment_outside_the_indexes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, through: str
) -> None:
    """Phase 2 rewrites every row it gives a vector (when vector writes merged columns,
    each took its rows' whole fragment out of the vector, id and embedded indexes) and
    optimizes only every few thousand rows, so its last writes used to leave much of a
    fresh store outside them (36k of 38k chunks: ~4x the CPU of a search until the next
    optimize). A finished run folds them in before it says it is done."""
    monkeypatch.setattr(maintenance, "OPTIMIZE_MIN_ROWS", 100_000)  # no optimize by rows written
    monkeypatch.setattr(maintenance, "SETTLE_MIN_ROWS", 64)
    root = _many_chunks(tmp_path / "proj", 60)
    config = load_config(env={}, overrides={"db": tmp_path / "db"})
    lode = Lode(config, embedder=FakeEmbedder())
    try:
        if through == "api":
            lode.index(root, embed=False)
            lode.store.maintenance.optimize()  # one fragment, every row in every index…
            assert lode.store.indexes.unindexed_rows() == 0
            report = lode.index(root)  # …then phase 2 writes the vectors
            assert report.chunks_embedded > 64
        else:
            project = lode.register(root)
            worker = IndexWorker(lode.store, lode.lazy_embedder, config)
            worker.start()
            try:
                task = worker.wait(worker.submit(project.id).id, timeout=60)
                assert task.status == "done"
                assert task.chunks_embedded == task.chunks_total > 64
            finally:
                worker.stop()
        assert lode.store.vectors.coverage() == 1.0
        assert lode.store.indexes.unindexed_rows() == 0  # at once: the first search is as cheap as later ones
    finally:
        lode.close()
