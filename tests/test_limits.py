"""One set of input limits for every front end (``indexer.limits``): HTTP, the MCP tools
and the CLI refuse the same oversized or malformed input with an error naming the field,
before anything reaches the store; an error (and the log line repeating it) quotes at
most a short prefix of what was sent; every MCP answer, errors included, fits its
``max_tokens``; a URL over the limit is a 414 in lode's error shape.

MCP through the SDK's real client and HTTP through httpx, both against the real app served
by uvicorn in this process (fake embedder); the CLI in-process on its own index."""

from __future__ import annotations

import json
import logging
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from click.testing import CliRunner
from conftest import make_repo
from live import free_port, serve_in_thread, wait_task
from mcp import Client

from indexer.api import Lode
from indexer.cli import cli
from indexer.config import load_config
from indexer.embed import FakeEmbedder, TokenCounter, load_token_counter
from indexer.errors import FieldError, NotFoundError, ValidationError
from indexer.limits import (
    MAX_FIELD_ERRORS,
    MAX_GLOBS,
    MAX_NAMES,
    MAX_PATHS,
    MAX_TEXT_CHARS,
    QUOTE_CHARS,
    check_items,
    check_relative_path,
    quote,
    quote_items,
)
from server.limits import MAX_URL_BYTES

API = "/api/v1"
#: Longest error an oversized value may produce (a few fields, each with a short quote).
SHORT = 1_000
#: Longest line the server logs about a call.
SHORT_LOG = 1_500


# ---- the helpers ---------------------------------------------------------------------------
def test_quote_shows_a_short_prefix() -> None:
    assert quote("abc") == "'abc'"
    long = quote("x" * 200_000)
    assert long == repr("x" * QUOTE_CHARS) + "…"
    assert quote_items(["a", "b"]) == "['a', 'b']"
    many = quote_items([f"p{i}" for i in range(10_000)])
    assert many.endswith(", … (9995 more)]")
    assert len(many) < 100
    assert len(quote_items(["y" * 100_000] * 3)) < 4 * QUOTE_CHARS


def test_checks_name_the_field_and_count_before_reading_items() -> None:
    with pytest.raises(ValidationError) as caught:
        check_items("path_include", ["\x00"] * (MAX_GLOBS + 1), MAX_GLOBS)
    assert str(caught.value) == f"path_include: must hold at most {MAX_GLOBS} items (got {MAX_GLOBS + 1})"
    with pytest.raises(ValidationError, match=r"^paths: items must not contain NUL characters$"):
        check_items("paths", ["ok", "a\x00b"], MAX_PATHS)
    for bad in ("/etc/passwd", "\\x", "../x", "a/../b", "a\x00b", "x" * (MAX_TEXT_CHARS + 1)):
        with pytest.raises(ValidationError) as caught:
            check_relative_path("from_path", bad)
        assert caught.value.field == "from_path"
        assert len(str(caught.value)) < SHORT
    assert check_relative_path("from_path", "src/a..b/c.py") == "src/a..b/c.py"


def test_an_error_cuts_a_made_up_field_name_and_a_long_message() -> None:
    error = ValidationError("k" * 100_000, "m" * 100_000, more=(FieldError("j" * 50_000, "bad"),))
    assert all(len(e.field) <= QUOTE_CHARS + 1 and len(e.message) <= 1_001 for e in error.errors)
    assert len(str(NotFoundError("n" * 100_000))) <= 1_001


# ---- the served app -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server with the fixture repo indexed as ``shop``; its base URL."""
    base_dir = tmp_path_factory.mktemp("limits")
    repo = make_repo(base_dir / "repo")
    config = load_config(env={}, overrides={"db": base_dir / "db", "enabled": False})
    with serve_in_thread(config, FakeEmbedder()) as base:
        created = httpx.post(f"{base}{API}/projects", json={"path": str(repo), "name": "shop"})
        assert created.status_code == 201, created.text
        assert wait_task(base, created.json()["task_id"])["status"] == "done"
        yield base


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    """The tokenizer the server budgets MCP answers with (its default model's)."""
    return load_token_counter()


