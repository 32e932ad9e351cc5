"""One registration for every front end (``Lode.register``, ``ServerContext.register``):
``POST /api/v1/projects``, MCP ``projects action=register`` and ``lode index PATH`` give a
folder registered again its project back, and refuse alike to change its name or globs
(that is ``PATCH``'s job). Before, only HTTP refused: MCP and the CLI silently kept the old
name while saying they had registered the new one.

HTTP through httpx and MCP through the SDK's real client, against the real app served in
this process (fake embedder); the CLI in-process on its own index."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from click.testing import CliRunner
from conftest import make_repo
from live import serve_in_thread, wait_task
from mcp import Client

from indexer.api import Lode
from indexer.cli import cli
from indexer.config import load_config
from indexer.embed import FakeEmbedder
from indexer.errors import ConflictError

API = "/api/v1"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """(base URL, folder) of a server with the fixture repo registered as ``shop``."""
    base_dir = tmp_path_factory.mktemp("register")
    repo = make_repo(base_dir / "repo")
    config = load_config(env={}, overrides={"db": base_dir / "db", "enabled": False})
    with serve_in_thread(config, FakeEmbedder()) as base:
        created = httpx.post(f"{base}{API}/projects", json={"path": str(repo), "name": "shop"})
        assert created.status_code == 201, created.text
        assert wait_task(base, created.json()["task_id"])["status"] == "done"
        yield base, repo


def _register(base: str, args: dict[str, Any]) -> tuple[bool, str]:
    async def main() -> tuple[bool, str]:
        async with Client(f"{base}/mcp", read_timeout_seconds=60) as client:
            result = await client.call_tool("projects", {"action": "register", **args})
            return bool(result.is_error), "".join(getattr(b, "text", "") for b in result.content)

    return anyio.run(main)


def test_mcp_registering_a_folder_again_returns_its_project(served: tuple[str, Path]) -> None:
    base, repo = served
    is_error, text = _register(base, {"path": str(repo)})
    assert not is_error, text
    assert text.startswith("registered shop at "), text[:200]
    assert [p["name"] for p in httpx.get(f"{base}{API}/projects").json()] == ["shop"]


@pytest.mark.parametrize(
    ("args", "field"),
    [({"name": "other"}, "name"), ({"exclude": ["src/"]}, "exclude"), ({"include": ["*.py"]}, "include")],
)
def test_mcp_and_http_refuse_alike_to_change_a_registered_folder(
    served: tuple[str, Path], args: dict[str, Any], field: str
) -> None:
    base, repo = served
    is_error, text = _register(base, {"path": str(repo), **args})
    answer = httpx.post(f"{base}{API}/projects", json={"path": str(repo), **args})
    assert answer.status_code == 409, answer.text
    body = answer.json()
    assert body["extra"][0]["key"] == field
    assert is_error, text
    assert body["detail"] in text, (text, body["detail"])
    assert "already registered as project 'shop'" in text
    assert [p["name"] for p in httpx.get(f"{base}{API}/projects").json()] == ["shop"]


def test_lode_register_refuses_a_new_name_and_keeps_globs_in_any_order(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    lode = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    try:
        first = lode.register(repo, "shop", exclude=("docs/", "*.md"))
        assert lode.register(repo) == first
        assert lode.register(repo, "shop", exclude=("*.md", "docs/")) == first
        with pytest.raises(ConflictError) as raised:
            lode.register(repo, "renamed")
        assert raised.value.field == "name"
    finally:
        lode.close()


def test_lode_index_refuses_a_new_name_for_a_registered_folder(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    lode = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    lode.index(repo, name="shop")
    lode.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LODE_")}
    env |= {"LODE_DB": str(tmp_path / "db"), "LODE_MODEL": "fake-hash-256"}
    runner = CliRunner()
    again = runner.invoke(cli, ["index", str(repo), "--name", "other", "--local"], env=env)
    assert again.exit_code == 2, again.output
    line = again.output.strip()
    assert "\n" not in line
    assert "already registered as project 'shop' with name 'shop'" in line, line
    listed = runner.invoke(cli, ["projects", "list", "--json"], env=env)
    assert '"shop"' in listed.output, listed.output
    assert '"other"' not in listed.output, listed.output
