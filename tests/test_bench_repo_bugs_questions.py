"""The whole-repository benchmark's bug-report and plain-English question sets (issue 45).

Fast: tiny fixtures (a toy pair set, a throwaway git repository, a toy tree indexed with the
fake embedder); the committed bug files are checked for form, not downloaded against.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

from benchmarks.quality.bugs import (
    BUGS_DIR,
    BugReport,
    issue_number,
    load_bug_reports,
    present_share,
    report_text,
    trim_body,
)
from benchmarks.quality.corpora import CorpusSpec
from benchmarks.quality.mine_bugs import find_fix, mine
from benchmarks.quality.pairs import Pair, PairSet
from benchmarks.quality.repo_corpora import REPO_CORPORA, RepoCorpus
from benchmarks.quality.repo_evaluate import BASELINE, ask_tree
from benchmarks.quality.repo_sets import (
    SETS,
    SOURCE_ONLY,
    bug_queries,
    question_queries,
    to_question,
)
from benchmarks.quality.roles import IMPLEMENTATION, file_role
from indexer.embed import FakeEmbedder

# ---- plain-English questions -----------------------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "name", "question"),
    [
        (
            "Returns the `IOLoop` for the current thread.",
            "",
            "how do I get the IOLoop for the current thread?",
        ),
        (
            "NewRegistry creates a new vanilla Registry without any Collectors.",
            "NewRegistry",
            "how do I create a new vanilla Registry without any Collectors?",
        ),
        (
            "Checks whether the given path is a directory.",
            "",
            "how do I check whether the given path is a directory?",
        ),
        ("Whether a key is valid for a cookie.", "", "how do I tell whether a key is valid for a cookie?"),
        (
            "The default HTTP client used by fetch.",
            "",
            "where is the code for the default HTTP client used by fetch?",
        ),
        ("Parses the command line into options.", "", "how do I parse the command line into options?"),
        ("Matches a path against the glob.", "", "how do I match a path against the glob?"),
        ("Copies bytes from the stream.", "", "how do I copy bytes from the stream?"),
        (
            "Invoked when a ping frame is received.",
            "",
            "which function is invoked when a ping frame is received?",
        ),
        (
            "Is a version of NewConstMetric that panics.",
            "",
            "which function is a version of NewConstMetric that panics?",
        ),
        ("Sets the `foo_bar` value.", "", "how do I set the foo_bar value?"),
        ("Close it.", "", None),  # five words: too short
        ("`x = 1` is set here.", "", None),  # not a word first
    ],
)
def test_to_question_follows_the_fixed_rule(sentence: str, name: str, question: str | None) -> None:
    """Each rule of ``to_question``, and the ones that give no question."""
    assert to_question(sentence, name) == question


def _pair(path: str, line: int, kind: str, query: str, name: str = "f") -> Pair:
    return Pair("toy", query, path, name, kind, line, line + 5)


def test_question_queries_keep_every_function_of_implementation_files() -> None:
    """Functions and methods of implementation files, every one the rule turns into a
    question (no pick); classes, test files and too-short sentences are left out."""
    pairs = [
        _pair("pkg/a.py", 1, "function_definition", "Returns the parsed header of a line."),
        _pair("pkg/a.py", 20, "class_definition", "Returns the parsed header of a line too."),
        _pair("pkg/b.go", 3, "method_declaration", "Flush writes every buffered metric out.", "Flush"),
        _pair("tests/test_a.py", 5, "function_definition", "Returns the header of a test line."),
        _pair("pkg/a.py", 40, "function_definition", "Close it."),
    ]
    roles = {"pkg/a.py": IMPLEMENTATION, "pkg/b.go": IMPLEMENTATION, "tests/test_a.py": "test"}
    queries = question_queries("toy", PairSet(pairs=pairs), roles)
    assert [(q.text, q.key) for q in queries] == [
        ("how do I get the parsed header of a line?", "pkg/a.py:1"),
        ("how do I write every buffered metric out?", "pkg/b.go:3"),
    ]
    assert all(q.set == "question" and q.targets[0].line is not None for q in queries)
    assert question_queries("toy", PairSet(pairs=pairs), roles) == queries


# ---- bug reports -----------------------------------------------------------------------


def test_bug_queries_ask_title_and_body_for_the_changed_files() -> None:
    """A report is asked as its title and body; its targets are the files, its key the issue."""
    report = BugReport(
        "toy", "https://github.com/o/r/issues/42", "Crash on x", "Traceback …", "abc", ("a.py", "b.py")
    )
    (bug,) = bug_queries([report])
    (src,) = bug_queries([report], "bug_src")
    assert bug.text == "Crash on x\n\nTraceback …" == report.query == report_text("Crash on x", "Traceback …")
    assert bug.paths == {"a.py", "b.py"}
    assert all(t.line is None for t in bug.targets)
    assert (bug.id, src.id) == ("toy:bug:#42", "toy:bug_src:#42")
    assert SETS.index("bug") < SETS.index("bug_src")
    assert {"bug_src"} == SOURCE_ONLY


def test_issue_number_and_trim_body() -> None:
    """Issue URLs give their number; long bodies are cut at a line end and marked."""
    assert issue_number("https://github.com/o/r/issues/123") == 123
    with pytest.raises(ValueError, match="not a GitHub issue URL"):
        issue_number("https://github.com/o/r/pull/5")
    body = "\n".join(f"line {i} " + "x" * 40 for i in range(200))
    cut = trim_body(body, 500)
    assert len(cut) <= 502
    assert cut.endswith("\n…")
    assert cut.startswith("line 0 ")
    assert trim_body("short\n") == "short"


def test_present_share_reads_removed_lines_else_context() -> None:
    """The share of the fix's removed lines found in the pinned file; context lines when
    the fix only added; punctuation-only and very short lines do not count."""
    pinned = "def f(x):\n    return x + 1\n}\n"
    assert present_share(["    return x + 1", "}", ""], [], pinned) == 1.0
    assert present_share(["    return y * 2"], ["def f(x):"], pinned) == 0.0
    assert present_share([], ["def f(x):", "    return x + 1", "}"], pinned) == 1.0
    assert present_share(["}", "  "], [")"], pinned) == 0.0


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def _commit(repo: Path, files: dict[str, str], message: str) -> str:
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text, encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD").strip()


def test_mine_keeps_fixes_of_code_the_pinned_tree_has(tmp_path: Path) -> None:
    """A throwaway repository: a fix after the tag of code the pinned tree has is kept
    (its implementation files only); a fix of code written after the tag, a fix before
    the tag and a second report of the same fix are dropped, each with its reason."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    old = "def parse(line):\n    name, value = line.split(':')\n    return name, value\n"
    before = _commit(
        repo,
        {"pkg/core.py": old, "pkg/new.py": "", "tests/test_core.py": "def test_x():\n    pass\n"},
        "init",
    )
    _git(repo, "tag", "v1")
    pinned = {
        "pkg/core.py": old.encode(),
        "pkg/new.py": b"",
        "tests/test_core.py": b"def test_x():\n    pass\n",
    }
    _commit(repo, {"pkg/new.py": "def later():\n    return compute_something_new()\n"}, "add later")
    fix = _commit(
        repo,
        {
            "pkg/core.py": "def parse(line):\n    name, _, value = line.partition(':')\n    return name, value\n",
            "tests/test_core.py": "def test_x():\n    assert parse('a:b')\n",
        },
        "core: parse lines without a colon (#7)",
    )
    _commit(repo, {"pkg/new.py": "def later():\n    return compute_something_else()\n"}, "fix later (#8)")
    corpus = RepoCorpus(
        spec=CorpusSpec(
            "toy",
            "python",
            "debian",
            "toy",
            "1",
            "https://example.invalid/toy.tgz",
            "0" * 64,
            "toy/",
            ("**/*",),
        ),
        repository="https://github.com/o/toy",
        tag="v1",
        why="a test fixture",
    )
    candidates = [
        {"url": "https://github.com/o/toy/issues/1", "title": "ValueError", "body": "Traceback", "pr": 7},
        {
            "url": "https://github.com/o/toy/issues/2",
            "title": "Same bug",
            "body": "again",
            "commit": fix[:10],
        },
        {"url": "https://github.com/o/toy/issues/3", "title": "later broke", "body": "x", "pr": 8},
        {"url": "https://github.com/o/toy/issues/4", "title": "old", "body": "x", "commit": before[:10]},
    ]
    kept, dropped = mine(corpus, repo / ".git", candidates, pinned)
    assert [(k["number"], k["commit"], k["files"], k["pr"]) for k in kept] == [
        (1, fix[:12], ["pkg/core.py"], 7)
    ]
    reasons = {d["url"].rsplit("/", 1)[1]: d["reason"] for d in dropped}
    assert reasons == {
        "2": "fixing commit seen before",
        "3": "no target (no changed implementation file of the pinned tree with the touched code)",
        "4": "no fixing commit after the pinned tag",
    }


