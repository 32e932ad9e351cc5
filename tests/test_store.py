"""The LanceDB store: model records, atomic per-file replace, cache, tasks."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from indexer.chunker import embedding_text_version
from indexer.embed import FakeEmbedder
from indexer.errors import ConflictError, ModelMismatchError, NotFoundError, StoreError, StoreVersionError
from indexer.ids import document_id, uuid7
from indexer.models import Chunk, ChunkFilter, Document, Task
from indexer.store import SCHEMA_VERSION, ChunkWrite, FileWrite, Store, open_store, read_store_info
from indexer.store._lance._indexes import Indexes
from indexer.store._search import NPROBES, Detail


def _chunk(i: int, text: str) -> Chunk:
    return Chunk(
        i,
        text,
        f"h-{text}",
        0,
        len(text),
        i + 1,
        i + 1,
        "python",
        "function",
        f"f{i}",
        "",
        (f"f{i}",),
        (),
        (),
    )


def _write(project_id: str, path: str, texts: list[str], version: str) -> FileWrite:
    doc = Document(
        document_id(project_id, path), project_id, path, version, 10, 1.0, None, ("python",), "python", 0
    )
    return FileWrite(
        doc, "\n".join(texts), [ChunkWrite(uuid7(), _chunk(i, t)) for i, t in enumerate(texts)], version
    )


def test_store_records_model_and_refuses_another(tmp_path: Path) -> None:
    s = open_store(tmp_path / "db", "model-a", 8)
    s.close()
    info = read_store_info(tmp_path / "db")
    assert info == {
        "schema_version": str(SCHEMA_VERSION),
        "model_id": "model-a",
        "dimension": "8",
        "embedding_text_version": str(embedding_text_version()),
        "vector_encoder": "float",
    }
    with pytest.raises(ModelMismatchError, match="model-a"):
        open_store(tmp_path / "db", "model-b", 8)
    with pytest.raises(ModelMismatchError, match="dimension 8"):
        open_store(tmp_path / "db", "model-a", 16)


def test_a_store_another_process_is_still_creating(tmp_path: Path) -> None:
    (tmp_path / "db" / "meta.lance").mkdir(parents=True)  # listed, nothing committed yet
    assert read_store_info(tmp_path / "db") == {}  # "no store yet", not a crash
    with pytest.raises(StoreError, match="cannot open the index"):  # never overwrites its facts
        open_store(tmp_path / "db", "model-a", 8)


def test_unknown_schema_version_is_refused(tmp_path: Path) -> None:
    import lancedb
    import pyarrow as pa

    conn = lancedb.connect(str(tmp_path / "db"))
    conn.create_table("meta", pa.table({"key": ["schema_version"], "value": ["999"]}))
    with pytest.raises(StoreVersionError, match="999"):
        open_store(tmp_path / "db", "m", 8)


def test_symbol_rows_without_a_packed_cell_are_read_from_their_columns(tmp_path: Path) -> None:
    """A row whose ``view`` cell is null (not written by this lode) still reads whole."""
    import lance
    from conftest import make_repo

    from indexer.api import Lode
    from indexer.config import load_config

    api = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    try:
        api.index(make_repo(tmp_path / "repo"), name="shop")
        names = api.store.symbols.names()
        before = sorted(api.store.symbols.definitions(names), key=lambda s: s.id)
        assert before
        lance.dataset(api.store.db.table("code_symbols").uri).update(
            {"view": "NULL"}, where="role = 'definition'"
        )
        assert sorted(api.store.symbols.definitions(names), key=lambda s: s.id) == before
    finally:
        api.close()


def test_projects_are_unique_by_name_and_root(store: Store) -> None:
    p = store.projects.add("a", "/x")
    with pytest.raises(ConflictError):
        store.projects.add("a", "/y")
    with pytest.raises(ConflictError):
        store.projects.add("b", "/x")
    assert store.projects.get("a") == store.projects.get(p.id)
    with pytest.raises(NotFoundError):
        store.projects.get("zzz")


def test_replace_is_atomic_for_concurrent_readers(store: Store) -> None:
    project = store.projects.add("p", "/p")
    store.files.replace([_write(project.id, "a.py", ["old one", "old two"], "v0")])
    seen: list[set[str]] = []
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            chunks = store.chunks.of_files([document_id(project.id, "a.py")])
            seen.append({c.chunk.content.split()[0] for c in chunks})

    thread = threading.Thread(target=reader)
    thread.start()
    for n in range(15):
        version = "new" if n % 2 == 0 else "old"
        store.files.replace(
            [
                _write(
                    project.id,
                    "a.py",
                    [f"{version} one", f"{version} two", f"{version} 3"][: 2 + n % 2],
                    f"v{n}",
                )
            ]
        )
    stop.set()
    thread.join()
    assert seen
    assert all(s in ({"old"}, {"new"}) for s in seen), {frozenset(s) for s in seen}


def _hashes(ids: list[str]) -> list[str]:
    """Text hashes for vectors written by hand (one per chunk)."""
    return [f"text of {i}" for i in ids]


def test_cache_round_trip_and_backlog(store: Store, fake_embedder: FakeEmbedder) -> None:
    project = store.projects.add("p", "/p")
    store.files.replace([_write(project.id, "a.py", ["alpha", "beta"], "v1")])
    backlog = store.vectors.backlog(project.id)
    assert len(backlog) == 2
    ids = [cid for cid, _ in backlog]
    vectors = fake_embedder.embed(["alpha", "beta"])
    assert store.vectors.write(ids, vectors, ["t-alpha", "t-beta"]) == 2
    store.vectors.remember({"h-alpha": vectors[0]})
    got = store.vectors.cached(["h-alpha", "h-missing"])
    assert list(got) == ["h-alpha"]
    np.testing.assert_allclose(got["h-alpha"], vectors[0], rtol=1e-6)
    assert store.vectors.complete_documents([document_id(project.id, "a.py")]) == 1
    assert store.vectors.coverage(project.id) == 1.0
    assert store.vectors.backlog(project.id) == []


def test_tasks_round_trip(store: Store) -> None:
    task = Task(id=uuid7(), project_id="p", paths=("a",), errors=("x",))
    store.tasks.save(task)
    assert store.tasks.get(task.id) == task

    store.tasks.save(replace(task, status="done", files_done=3))
    assert store.tasks.get(task.id).status == "done"
    assert [t.id for t in store.tasks.all(statuses=("done",))] == [task.id]
    with pytest.raises(NotFoundError):
        store.tasks.get("nope")


def test_delete_project_keeps_others(store: Store) -> None:
    a = store.projects.add("a", "/a")
    b = store.projects.add("b", "/b")
    store.files.replace([_write(a.id, "x.py", ["one"], "1"), _write(b.id, "x.py", ["two"], "1")])
    store.projects.delete(a.id)
    assert store.chunks.count(a.id) == 0
    assert store.chunks.count(b.id) == 1
    assert [p.name for p in store.projects.all()] == ["b"]


def _vector_index(db: Path) -> dict[str, object]:
    import lancedb

    table = lancedb.connect(str(db)).open_table("code_chunks")
    index = next(i for i in table.list_indices() if "embedding" in i.columns)
    return {**dict(index.index_details), "type": str(index.index_type)}


@dataclass
class _Children:
    """The maintenance jobs started in child processes, and each one's environment."""

    jobs: list[str] = field(default_factory=list)
    envs: list[dict[str, str]] = field(default_factory=list)


