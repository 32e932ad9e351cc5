"""Kill tests: SIGKILL an indexing subprocess mid-run; the next run repairs and completes.
The model is the fake one (``tests/slowdown`` puts it in): the kills and the embedding
cache's accounting are the point, and a real model took most of the minute it ran."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from indexer.store import Store, open_store, read_store_info

pytestmark = pytest.mark.slow


def _make_repo(root: Path, files: int) -> None:
    for i in range(files):
        folder = root / f"pkg{i % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        body = "\n\n".join(
            f"def handler_{i}_{j}(value_{j}: int) -> int:\n"
            f'    """Handle event {i}.{j} and return a derived number."""\n'
            f"    total = value_{j} * {i + 1} + {j}\n"
            f"    return total - {i * 7 + j}\n"
            for j in range(1)
        )
        (folder / f"mod_{i}.py").write_text(body + "\n")


#: The environment of a subprocess with the fake model (``tests/slowdown/sitecustomize.py``).
_FAKE_MODEL = {"LODE_MODEL": "fake-hash-256"}


def _store(db: Path) -> Store | None:
    info = read_store_info(db)
    if not info:
        return None
    return open_store(db, info["model_id"], int(info["dimension"]))


def _env(db: Path, pause: float = 0.5) -> dict[str, str]:
    """A run on ``db`` with the fake model, pausing ``pause`` s after each durable write."""
    # tests/slowdown/sitecustomize.py pauses after each durable write, so the kill lands
    # between two writes of a run that is really in progress (not after it finished)
    slow = os.pathsep.join(
        (str(Path(__file__).resolve().parent.parent), str(Path(__file__).parent / "slowdown"))
    )
    return {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "LODE_DB": str(db),
        "PYTHONPATH": slow,
        "LODE_TEST_PAUSE": str(pause),
        **_FAKE_MODEL,
    }


def _spawn(repo: Path, db: Path) -> subprocess.Popen[bytes]:
    env = _env(db)
    log = (db.parent / "kill.log").open("ab")
    proc = subprocess.Popen(
        [sys.executable, "-m", "indexer", "index", str(repo), "--json"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    log.close()
    return proc


def _kill_when(proc: subprocess.Popen[bytes], db: Path, ready: object, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    store: Store | None = None
    try:
        while time.monotonic() < deadline:
            assert proc.poll() is None, (db.parent / "kill.log").read_text()
            store = store or _store(db)
            if store is not None and ready(store):  # type: ignore[operator]
                return
            time.sleep(0.02)
        pytest.fail("the run never reached the kill point")
    finally:  # SIGKILL whatever happened, so a failed test leaves no indexer running
        proc.send_signal(signal.SIGKILL)
        proc.wait()


def _assert_consistent(store: Store, files: int) -> None:
    project = store.projects.all()[0]
    states = store.documents.states(project.id)
    assert len(states) == files
    assert store.documents.count(project.id) == files  # no duplicate document rows
    chunks = store.chunks.of_files([s.id for s in states.values()])
    assert len(chunks) == store.chunks.count(project.id), "orphan chunks"
    for state in states.values():
        assert sum(1 for c in chunks if c.file_id == state.id) == state.chunk_count


def test_sigkill_in_both_phases_then_complete(tmp_path: Path) -> None:
    files = 600
    repo = tmp_path / "repo"
    _make_repo(repo, files)
    db = tmp_path / "db"

    # 1: killed during phase 1, after the first batch of chunks is written
    _kill_when(_spawn(repo, db), db, lambda s: s.chunks.count() > 0)
    first = _store(db)
    assert first is not None
    assert first.documents.count() < files, "the first kill must land inside phase 1"
    # 2: killed during phase 2, after some vectors are written
    _kill_when(_spawn(repo, db), db, lambda s: s.chunks.count(embedded=True) > 0)

    store = _store(db)
    assert store is not None
    missing_vectors = store.chunks.count(embedded=False)
    cached_before = store.vectors.cache_size()
    assert missing_vectors > 0

    done = subprocess.run(
        [sys.executable, "-m", "indexer", "index", str(repo), "--json"],
        env=_env(db, pause=0),
        capture_output=True,
        check=True,
    )
    import json

    report = json.loads(done.stdout)
    store = _store(db)
    assert store is not None
    _assert_consistent(store, files)
    assert store.chunks.count(embedded=False) == 0
    total = store.chunks.count()
    # every chunk text embedded exactly once over the three runs: the cache holds one vector per
    # distinct text, and the last run embedded only what was still missing
    states = store.documents.states(store.projects.all()[0].id)
    hashes = {c.chunk.chunk_hash for c in store.chunks.of_files([s.id for s in states.values()])}
    assert store.vectors.cache_size() == len(hashes)
    assert report["chunks_embedded"] == store.vectors.cache_size() - cached_before
    assert report["chunks_embedded"] <= missing_vectors + report["chunks_written"]
    assert total >= files
