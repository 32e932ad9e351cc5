"""Upgrades are explicit and safe (issue 39): an index of an older schema is migrated only
by its writer (``lode upgrade``, or the next ``lode index`` / ``lode serve``), never beside
another lode process that uses it, and with its files chunked again in the same run (their
symbols and roles); a command that only reads says the index needs an upgrade and writes
nothing. Each schema's migration keeps what the index held and answers as before."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from indexer.api import Lode
from indexer.chunker import embedding_text
from indexer.cli import cli
from indexer.config import LodeConfig, load_config
from indexer.embed import FakeEmbedder
from indexer.errors import ConflictError, StoreVersionError
from indexer.models import ChunkFilter, ChunkView, StoredChunk
from indexer.search import SearchOptions
from indexer.store import SCHEMA_VERSION, Store, read_store_info
from indexer.store._rows import unpack_view


def _all_chunks(store: Store) -> list[StoredChunk]:
    ids = [d.id for p in store.projects.all() for d in store.documents.states(p.id).values()]
    return store.chunks.of_files(ids)


def _without_units(groups: Any) -> list[Any]:
    return [
        [replace(h, unit_start_line=0, unit_end_line=0, folded_pieces=0) for h in g.chunks] for g in groups
    ]


def _downgrade(db: Path, version: int) -> None:
    """Make the store at ``db`` look as schema ``version`` (1 to 5) wrote it."""
    import lance
    import lancedb
    import pyarrow as pa

    conn = lancedb.connect(str(db))
    facts = {**read_store_info(db), "schema_version": str(version)}
    facts.pop("embedding_text_version")
    conn.create_table("meta", pa.table({"key": list(facts), "value": list(facts.values())}), mode="overwrite")
    # schema 5: no vector text hash, a cache keyed by content hash
    lance.dataset(str(db / "code_chunks.lance")).drop_columns(["vector_text_hash"])
    dimension = int(facts["dimension"])
    old_cache = pa.schema(
        [
            pa.field("key", pa.string(), False),
            pa.field("model_id", pa.string()),
            pa.field("chunk_hash", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), dimension)),
        ]
    )
    conn.create_table("embedding_cache", schema=old_cache, mode="overwrite")
    if version == 5:
        return
    lance.dataset(str(db / "code_symbols.lance")).drop_columns(["view"])
    if version == 4:
        return
    for table in ("code_symbols", "write_intents"):
        shutil.rmtree(db / f"{table}.lance")
    chunks = lance.dataset(str(db / "code_chunks.lance"))
    roles = ["role"] if version <= 2 else []
    chunks.drop_columns(
        ["unit_start_line", "unit_end_line", "signature", *roles, *(["view"] if version == 1 else [])]
    )
    lance.dataset(str(db / "code_documents.lance")).drop_columns(["chunker_version", *roles])


def _files(db: Path, but: str = "") -> dict[str, tuple[int, int]]:
    """Every file of the index folder (``but`` one): (size, mtime in ns)."""
    return {
        str(p.relative_to(db)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in db.rglob("*")
        if p.is_file() and p.name != but
    }


def _fake(config: LodeConfig) -> FakeEmbedder:
    """The fake model under the configured model's name, so the CLI opens its index."""
    return FakeEmbedder(dimension=384, model_id=config.embed.model)


@pytest.fixture
def shop(tmp_path: Path) -> tuple[LodeConfig, Path]:
    """An index of the fixture repo (with a test file), written and closed."""
    from conftest import make_repo

    config = load_config(env={}, overrides={"db": tmp_path / "db"})
    repo = make_repo(tmp_path / "repo")
    (repo / "tests").mkdir()
    (repo / "tests" / "test_cart.py").write_text("def test_total():\n    assert True\n")
    api = Lode(config, embedder=_fake(config))
    try:
        api.index(repo, name="shop")
        # compacted, as the migration leaves it: full-text scores count the rows phase 2
        # replaced until a compaction drops them
        api.store.maintenance.optimize()
    finally:
        api.close()
    return config, repo