def _maintenance_in_children(monkeypatch: pytest.MonkeyPatch) -> _Children:
    """Every fold and optimize in a child process (as on a big store); the jobs started,
    as they start."""
    import subprocess

    from indexer.store._lance import _children

    children = _Children()
    real_popen = subprocess.Popen

    def spy(args: list[str], **kwargs: Any) -> Any:
        children.jobs.append(args[2])
        children.envs.append(kwargs.get("env") or {})
        return real_popen(args, **kwargs)

    monkeypatch.setattr(_children, "CHILD_MIN_ROWS", 0)
    monkeypatch.setattr(_children.subprocess, "Popen", spy)
    return children


@pytest.mark.parametrize("in_child", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_vector_index_keeps_small_partitions_as_the_table_grows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_child: bool
) -> None:
    """A fixed partition count is merged down to ~16k-row partitions by Lance's optimize
    (every query then scans the table); lode asks for a target size that survives growth,
    keeps 8-bit vectors in it (IVF_SQ), and rebuilds an index created an older way. A big
    table's index is built in a child process (its memory never the writer's), the same
    index as one built here."""

    import lancedb
    from lancedb.index import IvfFlat

    from indexer.store._lance import _indexes

    jobs = _maintenance_in_children(monkeypatch).jobs if in_child else []
    monkeypatch.setattr(_indexes, "VECTOR_INDEX_MIN_ROWS", 600)
    monkeypatch.setattr(_indexes, "VECTOR_PARTITION_ROWS", 64)
    rng = np.random.default_rng(1)
    s = open_store(tmp_path / "db", "m", 16)
    project = s.projects.add("p", str(tmp_path))

    def add(start: int, count: int) -> None:
        writes = []
        for n in range(start, start + count, 50):
            texts = [f"text {n + i}" for i in range(50)]
            w = _write(project.id, f"f{n}.py", texts, "v1")
            vectors = rng.standard_normal((50, 16)).astype(np.float32)
            chunks = [
                ChunkWrite(c.id, c.chunk, v / np.linalg.norm(v))
                for c, v in zip(w.chunks, vectors, strict=True)
            ]
            writes.append(FileWrite(w.document, w.content, chunks, w.file_hash))
        s.files.replace(writes)

    try:
        add(0, 700)
        s.maintenance.optimize()
        assert _vector_index(tmp_path / "db")["target_partition_size"] == 64
        assert _vector_index(tmp_path / "db")["type"] == "IvfSq"
        add(700, 2100)
        s.maintenance.optimize()
        assert _vector_index(tmp_path / "db")["target_partition_size"] == 64
        # an index built with a fixed count (older lode) is replaced by the next maintenance
        table = lancedb.connect(str(tmp_path / "db")).open_table("code_chunks")
        table.create_index(
            "embedding", config=IvfFlat(distance_type="cosine", num_partitions=4), replace=True
        )
        assert "target_partition_size" not in _vector_index(tmp_path / "db")
        s.indexes.ensure()
        assert _vector_index(tmp_path / "db")["target_partition_size"] == 64
        assert _vector_index(tmp_path / "db")["type"] == "IvfSq"
        # so is the IVF_FLAT index lode built before
        table = lancedb.connect(str(tmp_path / "db")).open_table("code_chunks")
        table.create_index(
            "embedding", config=IvfFlat(distance_type="cosine", target_partition_size=64), replace=True
        )
        assert _vector_index(tmp_path / "db")["type"] == "IvfFlat"
        s.indexes.ensure()
        assert _vector_index(tmp_path / "db")["type"] == "IvfSq"
        probe = rng.standard_normal(16).astype(np.float32)
        assert (
            len(s.search.vector_candidates("chunks", probe, ChunkFilter(project_ids=(project.id,)), 10)) == 10
        )
    finally:
        s.close()
    assert (jobs.count("create_vector_index") == 3) is in_child  # built, then rebuilt twice