def _text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def _calls(base: str, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[bool, str, float]]:
    """(is_error, text, seconds) of each tool call, in one MCP session."""

    async def main() -> list[tuple[bool, str, float]]:
        out = []
        async with Client(f"{base}/mcp", read_timeout_seconds=120) as client:
            for name, args in calls:
                started = time.monotonic()
                result = await client.call_tool(name, args)
                out.append((bool(result.is_error), _text(result), time.monotonic() - started))
        return out

    return anyio.run(main)


def _error(base: str, name: str, args: dict[str, Any]) -> str:
    ((is_error, text, _),) = _calls(base, [(name, args)])
    assert is_error, text[:300]
    return text


# ---- finding 1: 35,000 globs over MCP --------------------------------------------------------
def test_an_mcp_search_with_too_many_globs_is_refused_and_the_server_lives_on(served: str) -> None:
    """35,000 globs (a body under the 1 MiB limit) overflowed a stack inside the store and
    killed the server; each list is capped as HTTP caps it, before the store sees it."""
    over = ["src/*.py"] * (MAX_GLOBS + 1)
    many = ["src/*.py"] * 35_000
    (first, second, after) = _calls(
        served,
        [
            ("search", {"query": "cart", "path_include": over}),
            ("search", {"query": "cart", "path_exclude": many}),
            ("search", {"query": "cart total"}),
        ],
    )
    assert first[0], first[1][:300]
    assert (
        first[1]
        == f"invalid argument (path_include): must hold at most {MAX_GLOBS} items (got {MAX_GLOBS + 1})"
    )
    assert second[0]
    assert second[1] == f"invalid argument (path_exclude): must hold at most {MAX_GLOBS} items (got 35000)"
    assert second[2] < 5, second[2]
    assert not after[0], after[1]
    assert "cart" in after[1]
    assert httpx.get(f"{served}/health").status_code == 200


# ---- one limit, every front end -------------------------------------------------------------
#: (field, MCP call, HTTP request, CLI arguments) over the same limit.
LIMITS: list[tuple[str, tuple[str, dict[str, Any]], tuple[str, str, Any], list[str]]] = [
    (
        "path_include",
        ("search", {"query": "cart", "path_include": ["src/**"] * (MAX_GLOBS + 1)}),
        ("POST", "/search", {"query": "cart", "path_include": ["src/**"] * (MAX_GLOBS + 1)}),
        ["search", "cart", *["--path-include", "src/**"] * (MAX_GLOBS + 1)],
    ),
    (
        "has_references",
        ("search", {"query": "cart", "has_references": ["x"] * (MAX_NAMES + 1)}),
        ("POST", "/search", {"query": "cart", "has_references": ["x"] * (MAX_NAMES + 1)}),
        ["search", "cart", *["--has-references", "x"] * (MAX_NAMES + 1)],
    ),
    (
        "query",
        ("search", {"query": "q" * 2_001}),
        ("POST", "/search", {"query": "q" * 2_001}),
        ["search", "q" * 2_001],
    ),
    (
        "from_path",
        ("find_symbol", {"name": "Cart", "from_path": "../outside.py"}),
        ("GET", "/symbols", {"name": "Cart", "from_path": "../outside.py"}),
        ["symbols", "Cart", "--from-path", "../outside.py"],
    ),
    (
        "from_path",
        ("find_references", {"name": "Cart", "from_path": "/etc/passwd"}),
        ("GET", "/symbols/references", {"name": "Cart", "from_path": "/etc/passwd"}),
        ["refs", "Cart", "--from-path", "/etc/passwd"],
    ),
    (
        "kind",
        ("find_symbol", {"name": "Cart", "kind": ",".join(["class"] * (MAX_NAMES + 1))}),
        ("GET", "/symbols", {"name": "Cart", "kind": ["class"] * (MAX_NAMES + 1)}),  # a repeated parameter
        ["symbols", "Cart", "--kind", ",".join(["class"] * (MAX_NAMES + 1))],
    ),
    (
        "pattern",
        ("outline", {"action": "find", "pattern": "ab." * 2_000}),
        ("GET", "/projects/shop/outline/find", {"title": "ab." * 2_000}),
        ["outline", "find", "ab." * 2_000, "--project", "shop"],
    ),
    (
        "paths",
        ("projects", {"action": "reindex", "project": "shop", "paths": ["src"] * (MAX_PATHS + 1)}),
        ("POST", "/projects/shop/index", {"paths": ["src"] * (MAX_PATHS + 1)}),
        [],  # the CLI's index and register: test_the_cli_refuses_too_many_globs_and_paths
    ),
    (
        "exclude",
        ("projects", {"action": "register", "path": "REPO", "exclude": ["*.md"] * (MAX_GLOBS + 1)}),
        ("POST", "/projects", {"path": "REPO", "exclude": ["*.md"] * (MAX_GLOBS + 1)}),
        [],
    ),
    (
        "include",
        ("discover", {"question": "what is shop", "include": ["s*"] * (MAX_GLOBS + 1)}),
        ("POST", "/discover", {"question": "what is shop", "include": ["s*"] * (MAX_GLOBS + 1)}),
        ["discover", "what is shop", *["--include", "s*"] * (MAX_GLOBS + 1)],
    ),
]


