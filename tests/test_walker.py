"""The walker: ignore rules, skips with reasons, symlinks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from indexer.config import WalkerConfig
from indexer.walker import IgnoreRules, walk_project


def _paths(root: Path, **kwargs: object) -> list[str]:
    return [e.rel_path for e in walk_project(root, **kwargs).files]  # type: ignore[arg-type]


def test_fixture_repo_honours_all_ignore_rules(repo: Path) -> None:
    result = walk_project(repo)
    paths = [e.rel_path for e in result.files]
    assert "src/shop/cart.py" in paths
    assert "docs/guide.md" in paths
    assert "README.md" in paths
    # .gitignore: folder, glob, file; .lodeignore: folder; built-in: build/
    for ignored in (
        "vendor_ignored/lib.py",
        "server.log",
        "secret.txt",
        "docs/drafts/wip.md",
        "build/out.py",
    ):
        assert ignored not in paths
    assert "logo.dat" in paths  # no known binary suffix: the chunker refuses it by content
    assert paths == sorted(paths)


def test_nested_gitignore_and_negation(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / ".gitignore").write_text("*.gen.py\n")
    (tmp_path / "a" / ".gitignore").write_text("!keep.gen.py\nlocal.py\n")
    for name in ("x.gen.py", "a/keep.gen.py", "a/drop.gen.py", "a/local.py", "a/b/local.py", "a/b/ok.py"):
        (tmp_path / name).write_text("x = 1\n")
    assert _paths(tmp_path) == [".gitignore", "a/.gitignore", "a/b/ok.py", "a/keep.gen.py"]


def test_ignore_files_themselves_are_indexed_as_text(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.tmp\n")
    (tmp_path / "x.tmp").write_text("x")
    assert _paths(tmp_path) == [".gitignore"]


def test_size_limit_and_binary_suffix_are_skipped_with_reasons(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_text("x = 1\n" * 1000)
    (tmp_path / "small.py").write_text("x = 1\n")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    result = walk_project(tmp_path, WalkerConfig(max_file_bytes=100))
    assert [e.rel_path for e in result.files] == ["small.py"]
    reasons = {s.path: s.reason for s in result.skipped}
    assert reasons["big.py"].startswith("too large")
    assert reasons["image.png"] == "binary file type"


def test_symlink_leaving_root_and_loops_are_skipped(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("x = 1\n")
    root = tmp_path / "root"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("y = 2\n")
    (root / "escape").symlink_to(outside)
    (root / "pkg" / "loop").symlink_to(root / "pkg")
    (root / "alias.py").symlink_to(root / "pkg" / "mod.py")
    (root / "dangling.py").symlink_to(root / "nope.py")
    result = walk_project(root)
    paths = [e.rel_path for e in result.files]
    assert paths == ["alias.py", "pkg/mod.py"]
    reasons = {s.path: s.reason for s in result.skipped}
    assert reasons["escape"] == "symlink leaves the project root"
    assert reasons["dangling.py"] == "broken or looping symlink"
    assert reasons["pkg/loop"] == "symlink loop"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_is_skipped(tmp_path: Path) -> None:
    target = tmp_path / "locked.py"
    target.write_text("x = 1\n")
    target.chmod(0)
    result = walk_project(tmp_path)
    assert result.skipped[0].reason.startswith("unreadable")


def test_ignore_rules_answer_for_single_paths(repo: Path) -> None:
    rules = IgnoreRules(repo)
    assert rules.ignored("vendor_ignored/lib.py")
    assert rules.ignored("node_modules/x/index.js")
    assert rules.ignored("docs/drafts/wip.md")
    assert rules.ignored("a/b/c.log")
    assert not rules.ignored("src/shop/cart.py")
    (repo / ".gitignore").write_text("src/shop/\n")
    assert not rules.ignored("src/shop/cart.py")  # cached until invalidated
    rules.invalidate()
    assert rules.ignored("src/shop/cart.py")


def test_project_include_and_exclude_globs(repo: Path) -> None:
    rules = IgnoreRules(repo, include=["*.py"], exclude=["src/web/"])
    paths = [e.rel_path for e in walk_project(repo, rules=rules).files]
    assert paths == ["src/shop/__init__.py", "src/shop/cart.py", "src/shop/pricing.py"]


def test_walk_under_subpaths_only(repo: Path) -> None:
    assert _paths(repo, under=["src/web"]) == [
        "src/web/request.py",
        "src/web/router.go",
        "src/web/session.rs",
        "src/web/widget.js",
    ]
    assert _paths(repo, under=["src/shop/cart.py"]) == ["src/shop/cart.py"]
    assert _paths(repo, under=["vendor_ignored"]) == []
