"""Relevance on whole repositories (issue 26): implementation before its tests and docs
unless the query asks for them, a split unit shown once with its whole range, the best hit
first at chunk granularity, and role filters."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from live import serve_in_thread, wait_task

from indexer.api import Lode
from indexer.cli import cli
from indexer.config import load_config
from indexer.embed import FakeEmbedder
from indexer.search import SearchOptions
from indexer.search._pages import HEAD, group_hits
from indexer.search._priors import wanted_roles
from indexer.search._results import ChunkHit

_IMPLEMENTATION = '''"""The HTTP client."""


def follow_redirects(response, client, max_redirects=20):
    """Follow redirect responses until a final one, at most max_redirects times."""
    seen = 0
    while response.is_redirect and seen < max_redirects:
        location = response.headers["location"]
        response = client.get(location)
        seen += 1
    return response
'''
_TEST = '''from client import follow_redirects


def test_follow_redirects_until_final():
    """Redirects are followed: redirect, redirect, final response."""
    response = follow_redirects(FakeRedirect(), FakeClient())
    assert response.status == 200


def test_follow_redirects_stops_at_max_redirects():
    """Too many redirects are not followed."""
    assert follow_redirects(FakeRedirect(), FakeClient(), max_redirects=1).is_redirect
'''
_DOCS = """# Redirects

By default the client follows redirects: every redirect response is followed until a final
response, at most `max_redirects` redirects. Redirects are followed for GET requests.
"""
_CHANGELOG = """# Changelog