def _repo_of(base: str) -> str:
    return str(httpx.get(f"{base}{API}/projects").json()[0]["root"])


def _fill(value: Any, repo: str) -> Any:
    if value == "REPO":
        return repo
    if isinstance(value, dict):
        return {k: _fill(v, repo) for k, v in value.items()}
    return value


@pytest.mark.parametrize(
    ("field", "call", "request_", "argv"), LIMITS, ids=[f"{x[0]}-{x[1][0]}" for x in LIMITS]
)
def test_each_limit_through_mcp_and_http(
    served: str, field: str, call: tuple[str, dict[str, Any]], request_: tuple[str, str, Any], argv: list[str]
) -> None:
    repo = _repo_of(served)
    name, args = call
    message = _error(served, name, _fill(args, repo))
    assert message.startswith(f"invalid argument ({field}): "), message[:300]
    assert len(message) < SHORT, message[:300]
    method, path, payload = request_
    payload = _fill(payload, repo)
    if method == "GET":
        response = httpx.get(f"{served}{API}{path}", params=payload)
    else:
        response = httpx.request(method, f"{served}{API}{path}", json=payload)
    assert response.status_code == 400, response.text[:300]
    body = response.json()
    assert set(body) == {"status_code", "detail", "extra"}
    http_field = {"pattern": "title"}.get(field, field)
    assert body["extra"][0]["key"] == http_field, body
    assert len(response.text) < 2 * SHORT, response.text[:300]


