"""A stream of saves (and the short phase-2 passes between them) leaves the chunk and
document tables in many small fragments, which every search opens; the writer merges them
(``Maintenance.compact_small_fragments``) without touching the big ones (issue 43)."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.api import Lode
from indexer.config import load_config
from indexer.embed import FakeEmbedder
from indexer.models import Project
from indexer.search import SearchOptions
from indexer.store._lance import _children
from indexer.store._lance._maintenance import SMALL_FRAGMENT_ROWS, SMALL_FRAGMENTS
from indexer.store._schema import CHUNKS, DOCUMENTS, TASKS
from indexer.tasks import IndexWorker


def _fragments(lode: Lode, name: str) -> list[int]:
    return [f.metadata.physical_rows for f in lode.store.db.own_dataset(name).get_fragments()]


def _small(lode: Lode, name: str) -> int:
    return sum(1 for rows in _fragments(lode, name) if rows < SMALL_FRAGMENT_ROWS)


def _found(lode: Lode, project: Project, word: str) -> bool:
    response = lode.search(
        SearchOptions(query=word, mode="lexical", granularity="chunk", projects=(project.id,), limit=5)
    )
    return any(word in (h.node_name or "") for g in response.groups for h in g.chunks)


def _saved_one_by_one(tmp_path: Path, saves: int) -> tuple[Lode, Project, Path]:
    """A project of 300 functions in one file, then ``saves`` files written one at a time."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "bulk.py").write_text("".join(f"def bulk_{i}(x):\n    return x + {i}\n\n" for i in range(300)))
    lode = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    project = lode.register(root, name="repo")
    lode.index(root, name="repo")
    for n in range(saves):
        (root / f"saved_{n}.py").write_text(f"def saved_word_{n}(x):\n    return x * {n}\n")
        lode.index(root, name="repo", paths=(f"saved_{n}.py",))
    return lode, project, root


def test_small_fragments_are_merged_and_every_row_stays_found(tmp_path: Path) -> None:
    lode, project, _root = _saved_one_by_one(tmp_path, SMALL_FRAGMENTS + 2)
    try:
        maintenance = lode.store.maintenance
        assert _small(lode, CHUNKS) >= SMALL_FRAGMENTS  # what a stream of saves leaves
        big_before = [rows for rows in _fragments(lode, CHUNKS) if rows >= SMALL_FRAGMENT_ROWS]
        rows = lode.store.db.table(CHUNKS).count_rows()
        assert maintenance.compact_small_fragments() is True
        assert _small(lode, CHUNKS) <= 2
        assert _small(lode, DOCUMENTS) <= 2
        # the big fragment is left as it was: merging it would rewrite the whole table
        big_after = [rows for rows in _fragments(lode, CHUNKS) if rows >= SMALL_FRAGMENT_ROWS]
        assert big_after[: len(big_before)] == big_before
        assert lode.store.db.table(CHUNKS).count_rows() == rows
        for n in range(SMALL_FRAGMENTS + 2):
            assert _found(lode, project, f"saved_word_{n}")
        assert _found(lode, project, "bulk_7")
        assert lode.check().ok
        assert maintenance.compact_small_fragments() is False  # nothing left to merge
    finally:
        lode.close()


@pytest.mark.slow  # child processes: a few seconds
def test_a_big_stores_merge_gives_way_to_every_save(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a child process (a big store's), the merge is stopped whenever a save waits, the
    second time too (unlike an optimize): left undone it costs what it cost before."""
    lode, project, _root = _saved_one_by_one(tmp_path, SMALL_FRAGMENTS + 2)
    monkeypatch.setattr(_children, "CHILD_MIN_ROWS", 0)
    try:
        maintenance = lode.store.maintenance
        before = _fragments(lode, CHUNKS)
        maintenance.save_waits = lambda: True
        assert maintenance.compact_small_fragments() is False
        assert maintenance.compact_small_fragments() is False  # again: never a save's wait
        assert _fragments(lode, CHUNKS) == before
        maintenance.save_waits = lambda: False
        assert maintenance.compact_small_fragments() is True
        assert _small(lode, CHUNKS) <= 2
        assert _found(lode, project, "saved_word_3")
        assert lode.check().ok
    finally:
        lode.close()


def test_a_few_small_fragments_are_left_alone(tmp_path: Path) -> None:
    lode, _project, _root = _saved_one_by_one(tmp_path, 2)
    try:
        before = _fragments(lode, CHUNKS)
        assert lode.store.maintenance.compact_small_fragments() is False
        assert _fragments(lode, CHUNKS) == before
    finally:
        lode.close()


def test_the_writer_keeps_a_stream_of_saves_in_few_fragments(tmp_path: Path) -> None:
    """Saves one after another through the writer (as the watcher sends them): the chunk
    and task tables never hold many more small fragments than the merge threshold."""
    embedder = FakeEmbedder()
    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False})
    lode = Lode(config, embedder=embedder)
    root = tmp_path / "a"
    (root / "src").mkdir(parents=True)
    (root / "src" / "cart.py").write_text("def add_item(cart, item):\n    cart.append(item)\n")
    project = lode.register(root, name="a")
    worker = IndexWorker(lode.store, embedder, config)
    worker.start()
    try:
        worker.wait(worker.submit(project.id).id, timeout=60)
        most = {CHUNKS: 0, TASKS: 0}
        for n in range(3 * SMALL_FRAGMENTS):
            (root / "src" / f"fresh_{n}.py").write_text(f"def fresh_word_{n}():\n    return {n}\n")
            worker.wait(worker.submit(project.id, paths=(f"src/fresh_{n}.py",)).id, timeout=60)
            most = {name: max(count, _small(lode, name)) for name, count in most.items()}
        # each save writes its task three or four times: the queue is read by a scan
        assert max(most.values()) <= SMALL_FRAGMENTS + 4, most
        assert all(_found(lode, project, f"fresh_word_{n}") for n in range(3 * SMALL_FRAGMENTS))
        assert lode.check().ok
    finally:
        worker.stop()
        lode.close()
