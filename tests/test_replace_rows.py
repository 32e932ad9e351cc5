"""A saved file's rows are swapped in one commit without a join (``replace_rows``): the
old rows out, the new in, readers never seeing both or neither (issue 43: the merges it
replaces took ~90 ms each per save while another project embedded)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from indexer.api import Lode
from indexer.config import load_config
from indexer.embed import FakeEmbedder
from indexer.search import SearchOptions
from indexer.store._lance._replace import replace_rows
from indexer.store._schema import CHUNKS, DOCUMENTS, SYMBOLS
from indexer.store._sql import in_list


def _lode(tmp_path: Path) -> tuple[Lode, Path]:
    root = tmp_path / "repo"
    root.mkdir()
    for i in range(6):
        (root / f"m{i}.py").write_text(f"def original_{i}(x):\n    return helper_{i}(x)\n")
    lode = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    lode.index(root, name="repo")
    return lode, root


def _names(lode: Lode, query: str) -> set[str]:
    response = lode.search(SearchOptions(query=query, mode="lexical", granularity="chunk", limit=20))
    return {h.node_name or "" for g in response.groups for h in g.chunks}


def test_an_edit_swaps_a_files_rows_in_one_commit_per_table(tmp_path: Path) -> None:
    lode, root = _lode(tmp_path)
    try:
        db = lode.store.db
        versions = {name: db.own_dataset(name).version for name in (CHUNKS, SYMBOLS, DOCUMENTS)}
        counts = {name: db.table(name).count_rows() for name in (CHUNKS, SYMBOLS, DOCUMENTS)}
        (root / "m3.py").write_text("def renamed_three(x):\n    return other_three(x)\n")
        lode.index(root, name="repo", paths=("m3.py",), embed=False)
        for name in (CHUNKS, SYMBOLS, DOCUMENTS):  # one commit each, the same number of rows
            assert db.own_dataset(name).version == versions[name] + 1, name
            assert db.table(name).count_rows() == counts[name], name
        assert "renamed_three" in _names(lode, "renamed_three")
        assert "original_3" not in _names(lode, "original_3")
        assert "original_4" in _names(lode, "original_4")  # the other files' rows stay
        assert [s.name for s in lode.store.symbols.definitions(["renamed_three"])] == ["renamed_three"]
        assert lode.store.symbols.definitions(["original_3"]) == []
        assert lode.check().ok
    finally:
        lode.close()


def test_a_fragment_whose_rows_all_go_is_removed_and_nothing_else_moves(tmp_path: Path) -> None:
    lode, _root = _lode(tmp_path)
    try:
        db = lode.store.db
        with db.write_lock:
            before = db.own_dataset(DOCUMENTS)
            ids = sorted(before.to_table(columns=["id"])["id"].to_pylist())
            kept = before.to_table(filter=in_list("id", ids[:2]))
            replace_rows(
                db, DOCUMENTS, f"id NOT IN ({', '.join(repr(i) for i in ids[:2])})", kept.slice(0, 0)
            )
        after = db.own_dataset(DOCUMENTS)
        assert sorted(after.to_table(columns=["id"])["id"].to_pylist()) == ids[:2]
        assert after.version == before.version + 1
        with db.write_lock:  # nothing matched, nothing to add: no commit
            replace_rows(db, DOCUMENTS, "id = 'none'", pa.Table.from_batches([], schema=after.schema))
        assert db.own_dataset(DOCUMENTS).version == after.version
    finally:
        lode.close()