def test_a_schema_1_store_is_migrated_in_place_and_searches_the_same(shop: tuple[LodeConfig, Path]) -> None:
    """Schema 1 had no packed ``view`` column: the upgrade adds it (from the chunks' own
    columns, keeping rows and indexes), then the later schemas' columns; searches answer as
    before (the vectors answer until phase 2 makes them again)."""
    import lance

    config, _ = shop
    db = Path(config.db)
    api = Lode(config, embedder=_fake(config))
    try:
        before = api.search(SearchOptions(query="cart item total", granularity="chunk"))
        views = {c.id: ChunkView.of(c) for c in _all_chunks(api.store)}
    finally:
        api.close()
    covered = lance.dataset(str(db / "code_chunks.lance")).stats.index_stats("search_text_idx")
    assert covered["num_unindexed_rows"] == 0
    _downgrade(db, 1)

    api = Lode(config, embedder=_fake(config))
    try:
        api.hold_writer()
        assert api.store.chunks.count() == len(views)  # opens (and migrates) the store
        assert read_store_info(db)["schema_version"] == str(SCHEMA_VERSION)
        migrated = lance.dataset(str(db / "code_chunks.lance"))
        cells = migrated.to_table(columns=["id", "view", "content", "role"]).to_pylist()
        # a migrated view reads as the chunk itself being its unit (no signature) until
        # re-chunked; its role is computed again from its file and fields, as the index had it
        own = {i: replace(v, unit_start_line=v.start_line, unit_end_line=v.end_line, signature="")
               for i, v in views.items()}  # fmt: skip
        assert {c["id"]: unpack_view(c["view"], c["content"], c["role"]) for c in cells} == own
        assert migrated.stats.index_stats("search_text_idx")["num_unindexed_rows"] == 0
        after = api.search(SearchOptions(query="cart item total", granularity="chunk"))
        # the same hits; a hit's unit lines come back with the re-chunk
        assert _without_units(after.groups) == _without_units(before.groups)
    finally:
        api.close()


@pytest.mark.parametrize("version", [2, 3])
def test_an_upgrade_chunks_every_file_again_in_the_same_run(
    shop: tuple[LodeConfig, Path], version: int
) -> None:
    """Schema 2 lacked the roles, schema 3 the unit lines, signatures and chunker versions:
    ``lode upgrade`` adds the columns (roles computed) and chunks every file again at once,
    so the symbol index is whole when it returns, not at the next run."""
    config, repo = shop
    api = Lode(config, embedder=_fake(config))
    try:
        files = api.store.documents.count()
        roles = {c.id: c.role for c in _all_chunks(api.store)}
        definitions = api.store.symbols.count(role="definition")
    finally:
        api.close()
    assert {"test", "docs", "implementation"} <= set(roles.values())
    assert definitions > 0
    _downgrade(Path(config.db), version)
    api = Lode(config, embedder=_fake(config))
    try:
        report = api.upgrade()
        assert (report.from_version, report.to_version) == (version, SCHEMA_VERSION)
        assert report.files_rechunked == files
        assert report.files_awaiting_rechunk == 0
        assert api.store.symbols.count(role="definition") == definitions
        assert {c.role for c in _all_chunks(api.store)} == set(roles.values())
        assert any(c.chunk.signature for c in _all_chunks(api.store))
        assert api.store.check().ok
        assert api.index(repo, name="shop").files_indexed == 0  # nothing left to chunk
    finally:
        api.close()


