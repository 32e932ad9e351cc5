"""A save does not wait for the index's maintenance: a fold or optimize running in a child
process (a big store's) is killed when a save waits, its work left for the next call, and
never twice in a row (saves every few seconds must not starve it)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from indexer.api import Lode
from indexer.config import load_config
from indexer.embed import FakeEmbedder
from indexer.store._lance import _children
from indexer.store._lance._children import JobInterruptedError, run_job
from indexer.store._lance._maintenance import COMPACT_TARGET_ROWS
from indexer.store._schema import CHUNKS


def _indexed(tmp_path: Path, files: int = 40) -> Lode:
    root = tmp_path / "repo"
    root.mkdir()
    for i in range(files):
        (root / f"m{i}.py").write_text(f"def f{i}(x):\n    return x + {i}\n")
    lode = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    lode.index(root, name="repo")
    return lode


@pytest.mark.slow  # child processes: about 2 s
def test_an_interrupted_child_job_leaves_the_table_as_it_was(tmp_path: Path) -> None:
    lode = _indexed(tmp_path)
    try:
        db = lode.store.db
        uri = db.table(CHUNKS).uri
        rows = db.table(CHUNKS).count_rows()
        started = time.monotonic()
        with pytest.raises(JobInterruptedError, match="interrupted for a save"):
            run_job(
                "optimize_table", [uri, COMPACT_TARGET_ROWS], {}, False, "optimizing", interrupt=lambda: True
            )
        assert time.monotonic() - started < 2.0  # killed at once, not run to its end
        assert db.table(CHUNKS).count_rows() == rows
        assert lode.check().ok
        run_job("optimize_table", [uri, COMPACT_TARGET_ROWS], {}, False, "optimizing")  # and it runs again
        assert db.table(CHUNKS).count_rows() == rows
    finally:
        lode.close()


@pytest.mark.slow  # child processes: a few seconds
def test_an_optimize_interrupted_for_a_save_is_done_by_the_next_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_children, "CHILD_MIN_ROWS", 0)  # a big store: maintenance in children
    lode = _indexed(tmp_path)
    try:
        (tmp_path / "repo" / "late.py").write_text("def late():\n    return 1\n")
        lode.index(tmp_path / "repo", name="repo")
        maintenance, changes = lode.store.maintenance, lode.store.db.changes
        assert changes.written > 0
        maintenance.save_waits = lambda: True  # a save waits, the whole time
        assert maintenance.maybe_optimize(rows=1) is False  # interrupted: nothing done
        assert changes.written > 0
        assert maintenance.maybe_optimize(rows=1) is True  # the next one runs to its end
        assert changes.written == 0
        maintenance.save_waits = lambda: False
        assert lode.check().ok
    finally:
        lode.close()