def test_vector_search_covers_rows_written_after_the_index_and_never_placeholders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows the vector index covers are searched through it, rows written since exactly,
    and only where they have a vector: a search finds a vector written after the index,
    never a placeholder or a deleted or replaced row, and ranks as Lance's own search does."""
    from indexer.store._lance import _indexes

    monkeypatch.setattr(_indexes, "VECTOR_INDEX_MIN_ROWS", 600)
    monkeypatch.setattr(_indexes, "VECTOR_PARTITION_ROWS", 64)
    rng = np.random.default_rng(7)
    s = open_store(tmp_path / "db", "m", 16)
    project = s.projects.add("p", str(tmp_path))
    flt = ChunkFilter(project_ids=(project.id,))

    def unit(n: int) -> np.ndarray:
        v = rng.standard_normal((n, 16)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def write(path: str, texts: list[str], vectors: np.ndarray | None) -> FileWrite:
        w = _write(project.id, path, texts, "v1")
        if vectors is None:
            return w
        chunks = [ChunkWrite(c.id, c.chunk, v) for c, v in zip(w.chunks, vectors, strict=True)]
        return FileWrite(w.document, w.content, chunks, w.file_hash)

    def nearest(vector: np.ndarray, k: int = 5) -> list[str]:
        return [c.id for c in s.search.vector_candidates("chunks", vector, flt, k, detail="id")]

    def lance_nearest(vector: np.ndarray, k: int) -> list[str]:
        """Lance's own search of every row (index plus a scan of the rest), for comparison."""
        table = s.db.dataset("code_chunks").to_table(
            columns=["id", "_distance"],
            filter="embedded = true",
            prefilter=True,
            nearest={"column": "embedding", "q": vector, "k": k, "nprobes": NPROBES, "metric": "cosine"},
        )
        return list(table["id"].to_pylist())

    try:
        old = {f"f{n}.py": unit(50) for n in range(14)}
        s.files.replace([write(path, [f"t{path}{i}" for i in range(50)], v) for path, v in old.items()])
        s.maintenance.optimize()  # the vector index covers these 700 rows
        ids = {path: [c.id for c in s.chunks.of_files([document_id(project.id, path)])] for path in old}
        # placeholders written after the index: the query nearest them finds none of them
        s.files.replace([write("new.py", [f"n{i}" for i in range(40)], None)])
        new_ids = [c.id for c in s.chunks.of_files([document_id(project.id, "new.py")])]
        assert not set(nearest(s.db.placeholder, 10)) & set(new_ids)
        # their vectors arrive (rows the index does not cover): each is found first
        fresh = unit(40)
        s.vectors.write(new_ids, fresh, _hashes(new_ids))
        assert nearest(fresh[3])[0] == new_ids[3]
        # a deleted file and the old version of a replaced one are gone from the index part
        s.files.delete([document_id(project.id, "f0.py")])
        assert not set(nearest(old["f0.py"][0], 20)) & set(ids["f0.py"])
        s.files.replace([write("f1.py", [f"r{i}" for i in range(50)], unit(50))])
        assert not set(nearest(old["f1.py"][0], 20)) & set(ids["f1.py"])
        # and the ranking is the one Lance's own search gives
        vectors = {c.id: v for c, v in s.chunks.with_vectors(flt) if v is not None}
        for probe in unit(5):
            # the same rows as Lance's own search (which re-ranks the index's 8-bit vectors
            # by their full ones, so near ties may swap)
            mine, lance = nearest(probe, 10), lance_nearest(probe, 10)
            assert mine[0] == lance[0]
            assert len(set(mine) & set(lance)) >= 8
            # scores are cosine similarities, whichever part found the row (8-bit vectors)
            hits = s.search.vector_candidates("chunks", probe, flt, 10, detail="id")
            assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
            for hit in hits:
                assert hit.score == pytest.approx(float(vectors[hit.id] @ probe), abs=0.02)
    finally:
        s.close()


def test_rows_outside_the_vector_index_are_searched_in_memory_as_lance_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Phase 2 fills in vectors of rows the vector index does not cover: a search reads
    those vectors once per fragment state and ranks them in memory, finding exactly the
    rows, scores and columns Lance's own scan of those fragments finds (every filter and
    detail), sees each later vector write and deletion, and leaves fragments holding more
    vectors than the cache keeps to Lance."""
    from indexer.store._lance import _indexes

    monkeypatch.setattr(_indexes, "VECTOR_INDEX_MIN_ROWS", 600)
    monkeypatch.setattr(_indexes, "VECTOR_PARTITION_ROWS", 64)
    rng = np.random.default_rng(11)
    s = open_store(tmp_path / "db", "m", 16)
    project = s.projects.add("p", str(tmp_path))

    def unit(n: int) -> np.ndarray:
        v = rng.standard_normal((n, 16)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def with_vectors(path: str, texts: list[str], vectors: np.ndarray) -> FileWrite:
        w = _write(project.id, path, texts, "v1")
        chunks = [ChunkWrite(c.id, c.chunk, v) for c, v in zip(w.chunks, vectors, strict=True)]
        return FileWrite(w.document, w.content, chunks, w.file_hash)

    def candidates(probe: np.ndarray, flt: ChunkFilter, detail: Detail) -> list[tuple[object, ...]]:
        hits = s.search.vector_candidates("chunks", probe, flt, 30, detail=detail)
        return [(h.row_id, h.id, h.file_id, h.node_name, h.definitions, round(h.score, 5)) for h in hits]

    def both(probe: np.ndarray, flt: ChunkFilter, detail: Detail) -> tuple[list[object], list[object]]:
        """(in memory, Lance's scan) for one query."""
        s.search._unindexed._rows.clear()
        mine = candidates(probe, flt, detail)
        s.search._unindexed.max_rows, cap = 0, s.search._unindexed.max_rows
        s.search._unindexed._rows.clear()
        try:
            return mine, candidates(probe, flt, detail)
        finally:
            s.search._unindexed.max_rows = cap

    try:
        s.files.replace(
            [with_vectors(f"f{n}.py", [f"o{n}-{i}" for i in range(50)], unit(50)) for n in range(14)]
        )
        s.maintenance.optimize()  # the vector index covers these 700 rows
        s.files.replace(
            [_write(project.id, f"new{n}.py", [f"n{n}-{i}" for i in range(40)], "v1") for n in range(3)]
        )
        new_ids = [c.id for n in range(3) for c in s.chunks.of_files([document_id(project.id, f"new{n}.py")])]
        first = unit(60)
        s.vectors.write(new_ids[:60], first, _hashes(new_ids[:60]))  # half of them get their vector
        assert s.search._unindexed.layout(
            "code_chunks", "embedding", s.db.dataset("code_chunks")
        ).unindexed_embedded
        filters = [
            ChunkFilter(),
            ChunkFilter(project_ids=(project.id,)),
            ChunkFilter(path_include=("new1.py",)),
            ChunkFilter(languages=("rust",)),
        ]
        for probe in [*(unit(3) * 2.5), first[5]]:  # Lance compares by angle: any length
            for flt in filters:
                for detail in ("row", "id", "file", "full"):
                    mine, lance = both(probe, flt, detail)
                    assert mine == lance, (flt, detail)
        assert candidates(first[5], ChunkFilter(), "id")[0][1] == new_ids[5]
        # the other half arrives, and the first half is written again: the next search sees both
        second, again = unit(60), unit(60)
        s.vectors.write(new_ids[60:], second, _hashes(new_ids[60:]))
        s.vectors.write(new_ids[:60], again, _hashes(new_ids[:60]))
        assert candidates(second[7], ChunkFilter(), "id")[0][1] == new_ids[67]
        assert candidates(again[5], ChunkFilter(), "id")[0][1] == new_ids[5]
        assert new_ids[5] not in [c[1] for c in candidates(first[5], ChunkFilter(), "id")[:1]]
        # a file deleted from those fragments is gone from the next search
        s.files.delete([document_id(project.id, "new1.py")])
        gone = set(new_ids[40:80])
        assert not {c[1] for c in candidates(second[7], ChunkFilter(), "id")} & gone
        mine, lance = both(second[7], ChunkFilter(), "full")
        assert mine == lance
    finally:
        s.close()


def _text_index(store: Store) -> tuple[int, int]:
    """(segments, rows it does not cover) of the chunk table's full-text index."""
    dataset = store.db.dataset("code_chunks")
    index = next(i for i in dataset.describe_indices() if i.name == "search_text_idx")
    return len(index.segments), int(dataset.stats.index_stats("search_text_idx")["num_unindexed_rows"])


@pytest.mark.slow
def test_new_rows_are_folded_into_the_text_indexes_and_optimize_merges_the_segments(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows written after the indexes exist are added to them as delta segments once there
    are ``FOLD_ROWS`` of them (then as many as were folded before), so full-text queries do
    not scan them; ``optimize`` merges the segments again."""
    from indexer.store._lance import _children, _maintenance

    monkeypatch.setattr(_maintenance, "FOLD_ROWS", 10)
    monkeypatch.setattr(_children, "CHILD_MIN_ROWS", 0)  # folds in a child process
    project = store.projects.add("p", "/p")
    store.files.replace([_write(project.id, "base.py", ["alpha beta", "gamma"], "1")])
    store.maintenance.optimize()  # the indexes, and no row written since
    assert _text_index(store) == (1, 0)
    assert not store.maintenance.fold_new_rows()  # nothing written since
    folded = []
    for n in range(8):
        texts = [f"zebra{n} stripe{i}" for i in range(4)]
        store.files.replace([_write(project.id, f"f{n}.py", texts, "1")])  # 5 rows each
        folded.append(store.maintenance.fold_new_rows())
    # folds at 10, 20 and 40 rows written: each waits for as many rows as came before
    assert folded == [False, True, False, True, False, False, False, True]
    assert _text_index(store) == (4, 0)
    found = store.search.text_candidates("chunks", "zebra7", ChunkFilter(), 10)
    assert len(found) == 4
    store.maintenance.optimize()
    assert _text_index(store) == (1, 0)
    assert {c.id for c in store.search.text_candidates("chunks", "zebra7", ChunkFilter(), 10)} == {
        c.id for c in found
    }


@pytest.mark.slow
def test_a_big_table_of_small_fragments_is_optimized_in_a_child(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LanceDB's optimize of a big table whose fragments are all small (a first index)
    rewrites it whole: a child process does it (the writer's peak RSS), with the same
    result as in this process: one fragment, every row in every index, the same hits."""

    import lance

    children = _maintenance_in_children(monkeypatch)
    project = store.projects.add("p", "/p")
    for n in range(4):  # a fragment per write
        store.files.replace([_write(project.id, f"f{n}.py", [f"zebra{n} stripe{i}" for i in range(5)], "1")])
    uri = str(Path(store.path) / "code_chunks.lance")
    assert len(lance.dataset(uri).get_fragments()) == 4
    store.indexes.ensure()
    before = {c.id for c in store.search.text_candidates("chunks", "stripe1", ChunkFilter(), 10)}
    assert len(before) == 4
    store.maintenance.optimize()
    assert "optimize_small_table" in children.jobs
    # with the writer's allocator settings (``indexer.memory.child_env``)
    assert all(env.get("MALLOC_ARENA_MAX") == "2" for env in children.envs)
    assert len(lance.dataset(uri).get_fragments()) == 1
    assert store.indexes.unindexed_rows() == 0
    assert {c.id for c in store.search.text_candidates("chunks", "stripe1", ChunkFilter(), 10)} == before


def test_a_failed_fold_or_merge_never_fails_a_write_or_an_optimize(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child process that folds rows into the indexes can fail (killed, out of
    memory): the rows stay found by scanning, and the optimize still compacts."""
    from indexer.errors import StoreError
    from indexer.store._lance import _maintenance

    failing = {"optimize_indices"}  # the fold's job
    real_run = _maintenance.run_job

    def broken(job: str, args: list[Any], *rest: Any, **kwargs: Any) -> None:
        if job in failing:
            raise StoreError(f"{job} of {args[0]} failed: killed")
        real_run(job, args, *rest, **kwargs)

    monkeypatch.setattr(_maintenance, "FOLD_ROWS", 2)
    project = store.projects.add("p", "/p")
    store.files.replace([_write(project.id, "base.py", ["alpha beta"], "1")])
    store.maintenance.optimize()
    monkeypatch.setattr(_maintenance, "run_job", broken)
    store.files.replace([_write(project.id, "new.py", ["zebra stripe", "zebra mane"], "1")])
    assert not store.maintenance.fold_new_rows()
    assert len(store.search.text_candidates("chunks", "zebra", ChunkFilter(), 10)) == 2
    store.maintenance.optimize()  # its own index update still folds them in
    assert _text_index(store)[1] == 0
    assert len(store.search.text_candidates("chunks", "zebra", ChunkFilter(), 10)) == 2
    # the optimize's child failing too (a table with a big fragment): LanceDB's optimize
    # runs instead
    monkeypatch.setattr(_maintenance, "COMPACT_TARGET_ROWS", 1)
    failing.add("optimize_table")
    store.files.replace([_write(project.id, "more.py", ["zebra tail"], "1")])
    store.maintenance.optimize()
    assert _text_index(store)[1] == 0
    assert len(store.search.text_candidates("chunks", "zebra", ChunkFilter(), 10)) == 3


@pytest.mark.slow
def test_optimize_rewrites_small_fragments_only_and_leaves_one_segment_per_index(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Compaction merges fragments under ``COMPACT_TARGET_ROWS`` and leaves bigger ones
    as they are (it rewrote a whole 118k-chunk table to add 8k rows); every scalar and
    full-text index ends as one segment covering every row."""
    from indexer.store._lance import _children, _maintenance

    monkeypatch.setattr(_maintenance, "COMPACT_TARGET_ROWS", 30)
    monkeypatch.setattr(_children, "CHILD_MIN_ROWS", 0)  # the child process, as on a big store
    project = store.projects.add("p", "/p")
    store.files.replace([_write(project.id, "big.py", [f"bulk {i}" for i in range(40)], "1")])
    store.maintenance.optimize()
    dataset = store.db.dataset("code_chunks")
    (big,) = [f.fragment_id for f in dataset.get_fragments() if f.count_rows() == 40]
    for n in range(5):
        store.files.replace([_write(project.id, f"f{n}.py", [f"zebra{n} a", f"zebra{n} b"], "1")])
    store.maintenance.optimize()
    dataset = store.db.dataset("code_chunks")
    sizes = {f.fragment_id: f.count_rows() for f in dataset.get_fragments()}
    assert sizes[big] == 40  # not rewritten
    assert sorted(sizes.values()) == [10, 40]  # the five small fragments became one
    for index in dataset.describe_indices():
        assert len(index.segments) == 1, index.name
    assert _text_index(store) == (1, 0)
    assert len(store.search.text_candidates("chunks", "zebra3", ChunkFilter(), 10)) == 2


def _term_hits(store: Store, term: str) -> set[str] | None:
    from indexer.search._terms import term_runs

    ids = store.content.term_chunk_ids(term, term_runs(term) or (), False, ChunkFilter())
    if ids is None:
        return None
    chunks = store.chunks.get(sorted(ids))
    assert len(chunks) == len(ids)
    return {c.chunk.content for c in chunks}


def test_chunk_vocabulary_finds_mid_word_terms_through_the_index(store: Store) -> None:
    """Words are recorded as chunks are written; deleted files leave stale words that match
    nothing; a term inside a word the index keeps is answered by the full-text index."""
    project = store.projects.add("p", "/p")
    store.files.replace([_write(project.id, "a.py", ["def discarded_cart(): pass", "other text"], "v0")])
    store.files.replace([_write(project.id, "b.py", ["cartography lesson"], "v0")])
    store.indexes.ensure()
    assert _term_hits(store, "cart") == {"def discarded_cart(): pass", "cartography lesson"}
    assert _term_hits(store, "scard") == {"def discarded_cart(): pass"}
    assert _term_hits(store, "ography l") == {"cartography lesson"}
    assert _term_hits(store, "nowhere") == set()
    store.files.delete([document_id(project.id, "b.py")])
    assert _term_hits(store, "cartography") == set()
    store.files.replace([_write(project.id, "c.py", ["recartify x"], "v0")])  # after the index
    assert _term_hits(store, "cart") == {"def discarded_cart(): pass", "recartify x"}


def test_a_store_without_a_vocabulary_gets_one_from_its_chunks(tmp_path: Path) -> None:
    """A store written before the vocabulary table existed: readers derive the words from the
    chunks, and the writer saves them when it next builds indexes."""
    import lancedb

    s = open_store(tmp_path / "db", "m", 8)
    project = s.projects.add("p", "/p")
    s.files.replace([_write(project.id, "a.py", ["def discarded_cart(): pass"], "v0")])
    s.indexes.ensure()
    s.close()
    lancedb.connect(str(tmp_path / "db")).drop_table("chunk_vocabulary")
    old = open_store(tmp_path / "db", "m", 8)
    assert _term_hits(old, "scard") == {"def discarded_cart(): pass"}
    assert "chunk_vocabulary" not in lancedb.connect(str(tmp_path / "db")).list_tables().tables
    old.indexes.ensure()
    assert "chunk_vocabulary" in lancedb.connect(str(tmp_path / "db")).list_tables().tables
    old.files.replace([_write(project.id, "b.py", ["a cartwheel"], "v0")])
    assert _term_hits(old, "cart") == {"def discarded_cart(): pass", "a cartwheel"}
    old.close()
    again = open_store(tmp_path / "db", "m", 8)
    assert _term_hits(again, "artwhe") == {"a cartwheel"}
    again.close()


def test_terms_inside_words_the_index_drops_are_left_to_a_scan(store: Store) -> None:
    project = store.projects.add("p", "/p")
    store.files.replace([_write(project.id, "a.py", ["return itself", "x = 'a" + "b" * 45 + "'"], "v0")])
    store.indexes.ensure()
    assert _term_hits(store, "tsel") is None  # only in a stop word
    assert _term_hits(store, "bbbb") is None  # only in a word over the token length limit
    assert _term_hits(store, "retur") == {"return itself"}


def test_chunk_views_by_stale_row_ids_fall_back_to_ids(store: Store) -> None:
    """Row ids read before a compaction no longer point at the same rows; the chunks still come
    back right (looked up by id)."""
    project = store.projects.add("p", "/p")
    for n in range(6):
        store.files.replace([_write(project.id, f"f{n}.py", [f"alpha text {n}", f"beta text {n}"], "v0")])
    store.indexes.ensure()
    found = store.search.text_candidates("chunks", "text", ChunkFilter(), 100)
    assert len(found) == 12
    store.files.delete([document_id(project.id, f"f{n}.py") for n in range(3)])
    store.maintenance.optimize()
    views = store.chunks.views([(c.id, c.row_id) for c in found])
    assert sorted(v.content for v in views) == sorted(
        f"{w} text {n}" for w in ("alpha", "beta") for n in range(3, 6)
    )


def test_prune_versions_keeps_the_current_one_and_prewarm_fills_the_index_cache(tmp_path: Path) -> None:
    from datetime import timedelta

    from conftest import make_repo

    from indexer.api import Lode
    from indexer.config import load_config
    from indexer.search import SearchOptions

    api = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    try:
        repo = make_repo(tmp_path / "repo")
        api.index(repo, name="shop")
        (repo / "src" / "extra.py").write_text("def extra_cart_helper():\n    return 1\n")
        api.index(repo, name="shop")
        store = api.store
        before = api.search(SearchOptions(query="cart item", granularity="chunk"))
        assert len(store.db.dataset("code_chunks").versions()) > 1
        assert store.versions.prune(keep=timedelta(hours=1)) == 0  # nothing that old
        assert store.versions.prune(keep=timedelta(0)) > 0
        assert len(store.db.dataset("code_chunks").versions()) == 1
        dataset = store.db.dataset("code_chunks")
        cached = dataset.session().index_cache_size_bytes()
        store.indexes.prewarm()
        assert dataset.session().index_cache_size_bytes() > cached
        assert api.search(SearchOptions(query="cart item", granularity="chunk")).groups == before.groups
    finally:
        api.close()


def test_only_a_process_that_searches_loads_the_indexes_after_an_optimize(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``lode index`` and ``lode watch`` never search: their optimizes leave the index cache
    empty; once a process prewarmed (a server starting), each optimize prewarms again."""
    project = store.projects.add("p", "/p")
    store.files.replace([_write(project.id, "a.py", ["alpha one", "beta two"], "v0")])
    calls: list[int] = []
    real = Indexes.prewarm

    def counted(self: Indexes) -> None:
        calls.append(1)
        real(self)

    monkeypatch.setattr(Indexes, "prewarm", counted)
    store.maintenance.optimize()
    assert calls == []
    store.indexes.prewarm()
    store.files.replace([_write(project.id, "b.py", ["gamma three"], "v0")])
    store.maintenance.optimize()
    assert len(calls) == 2


def _cache_after_cycles(tmp_path: Path, cycles: int) -> int:
    """The bytes the store's LanceDB connection caches after ``cycles`` of write, optimize
    and search (a watched, searched project: each cycle makes new table versions and new
    index files)."""
    embedder = FakeEmbedder()
    store = open_store(tmp_path / "db", embedder.model_id, embedder.dimension)
    try:
        project = store.projects.add("p", "/p")
        store.indexes.prewarm()  # a server
        for n in range(cycles):
            texts = [f"zebra{n} stripe{i} alpha beta" for i in range(30)]
            store.files.replace([_write(project.id, f"f{n}.py", texts, "1")])
            store.maintenance.optimize()
            assert store.search.text_candidates("chunks", f"zebra{n}", ChunkFilter(), 10)
        return store.db.connection_cache_bytes()
    finally:
        store.close()


@pytest.mark.slow
def test_the_connections_caches_stay_within_their_bounds_as_versions_accumulate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LanceDB's connection caches every table version's metadata and every index it
    opened for as long as the store is open: with its default bounds (GiBs) a store
    written, optimized and searched in cycles holds more after each; the store caps it."""
    from indexer.store._lance import _connect

    monkeypatch.setattr(_connect, "CONNECTION_CACHE_BYTES", 1 << 30)  # LanceDB's are larger still
    unbounded = _cache_after_cycles(tmp_path / "unbounded", 12)
    monkeypatch.setattr(_connect, "CONNECTION_CACHE_BYTES", 256 << 10)
    bounded = _cache_after_cycles(tmp_path / "bounded", 12)
    assert unbounded > 4 << 20
    # two caches (index data, metadata), which evict a little after passing their bound
    assert 0 < bounded <= 3 * (256 << 10)


def test_a_row_without_a_view_cell_is_read_from_its_columns(tmp_path: Path) -> None:
    """An older lode still writing after the migration leaves ``view`` empty: the page read
    falls back to the 13 columns for those rows."""
    from conftest import make_repo

    from indexer.api import Lode
    from indexer.config import load_config
    from indexer.search import SearchOptions

    api = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    try:
        api.index(make_repo(tmp_path / "repo"), name="shop")
        before = api.search(SearchOptions(query="cart item total", granularity="chunk"))
        api.store.db.table("code_chunks").update(
            where="file_path = 'src/shop/cart.py'", values_sql={"view": "NULL"}
        )
        after = api.search(SearchOptions(query="cart item total", granularity="chunk"))

        def shown(resp: object) -> set[tuple[object, ...]]:  # (the rewrite moved the rows: scores may shift)
            hits = [h for g in resp.groups for h in g.chunks]  # type: ignore[attr-defined]
            return {(h.id, h.file_path, h.content, h.start_line, h.node_name, h.scope_path) for h in hits}

        assert shown(after) == shown(before)
        assert any(g.file_path == "src/shop/cart.py" for g in after.groups)
    finally:
        api.close()


def test_a_run_that_folded_ends_with_every_row_folded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that folded rows as it wrote folds its last few too, however few: 214 rows a
    big run left over made every full-text query of a 110k-chunk store 5 ms slower."""
    from conftest import make_repo

    from indexer import pipeline
    from indexer.api import Lode
    from indexer.config import load_config
    from indexer.store._lance import _maintenance

    monkeypatch.setattr(_maintenance, "FOLD_ROWS", 2)
    monkeypatch.setattr(_maintenance, "FORCED_FOLD_ROWS", 10_000)
    monkeypatch.setattr(pipeline, "_BATCH_FILES", 1)  # a write per file
    api = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    try:
        repo = make_repo(tmp_path / "repo")
        api.index(repo, name="shop")
        api.store.maintenance.optimize()
        for n in range(6):
            (repo / "src" / f"more{n}.py").write_text(f"def zebra{n}(n):\n    return n * {n}\n")
        api.index(repo, name="shop", embed=False)
        segments, unindexed = _text_index(api.store)
        assert segments > 2  # folded while writing…
        assert unindexed == 0  # …and at the end
    finally:
        api.close()


def test_vector_writes_never_make_a_saved_files_run_wait_for_a_fold(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Phase 2 rewrites the rows it gives vectors (new rows to the indexes) and folds them
    in itself, as it goes and when it ends; they never make the end of a saved file's
    phase 1 wait for a fold child (~0.5 s before the file is reported searchable): only
    the rows phase 1 added count there."""
    from indexer.store._lance import _maintenance

    monkeypatch.setattr(_maintenance, "FORCED_FOLD_ROWS", 3)
    project = store.projects.add("p", "/p")
    store.files.replace([_write(project.id, "a.py", [f"alpha {i}" for i in range(6)], "1")])
    store.maintenance.optimize()
    ids = [c.id for c in store.chunks.of_files([document_id(project.id, "a.py")])]
    store.vectors.write(ids, np.ones((len(ids), store.dimension), dtype=np.float32), _hashes(ids))
    assert _text_index(store) == (1, 6)  # the 6 rewritten chunks
    assert not store.maintenance.fold_new_rows(force=True, rewritten=False)
    store.files.replace([_write(project.id, "b.py", ["beta one", "beta two"], "1")])  # 3 rows
    assert store.maintenance.fold_new_rows(force=True, rewritten=False)
    assert _text_index(store) == (2, 0)


def test_phase_2_folds_the_rows_it_rewrote(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows a vector write rewrote count toward phase 2's own folds."""
    from indexer.store._lance import _maintenance

    monkeypatch.setattr(_maintenance, "FORCED_FOLD_ROWS", 3)
    project = store.projects.add("p", "/p")
    store.files.replace([_write(project.id, "a.py", [f"alpha {i}" for i in range(6)], "1")])
    store.maintenance.optimize()
    ids = [c.id for c in store.chunks.of_files([document_id(project.id, "a.py")])]
    store.vectors.write(ids[:2], np.ones((2, store.dimension), dtype=np.float32), _hashes(ids[:2]))
    assert not store.maintenance.fold_new_rows(force=True)  # 2 rows wait
    store.vectors.write(ids[2:], np.ones((4, store.dimension), dtype=np.float32), _hashes(ids[2:]))
    assert store.maintenance.fold_new_rows(force=True)
    segments, unindexed = _text_index(store)
    assert (segments, unindexed) == (2, 0)


def test_a_vector_write_changes_only_the_vector_of_the_rows_it_writes(store: Store) -> None:
    """Whole rows are written (read by id, vectors swapped in): every other column of them
    and every other row stays as it was; ids gone meanwhile are skipped."""
    project = store.projects.add("p", "/p")
    store.files.replace(
        [
            _write(project.id, "a.py", ["alpha one", "alpha two", "alpha three"], "1"),
            _write(project.id, "b.py", ["beta one"], "1"),
        ]
    )
    import lance

    def stored() -> dict[str, dict[str, Any]]:
        table = lance.dataset(str(Path(store.path) / "code_chunks.lance")).to_table()
        return {row["id"]: row for row in table.to_pylist()}

    before = stored()
    a = [c.id for c in store.chunks.of_files([document_id(project.id, "a.py")])]
    vectors = np.arange(3 * store.dimension, dtype=np.float32).reshape(3, store.dimension)
    # asked in another order than stored, with an id that no longer exists
    asked = [a[2], "gone", a[0], a[1]]
    given = np.stack([vectors[2], vectors[2], vectors[0], vectors[1]])
    assert store.vectors.write(asked, given, [f"text of {i}" for i in asked]) == 3
    after = stored()
    assert after.keys() == before.keys()
    for chunk_id, row in after.items():
        if chunk_id in a:
            changed = {
                "embedding": row["embedding"],
                "embedded": True,
                "vector_text_hash": f"text of {chunk_id}",
            }
            assert row == before[chunk_id] | changed
        else:
            assert row == before[chunk_id]
    got = store.vectors.of_chunks(a)
    for i, chunk_id in enumerate(a):
        np.testing.assert_array_equal(got[chunk_id], vectors[i])


def test_an_index_run_ends_with_its_rows_in_the_text_indexes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows a run wrote are folded in when it ends (each unfolded row costs every
    full-text query ~40 µs), without waiting for an optimize."""
    from conftest import make_repo

    from indexer.api import Lode
    from indexer.config import load_config
    from indexer.store._lance import _maintenance

    monkeypatch.setattr(_maintenance, "FORCED_FOLD_ROWS", 1)

    api = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    try:
        repo = make_repo(tmp_path / "repo")
        api.index(repo, name="shop")
        api.store.maintenance.optimize()
        assert _text_index(api.store) == (1, 0)
        (repo / "src" / "extra.py").write_text("def zebra_stripes(n):\n    return n * 2\n")
        api.index(repo, name="shop", embed=False)  # a few rows: far below any optimize threshold
        segments, unindexed = _text_index(api.store)
        assert unindexed == 0
        assert segments == 2  # folded, not optimized
    finally:
        api.close()


def test_counts_through_a_scan_equal_lances_own(tmp_path: Path) -> None:
    """``count_admitted`` (a scan: it waits for Lance without the GIL, where pylance's
    ``count_rows`` holds it) counts what ``count_rows`` counts, in the whole table or some
    fragments, and stops at ``limit``."""
    from indexer.store._lance._scan import count_admitted

    s = open_store(tmp_path / "db", "m", 16)
    project = s.projects.add("p", str(tmp_path))
    try:
        s.files.replace(
            [_write(project.id, f"f{n}.py", [f"t{n}-{i}" for i in range(7)], "v1") for n in range(3)]
        )
        dataset = s.db.dataset("code_chunks")
        fragments = dataset.get_fragments()
        for where in (None, "embedded = true", "embedded IS NOT TRUE", "file_path = 'f1.py'"):
            assert count_admitted(dataset, where) == dataset.count_rows(where)
            assert count_admitted(dataset, where, fragments=fragments[:1]) == fragments[0].count_rows(where)
        assert count_admitted(dataset, None, limit=1) == 1
        assert not s.search.all_embedded_at(s.search.chunk_table_version())
    finally:
        s.close()