def test_find_fix_by_commit_squash_or_merge() -> None:
    """A commit prefix, a squash subject ``… (#PR)`` or a merge subject finds the fix."""
    commits = [
        ("aaaa1111", "2025-01-01", "fix: thing (#12)"),
        ("bbbb2222", "2025-01-02", "Merge pull request #34 from x/y"),
        ("cccc3333", "2025-01-03", "Merge #56"),
    ]
    assert find_fix({"commit": "bbbb"}, commits) == ("bbbb2222", "2025-01-02")
    assert find_fix({"pr": 12}, commits) == ("aaaa1111", "2025-01-01")
    assert find_fix({"pr": 34}, commits) == ("bbbb2222", "2025-01-02")
    assert find_fix({"pr": 56}, commits) == ("cccc3333", "2025-01-03")
    assert find_fix({"pr": 1}, commits) is None
    assert find_fix({"commit": "dddd"}, commits) is None


def test_committed_bug_files_are_well_formed() -> None:
    """Every bug file names its repository and rules; reports are issues of that repository
    with text, a fixing commit and implementation targets; no fix twice."""
    by_name = {c.name: c for c in REPO_CORPORA}
    files = sorted(BUGS_DIR.glob("*.json"))
    assert len(files) >= 4
    total = 0
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        corpus = by_name[data["corpus"]]
        assert data["repository"] == corpus.repository
        assert data["pinned_tag"] == corpus.tag
        assert len(data["snapshot_commit"]) == 40
        assert len(data["pinned_commit"]) == 40
        assert data["rules"]
        assert "benchmarks.quality.mine_bugs" in data["produced_by"]
        reports = load_bug_reports(corpus.name)
        assert reports
        assert len({r.commit for r in reports}) == len(reports)
        for report in reports:
            assert report.url.startswith(corpus.repository + "/issues/")
            assert report.title
            assert report.body
            assert report.files
            assert all(file_role(f, b"", corpus.roles) == IMPLEMENTATION for f in report.files)
        total += len(reports)
    assert total >= 25
    assert load_bug_reports("no-such-corpus") == []