def test_a_schema_4_store_gets_packed_symbol_rows_and_answers_the_same(shop: tuple[LodeConfig, Path]) -> None:
    """Schema 4 had no packed ``view`` cell on symbol rows: the upgrade adds it from the
    rows' own columns (no re-chunk), and every lookup answers as before."""
    config, repo = shop
    api = Lode(config, embedder=_fake(config))
    try:
        project = api.store.projects.get("shop")
        files = list(api.store.documents.states(project.id).values())
        before = {f.id: api.store.symbols.of_file(f.id) for f in files}
        names = sorted({s.name for rows in before.values() for s in rows})
        definitions = sorted(api.store.symbols.definitions(names), key=lambda s: s.id)
        references = sorted(api.store.symbols.references(names), key=lambda s: s.id)
    finally:
        api.close()
    assert definitions
    assert references
    _downgrade(Path(config.db), 4)
    api = Lode(config, embedder=_fake(config))
    try:
        assert api.upgrade().files_rechunked == 0
        assert {f.id: api.store.symbols.of_file(f.id) for f in files} == before
        assert read_store_info(Path(config.db))["schema_version"] == str(SCHEMA_VERSION)
        assert sorted(api.store.symbols.definitions(names), key=lambda s: s.id) == definitions
        assert sorted(api.store.symbols.references(names), key=lambda s: s.id) == references
        assert api.index(repo, name="shop").files_indexed == 0  # nothing chunked again
        assert api.store.check().ok
    finally:
        api.close()


def test_a_schema_5_store_makes_every_vector_again_and_answers_meanwhile(
    shop: tuple[LodeConfig, Path],
) -> None:
    """Schema 5 keyed vectors by content hash, so none is known to match its text: after
    the upgrade every old vector answers semantic searches, is reported as work left, and
    the next phase 2 makes it again from the chunk's text."""
    config, repo = shop
    _downgrade(Path(config.db), 5)
    api = Lode(config, embedder=_fake(config))
    try:
        report = api.upgrade()
        total = api.store.chunks.count()
        assert report.vectors_outdated == total
        assert api.store.vectors.coverage() == 0.0
        hits = api.search(SearchOptions(query="cart item total", granularity="chunk", mode="semantic"))
        assert hits.groups  # the old vectors answer until they are made again
        check = api.store.check()
        assert check.ok
        assert [(p.kind, p.count) for p in check.pending] == [("reembed", total)]
        assert api.index(repo, name="shop").chunks_embedded == total
        assert api.store.vectors.coverage() == 1.0
        assert api.store.check().pending == ()
        found = dict(api.store.chunks.with_vectors(ChunkFilter()))
        chunks = _all_chunks(api.store)
        expected = _fake(config).embed([embedding_text(c.file_path, c.chunk) for c in chunks])
        got = np.stack([found[c] for c in chunks])  # type: ignore[index]
        np.testing.assert_allclose(got, np.asarray(expected), atol=1e-6)
    finally:
        api.close()


def test_reading_an_older_index_says_it_needs_an_upgrade_and_writes_nothing(
    shop: tuple[LodeConfig, Path],
) -> None:
    """``lode search``, ``lode status``, ``lode check``, ``lode symbols`` and ``lode refs``
    on an older index: one line naming ``lode upgrade``, exit 2, not a byte changed."""
    config, _ = shop
    db = Path(config.db)
    _downgrade(db, 2)
    before = _files(db)
    runner = CliRunner()
    env = {"LODE_DB": str(db), "HF_HUB_OFFLINE": "1"}
    for args in (
        ["search", "cart", "--local"],
        ["status", "--local"],
        ["check", "--local"],
        ["symbols", "Cart", "--local"],
        ["refs", "Cart", "--local"],
    ):
        result = runner.invoke(cli, args, env=env)
        assert result.exit_code == 2, (args, result.output)
        assert "needs `lode upgrade`" in result.output, (args, result.output)
        assert "Traceback" not in result.output
    assert _files(db) == before
    assert read_store_info(db)["schema_version"] == "2"
    api = Lode(config, embedder=_fake(config))
    try:
        with pytest.raises(StoreVersionError, match="lode upgrade"):
            api.search(SearchOptions(query="cart"))
    finally:
        api.close()
    assert _files(db) == before


def test_lode_upgrade_migrates_and_says_what_it_did(shop: tuple[LodeConfig, Path]) -> None:
    config, _ = shop
    db = Path(config.db)
    _downgrade(db, 3)
    result = CliRunner().invoke(cli, ["upgrade"], env={"LODE_DB": str(db), "HF_HUB_OFFLINE": "1"})
    assert result.exit_code == 0, result.output
    assert f"from schema 3 to {SCHEMA_VERSION}" in result.output
    assert "chunked again" in result.output
    assert read_store_info(db)["schema_version"] == str(SCHEMA_VERSION)
    again = CliRunner().invoke(cli, ["upgrade"], env={"LODE_DB": str(db), "HF_HUB_OFFLINE": "1"})
    assert again.exit_code == 0, again.output
    assert f"has schema {SCHEMA_VERSION} already" in again.output


