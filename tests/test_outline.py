"""The outline: trees of a Python package and a Markdown/reST doc tree against hand-written
expectations, the operations (ls, cat, find, grep, locate, plan), stable ids, caps, errors."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA

import indexer.outline
from indexer.api import Lode
from indexer.chunker import chunk_file
from indexer.config import load_config
from indexer.embed import FakeEmbedder
from indexer.errors import NotFoundError, ValidationError
from indexer.outline import Outline, OutlineNode, classify_intent
from indexer.outline._members import find_members
from indexer.outline._summary import code_summary, prose_summary
from indexer.outline._units import build_file

OUTLINE = DATA / "outline"


def _index(tmp: Path, source: Path, name: str, **overrides: Any) -> Lode:
    root = tmp / name
    shutil.copytree(source, root)
    lode = Lode(
        load_config(env={}, overrides={"db": tmp / f"db-{name}", **overrides}), embedder=FakeEmbedder()
    )
    lode.index(root, name=name)
    return lode


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outline]:
    """The outline of the Markdown/reST doc tree (indexed once for the module)."""
    lode = _index(tmp_path_factory.mktemp("book"), OUTLINE / "book", "book")
    yield lode.outline("book")
    lode.close()


@pytest.fixture(scope="module")
def pkg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outline]:
    """The outline of the Python package (indexed once for the module)."""
    lode = _index(tmp_path_factory.mktemp("pkg"), OUTLINE / "pkg", "pkg")
    yield lode.outline("pkg")
    lode.close()


def _shape(node: OutlineNode) -> Any:
    """(id, kind, title, start, end, children…) of a subtree, for comparison."""
    here = (node.id, node.kind, node.title, node.start_line, node.end_line)
    return (*here, [_shape(c) for c in node.children]) if node.children else here


# ---- the trees --------------------------------------------------------------------------
def test_python_package_outline(pkg: Outline) -> None:
    assert _shape(pkg.node("kite")) == ("kite", "directory", "kite", 0, 0, [
        ("kite/__init__.py", "file", "__init__.py", 1, 6),
        ("kite/retry.py", "file", "retry.py", 1, 19, [
            ("kite/retry.py#backoff_delay", "function", "backoff_delay", 6, 8),
            ("kite/retry.py#RetryPolicy", "class", "RetryPolicy", 11, 19, [
                ("kite/retry.py#RetryPolicy.__init__", "constructor", "__init__", 14, 15),
                ("kite/retry.py#RetryPolicy.delays", "method", "delays", 17, 19),
            ]),
        ]),
        ("kite/scheduler.py", "file", "scheduler.py", 1, 49, [
            ("kite/scheduler.py#Job", "class", "Job", 11, 18),
            ("kite/scheduler.py#Scheduler", "class", "Scheduler", 21, 43, [
                ("kite/scheduler.py#Scheduler.__init__", "constructor", "__init__", 24, 26),
                ("kite/scheduler.py#Scheduler.add_job", "method", "add_job", 28, 32),
                ("kite/scheduler.py#Scheduler.run_pending", "method", "run_pending", 34, 43),
            ]),
            ("kite/scheduler.py#parse_interval", "function", "parse_interval", 46, 49),
        ]),
    ])  # fmt: skip


def test_python_summaries_and_counts(pkg: Outline) -> None:
    assert pkg.root.title == "pkg"
    assert pkg.node("kite").summary == "Kite: run functions on fixed intervals, retrying the ones that fail."
    assert pkg.node("kite/retry.py").summary == "Retry policy: exponential backoff between attempts."
    assert pkg.node("kite/retry.py#RetryPolicy.delays").summary == "Every delay of the policy, in order."
    assert pkg.node("kite/scheduler.py#Scheduler.add_job").summary == (
        "Register a function to run every interval seconds."
    )
    assert pkg.node("kite").leaf_count == 1 + 3 + 5
    assert pkg.node("kite/scheduler.py#Scheduler").depth == 3


def test_markdown_tree_outline(book: Outline) -> None:
    config = "docs/guide/config.md#Configuration"
    assert _shape(book.node("docs/guide/config.md")) == ("docs/guide/config.md", "file", "config.md", 1, 26, [
        (config, "section", "Configuration", 1, 26, [
            (f"{config}/Retries", "section", "Retries", 5, 15, [
                (f"{config}/Retries/Example", "section", "Example", 10, 15),
            ]),
            (f"{config}/Dashboard", "section", "Dashboard", 17, 26, [
                (f"{config}/Dashboard/Example", "section", "Example", 21, 26),
            ]),
        ]),
    ])  # fmt: skip
    assert [c.id for c in book.root.children] == ["docs", "README.md"]
    assert [c.id for c in book.node("docs").children] == [
        "docs/guide", "docs/intro.md", "docs/reference.rst",
    ]  # fmt: skip
    intro = book.node("docs/intro.md#Introduction/Concepts")
    assert [c.title for c in intro.children] == ["Jobs", "Ticks"]


def test_markdown_summaries(book: Outline) -> None:
    first = "Kite is a tiny job scheduler for Python: it runs functions on fixed intervals and retries"
    assert book.root.summary.startswith(first)
    assert book.node("README.md").summary.startswith(first)
    assert book.node("docs/guide/config.md#Configuration/Dashboard").summary == (
        "The dashboard listens on port 8642 and shows every job with its next run."
    )
    assert book.node("docs/guide/install.md#Installation").summary == "Install Kite with pip."


def test_duplicate_headings_get_a_suffix(book: Outline) -> None:
    install = book.node("docs/guide/install.md#Installation")
    assert [c.id for c in install.children][-2:] == [
        "docs/guide/install.md#Installation/Troubleshooting",
        "docs/guide/install.md#Installation/Troubleshooting~2",
    ]


def test_restructured_text_sections(book: Outline) -> None:
    assert _shape(book.node("docs/reference.rst#Reference")) == ("docs/reference.rst#Reference", "section", "Reference", 1, 14, [
        ("docs/reference.rst#Reference/Scheduler", "section", "Scheduler", 6, 9),
        ("docs/reference.rst#Reference/Retry policy", "section", "Retry policy", 11, 14),
    ])  # fmt: skip
    first = "The public API of Kite, one section per object."
    assert book.node("docs/reference.rst#Reference").summary == first
    assert book.node("docs/reference.rst").summary == first


def test_split_and_whole_classes_give_the_same_tree(tmp_path: Path) -> None:
    """A class cut into a skeleton and member chunks, or kept in one chunk, has the same outline."""
    source = (OUTLINE / "pkg" / "kite" / "scheduler.py").read_bytes()
    small = load_config(env={}, overrides={"max_chunk_tokens": 80}).chunker
    large = load_config(env={}, overrides={"max_chunk_tokens": 2000}).chunker
    split = build_file("s.py", chunk_file("s.py", source, small).chunks)
    whole = build_file("s.py", chunk_file("s.py", source, large).chunks)
    assert len(chunk_file("s.py", source, large).chunks) < len(chunk_file("s.py", source, small).chunks)
    names = [[c.id for c in n.children] for n in (split.children[1], whole.children[1])]
    assert (
        names[0]
        == names[1]
        == ["s.py#Scheduler.__init__", "s.py#Scheduler.add_job", "s.py#Scheduler.run_pending"]
    )


def test_members_of_small_classes_in_other_languages() -> None:
    java = (DATA / "chunker" / "sample.java").read_bytes()
    config = load_config(env={}).chunker
    tree = build_file("Repo.java", chunk_file("Repo.java", java, config).chunks)
    repository = tree.children[0]
    assert [(c.title, c.kind) for c in repository.children] == [
        ("Repository", "constructor"), ("find", "method"), ("Builder", "class"), ("Mode", "enum"),
    ]  # fmt: skip
    assert repository.children[1].start_line == 20  # the @Override line
    text = "class A {\n  int x = compute(1);\n  run() {\n    compute(2);\n  }\n}"
    assert [m.name for m in find_members(text, ("A", "x", "run", "compute"), "A")] == ["run"]


@pytest.mark.parametrize(
    ("text", "module", "expected"),
    [
        ('"""Module doc.\n\nMore."""\nimport os\n', True, "Module doc."),
        ("#!/usr/bin/env python\n# Copyright 2024 Me\n\n# Does things.\nx = 1\n", True, "Does things."),
        ("def f():\n    '''One line.'''\n", False, "One line."),
        ("/**\n * Adds numbers.\n * @param a first\n */\nint add(int a) {", False, "Adds numbers."),
        ("/// Route requests.\n/// Fast.\nfn route() {}", False, "Route requests. Fast."),
        ("def f():\n    return 1\n", False, ""),
    ],
)
def test_code_summaries(text: str, module: bool, expected: str) -> None:
    assert code_summary(text, module=module) == expected


def test_prose_summary_skips_markup() -> None:
    lines = ["# Title", "[![ci](badge.svg)](x)", "", "Read the [guide](g.md) and `run` it.", "Next line.", ""]
    assert prose_summary(lines) == "Read the guide and run it. Next line."
    assert prose_summary(["---", "title: x", "---", "", "Body."]) == "Body."


# ---- ls, cat, find, grep ------------------------------------------------------------------
def test_ls_root_and_depth(book: Outline) -> None:
    listing = book.ls()
    assert listing.node.id == "."
    assert listing.node.parent is None
    assert [(c.id, c.kind, c.has_children) for c in listing.children] == [
        ("docs", "directory", True), ("README.md", "file", True),
    ]  # fmt: skip
    assert listing.children[0].leaf_count == book.node("docs").leaf_count
    assert listing.children[0].children == ()
    deeper = book.ls("docs", depth=2)
    guide = deeper.children[0]
    assert [c.id for c in guide.children] == ["docs/guide/config.md", "docs/guide/install.md"]
    assert deeper.node.breadcrumb == "book/docs"
    assert deeper.node.topic_tags


def test_ls_limit_truncates(book: Outline) -> None:
    listing = book.ls("docs", limit=1)
    assert len(listing.children) == 1
    assert listing.total_children == 3
    assert listing.truncated


def test_cat_section_function_and_folder(book: Outline, pkg: Outline) -> None:
    text = book.cat("docs/guide/config.md#Configuration/Dashboard")
    assert text.text.splitlines()[0] == "   17  ## Dashboard"
    assert (text.start_line, text.end_line, text.truncated) == (17, 26, False)
    method = pkg.cat("kite/scheduler.py#Scheduler.add_job").text
    assert method.splitlines()[0].endswith(
        "def add_job(self, name: str, interval: float, run: Callable[[], None]) -> Job:"
    )
    folder = book.cat("docs/guide")
    assert "Troubleshooting [section] docs/guide/install.md#Installation/Troubleshooting~2" in folder.text
    cut = pkg.cat("kite/scheduler.py", max_chars=300)
    assert cut.truncated
    assert "cut at line" in cut.text.splitlines()[-1]
    assert len(cut.text) < 400


def test_find_by_glob_and_kind(book: Outline, pkg: Outline) -> None:
    found = book.find("example")
    assert [n.id for n in found.nodes] == [
        "docs/guide/config.md#Configuration/Retries/Example",
        "docs/guide/config.md#Configuration/Dashboard/Example",
    ]
    assert [n.id for n in pkg.find("*job*", kind="method").nodes] == ["kite/scheduler.py#Scheduler.add_job"]
    assert pkg.find("__init__*", node="kite/retry.py").total == 1
    capped = book.find("*", limit=2)
    assert capped.truncated
    assert capped.total > 2


def test_grep_runs_in_linear_time_on_a_backtracking_pattern(tmp_path: Path) -> None:
    """``(a+)+$`` over 34 ``a``s and a ``!``: Python's re needs ~15 minutes (×4 per two more
    characters); RE2 answers at once, so this test would time out if grep backtracked."""
    root = tmp_path / "src"
    root.mkdir()
    (root / "victim.txt").write_text("a" * 34 + "!\n" + "a" * 30 + "\n")
    lode = _index(tmp_path, root, "victim")
    try:
        result = lode.outline("victim").grep("(a+)+$")
        assert [m.line for m in result.matches] == [2]
        with pytest.raises(ValidationError, match="backreferences") as err:
            lode.outline("victim").grep(r"(a)\1")
        assert err.value.field == "pattern"
    finally:
        lode.close()


def test_grep_names_the_innermost_node(pkg: Outline) -> None:
    result = pkg.grep(r"heapq\.heap(push|pop)")
    assert [(m.node, m.line) for m in result.matches] == [
        ("kite/scheduler.py#Scheduler.add_job", 31),
        ("kite/scheduler.py#Scheduler.run_pending", 38),
        ("kite/scheduler.py#Scheduler.run_pending", 41),
    ]
    assert result.matches[0].preview == "heapq.heappush(self.jobs, job)"
    assert not result.truncated
    inside = pkg.grep("job", node="kite/scheduler.py#Scheduler.add_job", ignore_case=True)
    assert {m.node for m in inside.matches} == {"kite/scheduler.py#Scheduler.add_job"}
    capped = pkg.grep("self", limit=2)
    assert len(capped.matches) == 2
    assert capped.truncated


# ---- locate -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("question", "node"),
    [
        ("How many times is a failed job retried?", "docs/guide/config.md#Configuration/Retries"),
        ("Which port does the dashboard listen on?", "docs/guide/config.md#Configuration/Dashboard"),
        ("What Python version does Kite need?", "docs/guide/install.md#Installation/Requirements"),
        ("How often does the scheduler wake up?", "docs/intro.md#Introduction/Concepts/Ticks"),
    ],
)
def test_locate_picks_the_section_for_fact_questions(book: Outline, question: str, node: str) -> None:
    result = book.locate(question)
    assert result.cues[0].node == node
    assert result.fallback is None
    assert 0 < result.cues[0].confidence <= 1


@pytest.mark.parametrize(
    "question", ["What is this project about?", "overview", "Introduction", "give me a summary"]
)
def test_locate_overview_questions_start_at_the_readme(book: Outline, question: str) -> None:
    result = book.locate(question)
    assert result.cues[0].node == "README.md"
    assert result.fallback == "overview"


def test_locate_fallbacks(book: Outline, pkg: Outline) -> None:
    nothing = book.locate("zebra quantum xylophone")
    assert [c.node for c in nothing.cues] == ["README.md"]
    assert nothing.fallback == "overview"
    assert nothing.cues[0].confidence < 0.5
    rootless = pkg.locate("what is this project about")
    assert [c.node for c in rootless.cues] == ["."]
    assert rootless.fallback == "root"


def test_locate_cues_are_distinct_branches(book: Outline) -> None:
    cues = book.locate("job retry delay example", max_branches=5).cues
    ids = [c.node for c in cues]
    assert 1 < len(ids) <= 5
    for a in ids:
        for b in ids:
            assert a == b or not b.startswith(a + "/"), (a, b)


def test_locate_uses_code_too(pkg: Outline) -> None:
    assert pkg.locate("parse an interval like 5m").cues[0].node == "kite/scheduler.py#parse_interval"
    assert pkg.locate("backoff delay doubles").cues[0].node == "kite/retry.py#backoff_delay"


# ---- plan ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("question", "intent"),
    [
        ("What port does the dashboard use?", "factual"),
        ("Give me an overview of this project", "summary"),
        ("Where is the retry delay computed?", "navigational"),
        ("Why does the scheduler use a heap instead of a list?", "analytical"),
    ],
)
def test_plan_intent(question: str, intent: str) -> None:
    assert classify_intent(question) == intent


def test_plan_prompt(book: Outline) -> None:
    prompt = book.plan("Which port does the dashboard listen on?")
    assert prompt.intent == "factual"
    assert "book" in prompt.system
    assert '"action"' in prompt.system
    for section in (
        "## Question",
        "## Intent",
        "## Current node",
        "## Structure",
        "## Keyword matches",
        "## Hints",
    ):
        assert section in prompt.user
    assert (
        "book/docs/guide/config.md/Configuration/Dashboard (id=docs/guide/config.md#Configuration/Dashboard)"
        in prompt.user
    )
    assert "## Unvisited branches" not in prompt.user


def test_replan_lists_evidence_and_unvisited_branches(book: Outline) -> None:
    prompt = book.plan(
        "How do I install Kite and configure retries?",
        node="docs/guide",
        visited=["docs/guide/install.md#Installation/Requirements"],
        evidence=["Python 3.11 or newer"],
        missing="the retry settings",
    )
    user = prompt.user
    assert "## Found so far\n- Python 3.11 or newer" in user
    assert "## Still missing\nthe retry settings" in user
    unvisited = user.split("## Unvisited branches")[1]
    assert "id=docs/guide/install.md#Installation/From source" in unvisited
    assert "id=docs/guide/config.md" in unvisited


def test_plan_sections_are_budgeted(tmp_path: Path) -> None:
    many = tmp_path / "source"
    many.mkdir()
    for i in range(120):
        (many / f"chapter_{i:03d}.md").write_text(f"# Chapter {i}\n\nAbout topic number {i} of the book.\n")
    lode = _index(tmp_path, many, "many")
    try:
        outline = lode.outline("many")
        prompt = outline.plan("what is in chapter 7")
        structure = prompt.user.split("## Structure\n")[1].split("\n\n")[0]
        assert "[truncated:" in structure
        assert len(structure) < 1_700
        assert outline.ls(limit=1000).total_children == 120
        assert len(outline.ls(limit=10).children) == 10
        assert outline.cat(max_chars=500).truncated
    finally:
        lode.close()


# ---- errors -------------------------------------------------------------------------------
def test_errors_name_the_field(book: Outline) -> None:
    with pytest.raises(NotFoundError, match="no outline node 'nope'"):
        book.ls("nope")
    with pytest.raises(NotFoundError):
        book.plan("anything", visited=["missing#node"])
    with pytest.raises(ValidationError) as bad_regex:
        book.grep("(unclosed")
    assert bad_regex.value.field == "pattern"
    assert "(unclosed" in str(bad_regex.value)
    cases: list[tuple[Any, str]] = [
        (lambda: book.ls(depth=0), "depth"),
        (lambda: book.ls(limit=5000), "limit"),
        (lambda: book.cat(max_chars=1), "max_chars"),
        (lambda: book.find(" "), "title"),
        (lambda: book.grep("x", limit=0), "limit"),
        (lambda: book.locate("  "), "question"),
        (lambda: book.locate("x", max_branches=11), "max_branches"),
        (lambda: book.plan("x" * 3000), "question"),
    ]
    for call, field in cases:
        with pytest.raises(ValidationError) as caught:
            call()
        assert caught.value.field == field


def test_unknown_project_is_not_found(lode: Lode) -> None:
    with pytest.raises(NotFoundError):
        lode.outline("nope")


# ---- kept current -------------------------------------------------------------------------
def test_ids_are_stable_and_the_outline_follows_the_index(tmp_path: Path) -> None:
    lode = _index(tmp_path, OUTLINE / "pkg", "pkg")
    try:
        before = lode.outline("pkg")
        assert lode.outline("pkg") is before
        lode.index(tmp_path / "pkg", full=True)
        again = lode.outline("pkg")
        assert again is not before
        assert sorted(again.nodes) == sorted(before.nodes)
        retry = tmp_path / "pkg" / "kite" / "retry.py"
        retry.write_text(retry.read_text() + "\n\ndef jitter() -> float:\n    return 0.5\n")
        lode.index(tmp_path / "pkg")
        after = lode.outline("pkg")
        assert set(after.nodes) == set(before.nodes) | {"kite/retry.py#jitter"}
        assert after.node("kite/scheduler.py") is again.node("kite/scheduler.py")  # unchanged file reused
        assert after.node("kite/retry.py") is not again.node("kite/retry.py")
    finally:
        lode.close()


def test_chunks_by_file_matches_chunks_of_files(pkg: Outline, tmp_path: Path) -> None:
    lode = _index(tmp_path, OUTLINE / "pkg", "pkg")
    try:
        store = lode.store
        ids = [s.id for s in store.documents.states(store.projects.get("pkg").id).values()]
        by_file = store.chunks.by_file(ids)
        for stored in store.chunks.of_files(ids):
            assert stored.chunk in by_file[stored.file_id]
        assert sum(map(len, by_file.values())) == len(store.chunks.of_files(ids))
        assert set(store.documents.contents(ids)) == set(ids)
    finally:
        lode.close()


def test_public_api() -> None:
    assert indexer.outline.__all__ == sorted(indexer.outline.__all__, key=lambda n: (not n.isupper(), n))
    assert {"Outline", "OutlineCache", "Listing", "LocateResult", "PlanPrompt"} <= set(
        indexer.outline.__all__
    )


def test_empty_project_and_huge_lines(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    lode = _index(tmp_path, source, "empty")
    try:
        empty = lode.outline("empty")
        assert empty.ls().children == ()
        assert [c.node for c in empty.locate("anything at all").cues] == ["."]
        assert empty.grep("x").matches == ()
        assert "## Structure\n(none)" in empty.plan("what is here").user
    finally:
        lode.close()
    (source / "min.js").write_text("var a=1;" * 5000 + "\n")
    lode = _index(tmp_path, source, "minified")
    try:
        text = lode.outline("minified").cat("min.js", max_chars=1000)
        assert text.truncated
        assert len(text.text) < 1100
    finally:
        lode.close()
