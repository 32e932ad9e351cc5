"""Indexing with the fake embedder: incremental runs, deletes, renames, failures, repair."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import make_repo

from indexer.api import Lode
from indexer.config import load_config
from indexer.embed import FakeEmbedder
from indexer.errors import PathError
from indexer.store import Store


def _docs(store: Store, project_id: str) -> dict[str, str]:
    return {path: s.content_hash for path, s in store.documents.states(project_id).items()}


def _check_consistent(store: Store, project_id: str) -> None:
    """One document per file, every chunk belongs to a document of the same content hash."""
    states = store.documents.states(project_id)
    chunks = store.chunks.of_files([s.id for s in states.values()])
    assert len(chunks) == store.chunks.count(project_id), "orphan chunks"
    for state in states.values():
        own = [c for c in chunks if c.file_id == state.id]
        assert len(own) == state.chunk_count, state.file_path
        assert [c.chunk.chunk_index for c in own] == list(range(len(own)))


def test_index_fixture_repo(lode: Lode, repo: Path, fake_embedder: FakeEmbedder) -> None:
    report = lode.index(repo)
    assert report.files_indexed == 11
    assert sorted(s.path for s in report.files_skipped) == ["logo.dat"]
    assert report.files_skipped[0].reason.startswith("binary file")
    assert report.chunks_written > 10
    assert report.chunks_embedded == fake_embedder.texts_embedded > 0
    store = lode.store
    project = store.projects.get("repo")
    assert set(_docs(store, project.id)) == {
        ".gitignore",
        ".lodeignore",
        "README.md",
        "docs/guide.md",
        "src/shop/__init__.py",
        "src/shop/cart.py",
        "src/shop/pricing.py",
        "src/web/request.py",
        "src/web/router.go",
        "src/web/session.rs",
        "src/web/widget.js",
    }
    assert store.vectors.coverage(project.id) == 1.0
    _check_consistent(store, project.id)


def test_second_run_embeds_nothing(lode: Lode, repo: Path, fake_embedder: FakeEmbedder) -> None:
    lode.index(repo)
    before = fake_embedder.texts_embedded
    report = lode.index(repo)
    assert report.files_indexed == 0
    assert report.files_unchanged == 11
    assert [s.path for s in report.files_skipped] == ["logo.dat"]  # binary: refused again, never stored
    assert report.chunks_embedded == 0
    assert fake_embedder.texts_embedded == before


def test_edit_one_function_reembeds_only_its_chunks(
    lode: Lode, repo: Path, fake_embedder: FakeEmbedder
) -> None:
    lode.index(repo)
    path = repo / "src/shop/pricing.py"
    path.write_text(path.read_text().replace("rounding down to whole cents", "rounding toward zero"))
    before = fake_embedder.texts_embedded
    report = lode.index(repo)
    assert report.files_indexed == 1
    assert report.chunks_embedded == 1
    assert fake_embedder.texts_embedded - before == 1
    assert report.embedding_cache_hits >= 1  # the untouched chunks of the file came from the cache


def test_touch_without_change_rereads_but_does_not_rewrite(lode: Lode, repo: Path) -> None:
    lode.index(repo)
    path = repo / "src/shop/cart.py"
    path.write_text(path.read_text())  # new mtime, same bytes
    report = lode.index(repo)
    assert report.files_indexed == 0
    assert report.chunks_written == 0
    assert report.files_unchanged == 11
    assert lode.index(repo).files_unchanged == 11


def test_delete_file_removes_rows(lode: Lode, repo: Path) -> None:
    lode.index(repo)
    (repo / "src/web/router.go").unlink()
    report = lode.index(repo)
    assert report.files_deleted == 1
    project = lode.store.projects.get("repo")
    assert "src/web/router.go" not in _docs(lode.store, project.id)
    assert not [c for c in lode.store.chunks.of_files([]) if c.file_path == "src/web/router.go"]
    assert lode.store.chunks.count(project.id) == sum(
        s.chunk_count for s in lode.store.documents.states(project.id).values()
    )


def test_a_renamed_file_is_embedded_as_its_new_path_and_renamed_back_from_the_cache(
    lode: Lode, repo: Path, fake_embedder: FakeEmbedder
) -> None:
    """A chunk is embedded with its path's words: a rename makes new texts (the vectors of
    the old path's would describe another file), and renaming it back finds the first
    ones in the cache."""
    lode.index(repo)
    chunks = len(lode.store.chunks.of_files([_doc_id(lode, "src/web/request.py")]))
    (repo / "src/web/request.py").rename(repo / "src/web/http_request.py")
    before = fake_embedder.texts_embedded
    report = lode.index(repo)
    assert report.files_deleted == 1
    assert report.files_indexed == 1
    assert report.chunks_embedded == chunks
    assert fake_embedder.texts_embedded == before + chunks
    project = lode.store.projects.get("repo")
    assert "src/web/http_request.py" in _docs(lode.store, project.id)
    assert lode.store.vectors.coverage(project.id) == 1.0
    (repo / "src/web/http_request.py").rename(repo / "src/web/request.py")
    report = lode.index(repo)
    assert report.chunks_embedded == 0
    assert report.embedding_cache_hits == chunks
    assert fake_embedder.texts_embedded == before + chunks


def _doc_id(lode: Lode, path: str) -> str:
    project = lode.store.projects.get("repo")
    return lode.store.documents.states(project.id)[path].id


def test_gitignore_change_drops_newly_ignored_files(lode: Lode, repo: Path) -> None:
    lode.index(repo)
    (repo / ".gitignore").write_text((repo / ".gitignore").read_text() + "docs/\n")
    report = lode.index(repo)
    assert report.files_deleted == 1
    project = lode.store.projects.get("repo")
    assert "docs/guide.md" not in _docs(lode.store, project.id)


def test_model_failure_is_recorded_and_retried(lode: Lode, repo: Path, fake_embedder: FakeEmbedder) -> None:
    fake_embedder.fail_on = "RequestParser"
    report = lode.index(repo)
    assert report.files_failed
    assert {f.path for f in report.files_failed} == {"src/web/request.py"}
    project = lode.store.projects.get("repo")
    errors = lode.store.files.errors(project.id)
    assert [(e["file_path"], e["stage"]) for e in errors] == [("src/web/request.py", "embed")]
    assert lode.store.vectors.coverage(project.id) < 1.0
    # the file stays lexically searchable
    hits = lode.store.search.text_candidates("chunks", "RequestParser", _flt(project.id), 5)
    assert hits
    fake_embedder.fail_on = None
    report = lode.index(repo)
    assert report.chunks_embedded >= 1
    assert lode.store.files.errors(project.id) == []
    assert lode.store.vectors.coverage(project.id) == 1.0


def test_lexical_phase_only_then_backlog(lode: Lode, repo: Path, fake_embedder: FakeEmbedder) -> None:
    report = lode.index(repo, embed=False)
    assert report.chunks_embedded == 0
    assert fake_embedder.texts_embedded == 0
    project = lode.store.projects.get("repo")
    assert lode.store.vectors.coverage(project.id) == 0.0
    assert lode.store.search.text_candidates("chunks", "discount", _flt(project.id), 5)
    report = lode.index(repo)
    assert report.chunks_embedded == fake_embedder.texts_embedded > 0
    assert lode.store.vectors.coverage(project.id) == 1.0


def test_repair_drops_orphans_and_half_written_files(lode: Lode, repo: Path) -> None:
    lode.index(repo)
    store = lode.store
    project = store.projects.get("repo")
    state = store.documents.states(project.id)["src/shop/cart.py"]
    # simulate a crash between the chunk merge and the document merge: the document
    # disappears (orphan chunks) for one file, and another file's document is stale
    store.files.delete([])  # no-op
    from indexer.store._schema import DOCUMENTS

    store.db.table(DOCUMENTS).delete(f"id = '{state.id}'")
    stale = store.documents.states(project.id)["src/shop/pricing.py"]
    store.db.table(DOCUMENTS).update(where=f"id = '{stale.id}'", values={"content_hash": "different"})
    dirty = store.files.repair(project.id)
    assert dirty == {"src/shop/pricing.py"}
    assert not store.chunks.of_files([state.id])
    report = lode.index(repo)
    assert report.files_indexed == 2
    _check_consistent(store, project.id)


def test_bad_paths_name_the_field(lode: Lode, tmp_path: Path) -> None:
    with pytest.raises(PathError) as missing:
        lode.index(tmp_path / "nope")
    assert missing.value.field == "path"
    file = tmp_path / "file.py"
    file.write_text("x = 1\n")
    with pytest.raises(PathError, match="not a folder"):
        lode.index(file)


def test_files_vanishing_during_run_are_skipped(
    lode: Lode, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from indexer import prepare

    real_read = prepare._read

    def vanish(job: prepare.FileJob) -> prepare.ContainedRead:
        if job.abs_path.endswith("src/web/widget.js"):
            Path(job.abs_path).unlink()
        return real_read(job)

    monkeypatch.setattr(prepare, "_read", vanish)
    report = lode.index(repo)
    assert {s.path: s.reason for s in report.files_skipped}["src/web/widget.js"].startswith("vanished")
    project = lode.store.projects.get("repo")
    assert "src/web/widget.js" not in _docs(lode.store, project.id)


def _flt(project_id: str):  # type: ignore[no-untyped-def]
    from indexer.models import ChunkFilter

    return ChunkFilter(project_ids=(project_id,))


def test_a_vanished_project_folder_deletes_nothing(lode: Lode, repo: Path, tmp_path: Path) -> None:
    lode.index(repo)
    project = lode.store.projects.get("repo")
    before = lode.store.documents.count(project.id)
    repo.rename(tmp_path / "moved-away")
    from indexer.pipeline import run_lexical_phase

    with pytest.raises(PathError, match="missing"):
        run_lexical_phase(lode.store, lode.lazy_embedder, project, lode.config)
    assert lode.store.documents.count(project.id) == before


def test_partial_paths_delete_only_inside_them(lode: Lode, repo: Path) -> None:
    lode.index(repo)
    project = lode.store.projects.get("repo")
    (repo / "src/web/router.go").unlink()
    (repo / "src/shop/pricing.py").unlink()
    from indexer.pipeline import run_lexical_phase

    report = run_lexical_phase(lode.store, lode.lazy_embedder, project, lode.config, paths=("src/web",))
    assert report.files_deleted == 1
    paths = set(lode.store.documents.states(project.id))
    assert "src/web/router.go" not in paths
    assert "src/shop/pricing.py" in paths  # outside the paths given: left for a later diff


def test_files_are_prepared_on_worker_processes_like_in_process(tmp_path: Path) -> None:
    """A big run spreads read/hash/chunk/describe over processes; results and order are
    exactly those of the in-process path."""
    from indexer.config import ChunkerConfig
    from indexer.prepare import PARALLEL_MIN_FILES, FileJob, prepare_all

    root = tmp_path / "many"
    root.mkdir()
    jobs = []
    for i in range(PARALLEL_MIN_FILES + 16):
        path = root / f"mod_{i}.py"
        body = f'"""Module {i}."""\n\n\nclass Thing{i}:\n    def run(self):\n        return helper_{i}()\n'
        path.write_text(body if i % 7 else "")
        jobs.append(
            FileJob("p", path.name, str(path), str(root), True, 1.0, None, False, 1 << 20, ChunkerConfig(), 5)
        )
    jobs.append(
        FileJob(
            "p",
            "gone.py",
            str(root / "gone.py"),
            str(root),
            True,
            1.0,
            None,
            False,
            1 << 20,
            ChunkerConfig(),
            5,
        )
    )

    def summary(results):  # type: ignore[no-untyped-def]
        return [
            (
                r.kind,
                r.reason,
                r.write.document if r.write else None,
                [(c.chunk.chunk_hash, c.chunk.node_name) for c in r.write.chunks] if r.write else None,
            )
            for r in results
        ]

    parallel = summary(list(prepare_all(jobs, workers=2)))
    serial = summary(list(prepare_all(jobs, workers=1)))
    assert parallel == serial
    assert parallel[-1][0] == "gone"
    assert parallel[1][2].file_path == "mod_1.py"
    assert "Thing1" in {name for _, name in parallel[1][3]}


def test_worker_processes_leave_when_the_indexer_is_killed(tmp_path: Path) -> None:
    """A SIGKILLed indexer must not leave file-preparing workers behind."""
    import os
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "hold.py"
    script.write_text(
        "import multiprocessing, sys, time\n"
        "from pathlib import Path\n"
        "from indexer.config import ChunkerConfig\n"
        "from indexer.prepare import FileJob, prepare_all\n"
        "if __name__ == '__main__':\n"
        "    root = Path(sys.argv[1])\n"
        "    jobs = []\n"
        "    for i in range(100):\n"
        "        (root / f'm{i}.py').write_text(f'def f{i}():\\n    return {i}\\n')\n"
        "        jobs.append(FileJob('p', f'm{i}.py', str(root / f'm{i}.py'), str(root), True, 1.0, None, False, 1 << 20, ChunkerConfig(), 1))\n"
        "    results = prepare_all(jobs, workers=2)\n"
        "    next(results)\n"
        "    print(' '.join(str(p.pid) for p in multiprocessing.active_children()), flush=True)\n"
        "    time.sleep(120)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])},
    )
    assert proc.stdout is not None
    workers = [int(p) for p in proc.stdout.readline().split()]
    assert len(workers) == 2
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()

    def alive(pid: int) -> bool:
        try:
            state = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return False
        return "State:\tZ" not in state

    deadline = time.monotonic() + 15
    while any(alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [p for p in workers if alive(p)]


def test_a_first_index_ends_with_its_vector_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once enough chunks have vectors, the index run itself builds the vector index (a
    store left without one answers every semantic query by scanning all vectors)."""
    from indexer.store._lance import _indexes

    monkeypatch.setattr(_indexes, "VECTOR_INDEX_MIN_ROWS", 10)
    monkeypatch.setattr(_indexes, "VECTOR_PARTITION_ROWS", 8)
    repo = make_repo(tmp_path / "repo")
    api = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    try:
        api.index(repo, name="shop")
        assert api.store.chunks.count(embedded=True) >= 10
        indexed = {c for i in api.store.db.table("code_chunks").list_indices() for c in i.columns}
        assert "embedding" in indexed
    finally:
        api.close()


def test_a_rename_or_new_globs_during_a_run_are_kept(lode: Lode, repo: Path) -> None:
    """A run stamps its project's last index without writing back the project it read at its
    start: a PATCH made while it ran (name, globs) survives it."""
    from dataclasses import replace

    from indexer.pipeline import run_lexical_phase

    lode.index(repo)
    stale = lode.store.projects.get("repo")
    lode.store.projects.save(replace(stale, name="renamed", exclude=("docs/",)))
    run_lexical_phase(lode.store, lode.lazy_embedder, stale, lode.config, full=True)
    after = lode.store.projects.get(stale.id)
    assert (after.name, after.exclude) == ("renamed", ("docs/",))
    assert after.last_indexed_at is not None
    assert stale.last_indexed_at is not None
    assert after.last_indexed_at > stale.last_indexed_at