## 2.0
- Redirects are followed by default (follow_redirects), up to max_redirects.
"""


def _long_function() -> str:
    steps = "\n".join(
        f"    if stage == {i}:\n        total = merge_stage_{i}(total, ledger)\n        ledger.note('stage {i}')"
        for i in range(90)
    )
    return f'def reconcile_ledger(ledger, total, stage):\n    """Reconcile."""\n{steps}\n    return total\n'


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Lode, Path]]:
    """A small whole repository: code, its tests, docs, a changelog, a long function."""
    root = tmp_path_factory.mktemp("whole") / "client"
    (root / "src" / "client").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "docs").mkdir()
    (root / "src" / "client" / "redirects.py").write_text(_IMPLEMENTATION)
    (root / "src" / "client" / "ledger.py").write_text(_long_function())
    (root / "tests" / "test_redirects.py").write_text(_TEST)
    (root / "docs" / "redirects.md").write_text(_DOCS)
    (root / "CHANGELOG.md").write_text(_CHANGELOG)
    lode = Lode(load_config(env={}, overrides={"db": root.parent / "db"}), embedder=FakeEmbedder())
    lode.index(root, name="client")
    yield lode, root
    lode.close()


def _top(lode: Lode, query: str, **options: object) -> list[tuple[str, str]]:
    answer = lode.search(SearchOptions(query=query, granularity="chunk", limit=5, **options))  # type: ignore[arg-type]
    return [(h.file_path, h.role) for g in answer.groups for h in g.chunks]


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])  # (the fake model's vectors are word counts)
def test_the_implementation_comes_before_its_tests_docs_and_history(
    repo: tuple[Lode, Path], mode: str
) -> None:
    lode, _ = repo
    top = _top(lode, "where are redirects followed", mode=mode)
    assert top[0] == ("src/client/redirects.py", "implementation"), top


def test_a_query_that_asks_for_tests_gets_tests(repo: tuple[Lode, Path]) -> None:
    lode, _ = repo
    top = _top(lode, "tests for following redirects", mode="lexical")
    assert top[0] == ("tests/test_redirects.py", "test"), top
    assert _top(lode, "redirects", mode="lexical", path_include=("tests/**",))[0][1] == "test"


def test_docs_still_win_a_how_do_i_question_at_document_granularity(repo: tuple[Lode, Path]) -> None:
    lode, _ = repo
    answer = lode.search(
        SearchOptions(query="how do I use redirects", granularity="document", mode="lexical")
    )
    assert answer.documents[0].file_path == "docs/redirects.md", [d.file_path for d in answer.documents]
    assert answer.documents[0].role == "docs"


def test_a_query_for_history_gets_the_changelog(repo: tuple[Lode, Path]) -> None:
    lode, _ = repo
    top = _top(lode, "changelog: since when are redirects followed by default", mode="lexical")
    assert top[0] == ("CHANGELOG.md", "changelog"), top


def test_role_filters(repo: tuple[Lode, Path]) -> None:
    lode, _ = repo
    only_docs = _top(lode, "redirects followed", mode="lexical", roles=("docs",))
    assert only_docs
    assert {role for _, role in only_docs} == {"docs"}
    no_tests = _top(lode, "redirects followed", mode="lexical", exclude_roles=("test", "docs", "changelog"))
    assert {role for _, role in no_tests} == {"implementation"}


def test_a_split_unit_is_shown_once_with_its_whole_range(repo: tuple[Lode, Path]) -> None:
    lode, _ = repo
    answer = lode.search(
        SearchOptions(query="merge_stage ledger note stage", granularity="chunk", mode="lexical", limit=10)
    )
    hits = [h for g in answer.groups for h in g.chunks if h.file_path == "src/client/ledger.py"]
    assert len(hits) == 1, [(h.start_line, h.end_line) for h in hits]
    hit = hits[0]
    assert hit.folded_pieces >= 1
    assert hit.unit_start_line == 1
    assert hit.unit_end_line > hit.end_line or hit.unit_start_line < hit.start_line


def test_chunk_groups_follow_their_best_chunk(repo: tuple[Lode, Path]) -> None:
    lode, _ = repo
    answer = lode.search(
        SearchOptions(query="redirects followed max_redirects", granularity="chunk", limit=10)
    )
    best = [max(h.relevance_score for h in g.chunks) for g in answer.groups]
    assert best == sorted(best, reverse=True)
    assert [g.total_relevance for g in answer.groups] == best


@pytest.mark.parametrize(
    ("query", "roles"),
    [
        ("where are redirects followed", set()),
        ("how do I follow redirects", {"docs", "example"}),
        ("unit tests of the redirect loop", {"test"}),
        ("release notes for 2.0", {"changelog"}),
        ("what is the default config file", {"config", "docs"}),
    ],
)
def test_what_a_query_asks_for(query: str, roles: set[str]) -> None:
    assert wanted_roles(query) == frozenset(roles)


def test_roles_over_http_and_the_cli(repo: tuple[Lode, Path], tmp_path: Path) -> None:
    _, root = repo
    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False})
    with serve_in_thread(config, FakeEmbedder()) as base:
        created = httpx.post(f"{base}/api/v1/projects", json={"path": str(root), "name": "client"}).json()
        assert wait_task(base, created["task_id"])["status"] == "done"
        body = {"query": "redirects", "granularity": "chunk", "mode": "lexical", "roles": ["test"]}
        answer = httpx.post(f"{base}/api/v1/search", json=body).json()
        roles = {h["role"] for g in answer["groups"] for h in g["chunks"]}
        assert roles == {"test"}
        bad = httpx.post(f"{base}/api/v1/search", json={**body, "roles": ["tests"]})
        assert bad.status_code == 400
        assert bad.json()["extra"][0]["key"] == "roles"
    env = {"LODE_DB": str(tmp_path / "db"), "LODE_PORT": "9", "LODE_MODEL": "fake-hash-256"}
    out = CliRunner().invoke(
        cli,
        [
            "search",
            "redirects",
            "--mode",
            "lexical",
            "--granularity",
            "chunk",
            "--exclude-roles",
            "test",
            "--json",
        ],
        env=env,
    )
    assert out.exit_code == 0, out.output
    assert '"role": "test"' not in out.output
    assert '"role": "implementation"' in out.output
    refused = CliRunner().invoke(cli, ["search", "redirects", "--roles", "tests"], env=env)
    assert refused.exit_code == 2


_REPORT = """follow_redirects never stops when the server keeps redirecting

Traceback (most recent call last):
  File "tests/test_redirects.py", line 6, in test_follow_redirects_until_final
    response = follow_redirects(FakeRedirect(), FakeClient())
  File "src/client/redirects.py", line 9, in follow_redirects
    response = client.get(location)
RecursionError: maximum recursion depth exceeded

