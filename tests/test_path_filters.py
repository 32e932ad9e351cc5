"""Path globs as store filters: the index-friendly SQL (ranges on file_path, with or without
the regular expression) admits exactly the paths the glob's regular expression matches."""

from __future__ import annotations

import re

import pytest

from indexer.api import Lode
from indexer.models import ChunkFilter
from indexer.store._filters import _glob_clause, chunk_where, document_where
from indexer.store._schema import DOCUMENTS
from indexer.store._sql import glob_prefix, glob_to_regex, starts_with

PATHS = [
    "src/app.py", "src/apple.py", "src/app/main.py", "src/app/deep/x.py", "src0/x.py",
    "src-old/x.py", "copy_01/a.py", "copy_0/b.py", "copy_0x.py", "copy_1/c.py", "copy_0a/z/q.py",
    "dé/é.py", "dé0/x.py", "docs/guide.md", "a/b/c/d.py", "a/d.py", "it's/q.py",
]  # fmt: skip
GLOBS = [
    "src", "src/", "/src/**", "src/**", "src/app", "src/app/**", "src/app/**/*", "src/*.py",
    "copy_0*/**", "copy_0*", "copy_0*/*.py", "*.py", "**/*.md", "dé/**", "a/**/d.py",
    "a/b/**", "it's/**", "src/app.py", "src/a?p.py", "src/[a]pp/**", "nothing/**",
]  # fmt: skip


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Lode:
    from indexer.config import load_config
    from indexer.embed import FakeEmbedder

    base = tmp_path_factory.mktemp("paths")
    for rel in PATHS:
        path = base / "repo" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        body = "# guide\n\nSome words.\n" if rel.endswith(".md") else "def unit():\n    return 1\n"
        path.write_text(body)
    api = Lode(load_config(env={}, overrides={"db": base / "db"}), embedder=FakeEmbedder())
    api.index(base / "repo", name="paths")
    return api


def _expected(globs: tuple[str, ...], exclude: tuple[str, ...] = ()) -> set[str]:
    def hit(pattern: str, path: str) -> bool:
        rust = glob_to_regex(pattern, path=True)  # Rust's \x{e9} is Python's \U000000e9
        python = re.sub(r"\\x\{([0-9a-f]+)\}", lambda m: f"\\U{int(m[1], 16):08x}", rust)
        return re.fullmatch(python, path) is not None

    return {
        p
        for p in PATHS
        if (not globs or any(hit(g, p) for g in globs)) and not any(hit(x, p) for x in exclude)
    }


def _admitted(api: Lode, flt: ChunkFilter) -> tuple[set[str], set[str]]:
    chunks = {c.file_path for c, _ in api.store.chunks.with_vectors(flt)}
    where = document_where(flt)
    table = api.store.db.table(DOCUMENTS).search().where(where or "true").select(["file_path"]).limit(None)
    return chunks, set(table.to_arrow()["file_path"].to_pylist())


@pytest.mark.parametrize("glob", GLOBS)
def test_an_include_glob_admits_exactly_its_paths(indexed: Lode, glob: str) -> None:
    chunks, documents = _admitted(indexed, ChunkFilter(path_include=(glob,)))
    assert chunks == _expected((glob,)), chunk_where(ChunkFilter(path_include=(glob,)))
    assert documents == chunks


@pytest.mark.parametrize("glob", GLOBS)
def test_an_exclude_glob_admits_exactly_the_other_paths(indexed: Lode, glob: str) -> None:
    chunks, documents = _admitted(indexed, ChunkFilter(path_exclude=(glob,)))
    assert chunks == _expected((), (glob,))
    assert documents == chunks


def test_includes_and_excludes_combine(indexed: Lode) -> None:
    flt = ChunkFilter(path_include=("src/**", "copy_0*/**", "*.md"), path_exclude=("src/app/**", "copy_01"))
    chunks, _ = _admitted(indexed, flt)
    assert chunks == _expected(flt.path_include, flt.path_exclude)
    assert chunks == {"src/app.py", "src/apple.py", "copy_0/b.py", "copy_0a/z/q.py", "docs/guide.md"}


def test_a_glob_with_a_literal_start_becomes_an_index_range() -> None:
    assert glob_prefix("src/**") == ("src/", "**")
    assert glob_prefix("/src/app/") == ("src/app", "")
    assert glob_prefix("copy_0*/**") == ("copy_0", "*/**")
    assert glob_prefix("*.py") == ("", "*.py")  # a name in any folder: no literal start
    assert _glob_clause("src/**") == "file_path >= 'src/' AND file_path < 'src0'"  # no regexp
    assert "regexp_like" not in _glob_clause("src/app")
    clause = _glob_clause("copy_0*/**")
    assert clause.startswith("file_path >= 'copy_0' AND file_path < 'copy_1' AND regexp_like(")
    assert _glob_clause("**/*.py").startswith("regexp_like(")
    assert starts_with("p", "it's") == "p >= 'it''s' AND p < 'it''t'"  # quoted like any value
    assert starts_with("p", "a\ud7ff"[:1] + "\ud7ff") == "p >= 'a\ud7ff' AND p < 'a\ue000'"
    assert starts_with("p", "a\U0010ffff") == "p >= 'a\U0010ffff' AND p < 'b'"
    assert starts_with("p", "\U0010ffff\U0010ffff") == "p >= '\U0010ffff\U0010ffff'"
    assert _glob_clause("a\x00/**").startswith("regexp_like(")


def test_the_fixture_paths_are_all_indexed(indexed: Lode) -> None:
    chunks, documents = _admitted(indexed, ChunkFilter())
    assert chunks == documents == set(PATHS)