@pytest.fixture(scope="module")
def cli_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(index folder, repository) of the fixture repo indexed by the fake embedder, no server."""
    base = tmp_path_factory.mktemp("limits-cli")
    repo = make_repo(base / "repo")
    lode = Lode(load_config(env={}, overrides={"db": base / "db"}), embedder=FakeEmbedder())
    lode.index(repo, name="shop")
    lode.close()
    return base / "db", repo


def _env(db: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LODE_")}
    return {**env, "LODE_DB": str(db), "LODE_MODEL": "fake-hash-256", "LODE_PORT": str(free_port())}


@pytest.mark.parametrize(
    ("field", "argv"),
    [(x[0], x[3]) for x in LIMITS if x[3]],
    ids=[f"{x[0]}-{x[3][0]}" for x in LIMITS if x[3]],
)
def test_each_limit_through_the_cli(cli_db: tuple[Path, Path], field: str, argv: list[str]) -> None:
    db, _ = cli_db
    out = CliRunner().invoke(
        cli, [*argv, "--local"] if argv[0] in ("search", "symbols", "refs") else argv, env=_env(db)
    )
    assert out.exit_code == 2, out.output[:300]
    line = out.output.strip()
    assert "\n" not in line
    option = "--" + field.replace("_", "-")
    named = {"query": "QUERY", "pattern": "TITLE"}.get(field, option)
    assert line.startswith(f"lode: error: {named}"), line[:300]
    assert len(line) < SHORT, line[:300]


def test_the_cli_refuses_too_many_globs_and_paths(cli_db: tuple[Path, Path], tmp_path: Path) -> None:
    db, _ = cli_db
    repo = make_repo(tmp_path / "other")
    lode = Lode(load_config(env={}, overrides={"db": db}), embedder=FakeEmbedder())
    try:
        with pytest.raises(ValidationError, match=rf"^exclude: must hold at most {MAX_GLOBS} items"):
            lode.register(repo, "other", exclude=tuple(["*.md"] * (MAX_GLOBS + 1)))
        with pytest.raises(ValidationError, match=rf"^paths: must hold at most {MAX_PATHS} paths"):
            lode.index(repo, name="other", paths=["src"] * (MAX_PATHS + 1))
    finally:
        lode.close()


# ---- finding 8: answers within budget, errors echo little, types and NUL named --------------
def test_an_outline_find_with_a_long_pattern_answers_within_its_budget(
    served: str, counter: TokenCounter
) -> None:
    """A 6,001-character pattern answered 6,009 tokens at max_tokens=100: the pattern is
    capped as HTTP caps it, and a head quoting the longest allowed one is cut to fit."""
    calls = [
        ("outline", {"action": "find", "pattern": "ab." * 2_000 + "x", "max_tokens": 100}),
        ("outline", {"action": "find", "pattern": "a.:" * 166 + "*", "max_tokens": 100}),
        ("outline", {"action": "find", "pattern": "a.:" * 166 + "*", "max_tokens": 100, "format": "json"}),
        ("outline", {"action": "grep", "pattern": "(:" * 400 + ")" * 400, "max_tokens": 100}),
    ]
    for (is_error, text, _), (_, args) in zip(_calls(served, calls), calls, strict=True):
        assert counter.count(text) <= 100, (args["pattern"][:20], is_error, text[:300])
    assert _calls(served, calls[:1])[0][1].startswith(
        "invalid argument (pattern): must be at most 500 characters"
    )


def test_errors_quote_a_short_prefix_of_what_was_sent(
    served: str, caplog: pytest.LogCaptureFixture, counter: TokenCounter
) -> None:
    caplog.set_level(logging.INFO)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("read", {"path": "src/shop/cart.py#" + "A." * 2_000}),
        ("read", {"path": "src/shop/cart.py#" + "A." * 50_000}),
        ("read", {"id": "x" * 200_000}),
        ("read", {"id": "y" * 4_000}),
        ("read", {"path": "src/nope/" + "n" * 4_000}),
        ("search", {"query": "cart", "projects": ["nope"] * 10_000}),
        ("search", {"query": "cart", "projects": [f"nope{i}" for i in range(900)]}),
        ("search", {"query": "cart", "node_types": [f"t{i}" for i in range(900)]}),
        ("search", {"query": "cart", "path_include": ["[z-a]" + "g" * 4_000]}),
        ("find_symbol", {"name": "Cart", "project": "p" * 4_000}),
        ("outline", {"project": "shop", "path": "nope/" + "n" * 4_000}),
        ("discover", {"question": "x", "stage": "s" * 100_000}),
        (
            "discover",
            {
                "question": "x",
                "stage": "expand_queries",
                "input": {f"k{i}" + "k" * 1_000: 1 for i in range(200)},
            },
        ),
        ("discover", {"question": "x", "config": {"c" * 100_000: {}}}),
        ("search", {"query": "cart", **{f"unknown{i}" * 1_000: 1 for i in range(50)}}),
        ("n" * 100_000, {}),
    ]
    for (is_error, text, _), (name, args) in zip(_calls(served, calls), calls, strict=True):
        assert is_error, (name[:20], list(args)[:2], text[:300])
        assert len(text) < SHORT, (name[:20], list(args)[:2], text[:300])
        assert counter.count(text) <= 2_000
    logged = [r.getMessage() for r in caplog.records]
    assert logged
    assert max(len(m) for m in logged) < SHORT_LOG, max(logged, key=len)[:300]


def test_errors_fit_the_smallest_budget(served: str, counter: TokenCounter) -> None:
    """An error naming many fields still fits ``max_tokens``."""
    args = {
        "query": "\u2603" * 2_001, "projects": ["?"] * 1_001, "languages": ["?"] * 1_001,
        "path_include": ["?"] * 101, "path_exclude": ["?"] * 101, "node_types": ["?"] * 1_001,
        "roles": ["?"] * 20, "exclude_roles": ["?"] * 20, "has_definitions": ["?"] * 1_001,
        "limit": 0, "offset": -1, "max_tokens": 100,
    }  # fmt: skip
    ((is_error, text, _),) = _calls(served, [("search", args)])
    assert is_error
    assert text.startswith("invalid argument (")
    assert counter.count(text) <= 100, (counter.count(text), text)


def test_nul_characters_are_named(served: str) -> None:
    """A NUL byte answered 'Error executing tool X'; now the argument is named, in every tool."""
    calls: list[tuple[str, dict[str, Any], str]] = [
        ("find_symbol", {"name": "Cart", "from_path": "src/\x00x.py"}, "from_path"),
        ("find_references", {"name": "Ca\x00rt"}, "name"),
        ("read", {"path": "src/\x00shop.py"}, "path"),
        ("read", {"id": "\x00"}, "id"),
        ("outline", {"action": "grep", "pattern": "a\x00"}, "pattern"),
        ("search", {"query": "cart", "languages": ["py\x00"]}, "languages.0"),
        ("discover", {"question": "x", "stage": "promote_readme", "input": {"chunks": [{"t": "\x00"}]}},
         "input.chunks.0.t"),
        ("projects", {"action": "register", "path": "/tmp\x00"}, "path"),
    ]  # fmt: skip
    answers = _calls(served, [(name, args) for name, args, _ in calls])
    for (is_error, text, _), (name, _, field) in zip(answers, calls, strict=True):
        assert is_error, (name, text[:200])
        assert text == f"invalid argument ({field}): must not contain NUL characters", (name, text[:200])


def test_numbers_and_booleans_given_as_text_are_refused(served: str) -> None:
    """pydantic's lax mode turned ``"100"`` into 100; the tools take JSON numbers and booleans."""
    calls: list[tuple[str, dict[str, Any], str]] = [
        ("search", {"query": "cart", "max_tokens": "100"}, "max_tokens"),
        ("search", {"query": "cart", "limit": 1.0}, "limit"),
        ("search", {"query": "cart", "ids": "true"}, "ids"),
        ("search", {"query": "cart", "scope_depth": ["1", "2"]}, "scope_depth.0"),
        ("read", {"path": "src/shop/cart.py", "start_line": "2"}, "start_line"),
        ("outline", {"depth": True}, "depth"),
        ("projects", {"action": "reindex", "project": "shop", "full": 1}, "full"),
        ("discover", {"question": "x", "max_bullets": "3"}, "max_bullets"),
    ]
    answers = _calls(served, [(name, args) for name, args, _ in calls])
    for (is_error, text, _), (name, _, field) in zip(answers, calls, strict=True):
        assert is_error, (name, text[:200])
        assert text.startswith(f"invalid argument ({field}): "), (name, text[:200])
    assert not _calls(served, [("search", {"query": "cart", "max_tokens": 100, "limit": 1})])[0][0]