def _older_lode(folder: Path, db: Path) -> subprocess.Popen[bytes]:
    """A process that looks as an older ``lode serve`` does from outside: the ``lode``
    script serving ``db`` (an older lode keeps no writer lock)."""
    script = folder / "bin" / "lode"
    script.parent.mkdir(parents=True)
    script.write_text("import time\ntime.sleep(120)\n")
    process = subprocess.Popen([sys.executable, str(script), "serve", "--db", str(db), "--port", "7999"])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not Path(f"/proc/{process.pid}/cmdline").read_bytes():
        time.sleep(0.01)
    return process


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finding other processes needs /proc")
def test_an_upgrade_refuses_while_another_lode_process_uses_the_index(
    shop: tuple[LodeConfig, Path], tmp_path: Path
) -> None:
    config, _ = shop
    db = Path(config.db)
    _downgrade(db, 2)
    before = _files(db)
    other = _older_lode(tmp_path / "old", db)
    try:
        api = Lode(config, embedder=_fake(config))
        try:
            with pytest.raises(ConflictError, match=f"pid {other.pid}: .*lode serve"):
                api.upgrade()
        finally:
            api.close()
        assert _files(db, but="writer.lock") == {k: v for k, v in before.items() if k != "writer.lock"}
        result = CliRunner().invoke(cli, ["index", str(tmp_path / "repo")], env={"LODE_DB": str(db)})
        assert result.exit_code == 2
        assert "stop them first" in result.output
    finally:
        other.kill()
        other.wait()
    api = Lode(config, embedder=_fake(config))
    try:
        assert api.upgrade().to_version == SCHEMA_VERSION  # once it is gone
    finally:
        api.close()


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finding other processes needs /proc")
def test_a_process_on_another_index_or_this_ones_parent_does_not_count(tmp_path: Path) -> None:
    from indexer.index_users import index_users

    db = tmp_path / "db"
    db.mkdir()
    other = _older_lode(tmp_path / "old", tmp_path / "elsewhere")
    try:
        assert index_users(db) == []
        env = {**os.environ, "LODE_DB": str(db)}
        child = subprocess.run(
            [sys.executable, "-c", "from indexer.index_users import index_users; import sys;"
             f"print(index_users(__import__('pathlib').Path({str(db)!r})))"],
            env=env, capture_output=True, text=True, check=True,
        )  # fmt: skip
        assert child.stdout.strip() == "[]"  # its parent (this test) is no lode process anyway
    finally:
        other.kill()
        other.wait()


def test_files_awaiting_a_rechunk_are_said_by_status_and_search(shop: tuple[LodeConfig, Path]) -> None:
    """Until a writer chunks them again, searches and ``lode status`` say how many files an
    older lode chunked (their symbols and roles are incomplete)."""
    config, _ = shop
    api = Lode(config, embedder=_fake(config))
    try:
        api.hold_writer()
        project = api.store.projects.get("shop")
        docs = api.store.db.table("code_documents")
        docs.update(where="file_path LIKE 'src/%'", values_sql={"chunker_version": "NULL"})
        waiting = api.store.documents.count_outdated(project.id)
        assert waiting > 0
        time.sleep(1.1)  # the counts are cached for a second
        status = api.status()
        assert status["projects"][0]["files_awaiting_rechunk"] == waiting
        warnings = api.search(SearchOptions(query="cart")).warnings
        assert any(f"{waiting} files await re-chunking" in w for w in warnings), warnings
        assert api.rechunk_outdated() == waiting
        time.sleep(1.1)
        assert not any("re-chunking" in w for w in api.search(SearchOptions(query="cart")).warnings)
    finally:
        api.close()
