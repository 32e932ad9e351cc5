"""The outline over real HTTP (uvicorn on 127.0.0.1, real LanceDB, fake embedder), one MCP
session over streamable HTTP, and the ``lode outline`` commands."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from click.testing import CliRunner
from conftest import DATA
from live import serve_in_thread, wait_task
from mcp import Client

from indexer.cli import cli
from indexer.config import load_config
from indexer.embed import FakeEmbedder

API = "/api/v1/projects"
OPERATIONS = {"outline_ls", "outline_cat", "outline_find", "outline_grep", "outline_locate", "outline_plan"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A server with the doc tree fixture indexed as project ``book``; (base URL, db)."""
    base_dir = tmp_path_factory.mktemp("outline-server")
    shutil.copytree(DATA / "outline" / "book", base_dir / "book")
    config = load_config(env={}, overrides={"db": base_dir / "db", "enabled": False})
    with serve_in_thread(config, FakeEmbedder()) as base:
        created = httpx.post(f"{base}{API}", json={"path": str(base_dir / "book"), "name": "book"})
        assert created.status_code == 201, created.text
        assert wait_task(base, created.json()["task_id"])["status"] == "done"
        yield base, base_dir / "db"


def _get(base: str, path: str, **params: Any) -> httpx.Response:
    return httpx.get(f"{base}{API}/book/outline{path}", params=params, timeout=30)


def _error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"status_code", "detail", "extra"}
    assert body["status_code"] == status
    return dict(body)


def test_ls(served: tuple[str, Path]) -> None:
    base, _ = served
    body = _get(base, "").json()
    assert body["node"]["id"] == "."
    assert body["node"]["summary"].startswith("Kite is a tiny job scheduler")
    assert [(c["id"], c["has_children"]) for c in body["children"]] == [("docs", True), ("README.md", True)]
    assert set(body["children"][0]) >= {"id", "title", "kind", "summary", "leaf_count", "has_children"}
    deep = _get(base, "", node="docs/guide", depth=2).json()
    assert deep["children"][0]["children"][0]["id"] == "docs/guide/config.md#Configuration"


def test_cat_find_grep(served: tuple[str, Path]) -> None:
    base, _ = served
    text = _get(base, "/text", node="docs/guide/config.md#Configuration/Dashboard").json()
    assert text["text"].startswith("   17  ## Dashboard")
    assert text["truncated"] is False
    cut = _get(base, "/text", node="docs/guide/config.md", max_chars=200).json()
    assert cut["truncated"] is True
    found = _get(base, "/find", title="troubleshoot*").json()
    assert [n["id"] for n in found["nodes"]] == [
        "docs/guide/install.md#Installation/Troubleshooting",
        "docs/guide/install.md#Installation/Troubleshooting~2",
    ]
    grep = _get(base, "/grep", pattern=r"port\W+8642").json()
    assert [(m["node"], m["line"]) for m in grep["matches"]] == [
        ("docs/guide/config.md#Configuration/Dashboard", 19),
        ("docs/guide/config.md#Configuration/Dashboard/Example", 25),
    ]


def test_locate_and_plan(served: tuple[str, Path]) -> None:
    base, _ = served
    url = f"{base}{API}/book/outline"
    cues = httpx.post(f"{url}/locate", json={"question": "Which port does the dashboard listen on?"}).json()
    assert cues["cues"][0]["node"] == "docs/guide/config.md#Configuration/Dashboard"
    overview = httpx.post(f"{url}/locate", json={"question": "what is this project about", "max_branches": 1})
    assert [c["node"] for c in overview.json()["cues"]] == ["README.md"]
    plan = httpx.post(f"{url}/plan", json={"question": "why a heap?", "visited": ["docs/intro.md"]}).json()
    assert plan["intent"] == "analytical"
    assert "## Unvisited branches" in plan["user"]


def test_errors(served: tuple[str, Path]) -> None:
    base, _ = served
    assert "nope" in _error(_get(base, "", node="nope"), 404)["detail"]
    bad = _error(_get(base, "/grep", pattern="(oops"), 400)
    assert bad["extra"][0]["key"] == "pattern"
    assert "(oops" in bad["detail"]
    assert _error(_get(base, "", depth=9), 400)["extra"]
    unknown = httpx.post(f"{base}{API}/book/outline/locate", json={"question": "x", "nope": 1})
    assert _error(unknown, 400)["extra"][0]["key"] == "nope"
    replan = httpx.post(f"{base}{API}/book/outline/plan", json={"question": "x", "visited": ["gone"]})
    _error(replan, 404)
    _error(httpx.get(f"{base}{API}/missing/outline"), 404)


def test_openapi_documents_the_routes(served: tuple[str, Path]) -> None:
    spec = httpx.get(f"{served[0]}/api/openapi.json").json()
    operations = {op["operationId"] for path in spec["paths"].values() for op in path.values()}
    assert operations >= OPERATIONS


def test_mcp_tools(served: tuple[str, Path]) -> None:
    base, _ = served

    async def session() -> None:
        async with Client(f"{base}/mcp") as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            assert "outline" in tools
            assert not tools & OPERATIONS  # one outline tool, its action chosen by argument
            args = {"project": "book", "action": "find", "pattern": "Dash*"}
            result = await client.call_tool("outline", args)
            assert not result.is_error, result.content
            assert "docs/guide/config.md:17-" in result.content[0].text
            assert "Configuration/Dashboard" in result.content[0].text
            failed = await client.call_tool(
                "outline", {"project": "book", "action": "grep", "pattern": "(oops"}
            )
            assert failed.is_error
            assert "invalid argument (pattern)" in failed.content[0].text
            missing = await client.call_tool("outline", {"project": "book", "action": "cat", "path": "nope"})
            assert missing.is_error
            assert "path: no outline node" in missing.content[0].text

    anyio.run(session)


def test_cli(served: tuple[str, Path]) -> None:
    _, db = served
    runner = CliRunner()
    listed = runner.invoke(cli, ["outline", "ls", "docs", "--project", "book", "--db", str(db)])
    assert listed.exit_code == 0, listed.output
    assert "  guide/ [directory, 6] docs/guide\n" in listed.output
    located = runner.invoke(cli, ["outline", "locate", "dashboard port", "--db", str(db), "--json"])
    assert located.exit_code == 0, located.output
    assert json.loads(located.output)["cues"][0]["node"] == "docs/guide/config.md#Configuration/Dashboard"
    bad = runner.invoke(cli, ["outline", "grep", "(oops", "--db", str(db)])
    assert bad.exit_code == 2
    assert "PATTERN" in bad.output