def test_list_arguments_given_as_json_text_still_work(served: str) -> None:
    """Some clients send a list as JSON text; the SDK reads it (and the limits still hold)."""
    ok, over = _calls(
        served,
        [
            ("search", {"query": "cart", "languages": json.dumps(["python"]), "limit": 1}),
            ("search", {"query": "cart", "path_include": json.dumps(["*"] * (MAX_GLOBS + 1))}),
        ],
    )
    assert not ok[0], ok[1][:300]
    assert over[0]
    assert over[1].startswith("invalid argument (path_include): must hold at most")


# ---- finding 9: long URLs --------------------------------------------------------------------
def _raw_get(base: str, target: str) -> tuple[int, bytes]:
    """(status, body) of ``GET target`` sent over a plain socket (httpx refuses URLs over
    64 KiB before sending them)."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


@pytest.mark.parametrize("size", [MAX_URL_BYTES + 1, 70_000, 200_000, 900_000])
def test_a_long_url_is_a_414_in_lodes_error_shape(served: str, size: int) -> None:
    """200,000 characters reset the connection (uvicorn's h11 gave up at 16 KiB while the
    client was still sending); every URL over the limit is a 414 naming ``url``."""
    for path in (f"{API}/projects?x=", "/nope/", f"{API}/symbols?name="):
        status, body = _raw_get(served, path + "a" * (size - len(path)))
        assert status == 414, (path, size, status, body[:200])
        assert json.loads(body) == {
            "status_code": 414,
            "detail": f"the URL is over {MAX_URL_BYTES} bytes",
            "extra": [{"key": "url", "message": f"the URL is over {MAX_URL_BYTES} bytes", "source": "url"}],
        }
    assert httpx.get(f"{served}/health").status_code == 200


def test_a_url_under_the_limit_is_answered(served: str) -> None:
    path = f"{API}/projects?x="
    status, body = _raw_get(served, path + "a" * (MAX_URL_BYTES - len(path)))
    assert status == 200, body[:200]
    symbols = httpx.get(f"{served}{API}/symbols", params={"name": "Cart", "from_path": "src/" + "d" * 4_000})
    assert symbols.status_code == 200, symbols.text[:200]


def test_http_errors_quote_a_short_prefix_of_what_was_sent(served: str) -> None:
    """msgspec names an unknown field as sent, a 404 names the id: both are cut short."""
    requests = [
        ("POST", f"{API}/search", {"query": "cart", "k" * 100_000: 1}, 400),
        ("POST", f"{API}/search", {"query": "cart", "path_include": ["[z-a]" + "g" * 4_000]}, 400),
        ("POST", f"{API}/search", {"query": "cart", "projects": [f"nope{i}" for i in range(900)]}, 404),
        (
            "POST",
            f"{API}/discover/expand_queries",
            {"question": "x", **{f"k{i}" + "k" * 500: 1 for i in range(300)}},
            400,
        ),
        ("GET", f"{API}/documents/" + "d" * 4_000, None, 404),
        ("GET", f"{API}/chunks/" + "c" * 4_000, None, 404),
        ("GET", f"{API}/tasks/" + "t" * 4_000, None, 404),
        ("GET", f"{API}/projects/" + "p" * 4_000, None, 404),
        ("GET", f"{API}/symbols/" + "s" * 4_000, None, 404),
    ]
    for method, path, sent, status in requests:
        response = httpx.request(method, f"{served}{path}", json=sent, timeout=30)
        assert response.status_code == status, (path[:40], response.text[:300])
        body = response.json()
        assert set(body) == {"status_code", "detail", "extra"}
        assert len(body["detail"]) < SHORT, (path[:40], body["detail"][:300])
        extra = body["extra"] or []
        assert len(extra) <= MAX_FIELD_ERRORS
        assert all(len(e["key"]) <= QUOTE_CHARS + 1 and len(e["message"]) < SHORT for e in extra), extra[:2]


@pytest.mark.slow
def test_a_server_killed_by_a_native_crash_says_why_in_its_log(tmp_path: Path) -> None:
    """A segfault inside a native library (Lance's stack overflow was one) leaves the reason
    and the Python stacks on the server's stderr, not a process gone without a word."""
    import signal
    import subprocess
    import sys

    port = free_port()
    env = {**os.environ, "LODE_DB": str(tmp_path / "db"), "HF_HUB_OFFLINE": "1"}
    server = subprocess.Popen(
        [sys.executable, "-m", "server", "serve", "--port", str(port), "--no-watch"],
        env=env, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code in (200, 503):
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        server.send_signal(signal.SIGSEGV)
        _, err = server.communicate(timeout=30)
    finally:
        server.kill()
    assert server.returncode == -signal.SIGSEGV
    assert "Fatal Python error: Segmentation fault" in err