# ---- asked end to end ------------------------------------------------------------------

_CORE = textwrap.dedent("""
    def parse_header(line):
        name, sep, value = line.partition(":")
        if not sep:
            raise ValueError("header line without a colon")
        return name.strip(), value.strip()
""").encode()
_TEST = textwrap.dedent("""
    from pkg.core import parse_header

    def test_parse_header_without_colon():
        try:
            parse_header("no colon here")
        except ValueError as exc:
            assert "header line without a colon" in str(exc)
""").encode()


def test_bug_src_is_asked_restricted_to_implementation_files(tmp_path: Path) -> None:
    """The same report asked as ``bug`` may rank the test; as ``bug_src`` no mode and not
    BM25 returns anything but implementation files."""
    files = {"pkg/core.py": _CORE, "tests/test_core.py": _TEST}
    roles = {"pkg/core.py": IMPLEMENTATION, "tests/test_core.py": "test"}
    for path, data in files.items():
        (tmp_path / "toy" / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "toy" / path).write_bytes(data)
    report = BugReport(
        "toy",
        "https://github.com/o/toy/issues/9",
        "ValueError: header line without a colon",
        'test_parse_header_without_colon fails:\n    parse_header("no colon here")\nValueError',
        "abc",
        ("pkg/core.py",),
    )
    queries = [*bug_queries([report]), *bug_queries([report], "bug_src")]
    _, values, top = ask_tree(
        "toy", tmp_path / "toy", files, queries, FakeEmbedder(), lambda p: roles[p], ("lexical", "hybrid")
    )
    bug, src = values
    assert set(bug) == set(src) == {"lexical", "hybrid", BASELINE}
    for mode in ("lexical", "hybrid", BASELINE):
        assert src[mode]["nonimpl@5"] == 0.0
        assert src[mode]["file_mrr"] == 1.0
        assert set(top[1][mode]) == {IMPLEMENTATION}
    assert "test" in top[0]["lexical"]  # unrestricted, the test is among the files