Expected: it stops after max_redirects redirects. Actual: the assert in the test fails.
Version: client 2.0, Python 3.11
"""


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_a_bug_report_finds_the_code_to_change_not_its_test(repo: tuple[Lode, Path], mode: str) -> None:
    """A report quoting a traceback through a test, an assert and a test's name asks for the
    code to change: the frame's function ranks above the test that exercises it."""
    lode, _ = repo
    top = _top(lode, _REPORT, mode=mode)
    assert top[0] == ("src/client/redirects.py", "implementation"), top


@pytest.mark.parametrize(
    "ask", ["Write a test for this.", "Please add a regression test.", "The unit tests should cover it."]
)
def test_a_bug_report_that_asks_for_a_test_gets_tests(repo: tuple[Lode, Path], ask: str) -> None:
    lode, _ = repo
    assert "test" in wanted_roles(f"{_REPORT}\n{ask}")
    assert _top(lode, f"{_REPORT}\n{ask}", mode="lexical")[0][1] == "test"


@pytest.mark.parametrize(
    ("query", "roles"),
    [
        (_REPORT, set()),
        ("AssertionError: expected 3 got 4 in test_parse\n```\nparse('1+2')\n```", set()),
        ("how do I stop the crash?\nTraceback (most recent call last):\nValueError: bad", set()),
        ("the docs say max_redirects defaults to 20\nTypeError: unexpected keyword", {"docs"}),
    ],
)
def test_what_a_bug_report_asks_for(query: str, roles: set[str]) -> None:
    assert wanted_roles(query) == frozenset(roles)


def test_a_bug_report_scales_down_every_role_it_does_not_ask_for() -> None:
    """A report's tests and docs weigh ``REPORT_PRIOR`` times their usual prior (a test
    scoring 1.0 no longer beats code scoring 0.3); the code to change keeps its score, and
    a query that is not a report keeps the usual priors."""
    from indexer.search._priors import REPORT_PRIOR, ROLE_PRIOR, role_prior_for

    prior = role_prior_for(_REPORT, ROLE_PRIOR, REPORT_PRIOR)
    assert prior["implementation"] == 1.0
    assert prior["test"] == pytest.approx(ROLE_PRIOR["test"] * REPORT_PRIOR)
    assert prior["docs"] == pytest.approx(ROLE_PRIOR["docs"] * REPORT_PRIOR)
    assert 1.0 * prior["test"] < 0.3 < 1.0 * ROLE_PRIOR["test"]
    assert role_prior_for("where are redirects followed", ROLE_PRIOR, REPORT_PRIOR) is ROLE_PRIOR
    assert role_prior_for(_REPORT, ROLE_PRIOR, 1.0) is ROLE_PRIOR


def _hit(file: str, score: float) -> ChunkHit:
    return ChunkHit(
        id=f"{file}-{score}", file_id=file, file_path=f"{file}.py", project_id="p", project="p",
        chunk_index=0, content="", start_line=1, end_line=1, language="python",
        node_type="function", node_name="f", parent_context="", scope_path=(), relevance_score=score,
    )  # fmt: skip


def test_one_strong_chunk_does_not_pull_its_files_weak_chunks_above_another_files_strong_ones() -> None:
    """The first three chunks of a page are in rank order (file a's weak chunk comes after
    file b's strong ones); after them, a file's chunks are grouped, in the order of each
    file's best one there."""
    ranked = [_hit("a", 0.9), _hit("b", 0.8), _hit("b", 0.7), _hit("a", 0.3), _hit("c", 0.25), _hit("a", 0.2)]
    groups = group_hits(ranked)
    assert [[(h.file_id, h.relevance_score) for h in g] for g in groups] == [
        [("a", 0.9)],
        [("b", 0.8), ("b", 0.7)],
        [("a", 0.3), ("a", 0.2)],
        [("c", 0.25)],
    ]
    order = [h.relevance_score for g in groups for h in g]
    assert order[:3] == [0.9, 0.8, 0.7]
    # a later page groups by file only
    assert [len(g) for g in group_hits(ranked, head=0)] == [3, 2, 1]


def test_the_first_chunks_of_a_search_page_are_in_rank_order(repo: tuple[Lode, Path]) -> None:
    lode, _ = repo
    answer = lode.search(
        SearchOptions(query="redirects followed max_redirects", granularity="chunk", limit=10)
    )
    shown = [h.relevance_score for g in answer.groups for h in g.chunks]
    assert shown[:HEAD] == sorted(shown[:HEAD], reverse=True)
    assert shown[:HEAD] == [h.relevance_score for h in answer.hits[:HEAD]]


_POLICY = '''class RequestSigner:
    """Signs requests: computes the HMAC signature of a request body with the secret key,
    and checks the signature of a webhook request body."""

    algorithm = "sha256"

    def __init__(self, key):
        self.key = key

    def signature(self, body):
        """The hex digest of the body signed with the key."""
        return hmac.new(self.key, body, self.algorithm).hexdigest()

    def verify(self, body, header):
        """Whether a webhook header matches the body's digest."""
        return hmac.compare_digest(self.signature(body), header)
'''


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lode]:
    """A class whose header chunk shares words with its methods' questions."""
    root = tmp_path_factory.mktemp("policy") / "client"
    root.mkdir()
    (root / "policy.py").write_text(_POLICY)
    lode = Lode(load_config(env={}, overrides={"db": root.parent / "db"}), embedder=FakeEmbedder())
    lode.index(root, name="client")
    yield lode
    lode.close()


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_a_class_header_does_not_hide_the_method_that_answers(policy: Lode, mode: str) -> None:
    answer = policy.search(
        SearchOptions(query="compute the HMAC signature of a request body", granularity="chunk", mode=mode)
    )
    assert next(h.node_name for g in answer.groups for h in g.chunks) == "signature"


def test_a_question_about_the_class_still_gets_its_header(policy: Lode) -> None:
    for query in ("RequestSigner", "request signer class"):
        answer = policy.search(SearchOptions(query=query, granularity="chunk", mode="lexical"))
        assert next(h.node_name for g in answer.groups for h in g.chunks) == "RequestSigner", query


def test_a_long_report_without_a_traceback_is_a_report_and_a_commit_subject_is_not() -> None:
    from indexer.search._priors import is_bug_report

    report = (
        "Client does not respect context canceled. When the request context is cancelled the "
        "client keeps retrying the scrape and the test suite hangs; a timeout works, "
        "but with a cancelled context the call should return at once instead "
        "of waiting for the next retry. How do I stop it?"
    )
    assert is_bug_report(report)
    assert wanted_roles(report) == frozenset()
    for subject in ("Fix flaky test of the retry loop", "docs: how to use the client", "Add tests for Host"):
        assert not is_bug_report(subject)
    assert "test" in wanted_roles("Fix flaky test of the retry loop")


def test_a_pasted_issue_is_a_report_and_a_long_question_is_not() -> None:
    """An issue pasted whole (its title, a blank line, its text) asks for the code to change,
    as does a long text naming a problem ("invalid", "mismatches", "does not …"); a long
    question in one paragraph without one still asks for docs and examples."""
    from indexer.search._priors import is_bug_report

    body = (
        "The return type of the argument getters is declared as a plain string, but the "
        "getters return a list when the argument is given several times in the query of "
        "the request, so type checkers accept code that fails at run time in the handler."
    )
    assert is_bug_report("Typing of the argument getters\n\n" + body)
    assert is_bug_report(
        "The size computed for a segment option mismatches the size the kernel writes back, "
        "so the buffer that holds the control messages is read past its end when the socket "
        "receives several of them in one call to recvmsg on a busy connection of the web server."
    )
    question = (
        "how do I configure the retry policy of the client so that every request to the "
        "metrics endpoint is sent again with a longer delay each time, and how can I tell "
        "the client to give up after five attempts and return the last answer that it has received?"
    )
    assert len(question) >= 250
    assert not is_bug_report(question)
    assert {"docs", "example"} <= wanted_roles(question)


def test_the_fusion_weighs_a_bug_reports_words_above_its_vector() -> None:
    """A report's names, messages and frames are the code's words: its lexical list weighs
    more than its vector; a question keeps the usual weights, a name its own."""
    from indexer.search._ranking import NAME_WEIGHTS, REPORT_WEIGHTS, RankingConfig

    config = RankingConfig()
    report = config.weights_for(_REPORT)
    assert report == REPORT_WEIGHTS
    assert report["lexical"] > report["semantic"]
    assert config.weights_for("where are redirects followed") is None  # the default WEIGHTS
    assert config.weights_for("follow_redirects") == NAME_WEIGHTS
