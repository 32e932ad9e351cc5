"""Search processes (``search_processes``): a real server (real model, real HTTP) whose
``POST /api/v1/search`` is answered by a child process. Its answers equal the server's own
search, its errors have the one error shape, projects registered, renamed or deleted are
seen at once, and a killed child is replaced while the server answers in its place."""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
from click.testing import CliRunner
from conftest import make_repo
from live import free_port, serve_in_thread, wait_healthy, wait_task

from indexer.config import load_config
from indexer.errors import ConfigError
from indexer.search import SearchOptions
from server import search_pool
from server.cli import cli
from server.context import ServerContext
from server.convert import from_wire, to_search_response
from server.http.schemas.search import SearchRequest
from server.search_pool import SearchPool

pytestmark = pytest.mark.slow

API = "/api/v1"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, ServerContext, Path]]:
    base_dir = tmp_path_factory.mktemp("processes")
    repo = make_repo(base_dir / "repo")
    overrides = {"db": base_dir / "db", "enabled": False, "search_processes": 1}
    contexts: list[ServerContext] = []
    with serve_in_thread(load_config(env={}, overrides=overrides), on_ready=contexts.append) as base:
        wait_healthy(base, timeout=240, processes=1)
        created = httpx.post(f"{base}{API}/projects", json={"path": str(repo), "name": "shop"}).json()
        assert wait_task(base, created["task_id"], timeout=240)["status"] == "done"
        yield base, contexts[0], base_dir


def _pool(ctx: ServerContext) -> SearchPool:
    pool = ctx.search_pool
    assert isinstance(pool, SearchPool)
    return pool


def _search(base: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{base}{API}/search", json=body, timeout=60)


def _here(ctx: ServerContext, body: dict[str, Any]) -> dict[str, Any]:
    """What the server process itself answers for ``body``."""
    request = msgspec.convert(body, SearchRequest)
    return dict(msgspec.to_builtins(to_search_response(ctx.lode.search(from_wire(request, SearchOptions)))))


@pytest.mark.parametrize(
    "body",
    [
        {"query": "add an item to the cart", "granularity": "chunk", "limit": 5},
        {"query": "parse the configuration file", "granularity": "document"},
        {"query": "Cart", "mode": "lexical", "granularity": "chunk", "languages": ["python"]},
        {"query": "total price", "mode": "semantic", "granularity": "chunk", "node_types": ["function"]},
    ],
)
def test_answers_equal_the_servers_own(served: tuple[str, ServerContext, Path], body: dict[str, Any]) -> None:
    base, ctx, _ = served
    pool = _pool(ctx)
    before, searches = pool.answered, ctx.lode.activity.started
    response = _search(base, body)
    assert response.status_code == 200, response.text
    assert pool.answered == before + 1  # the search process answered, not the fallback
    # ...and the index writer, which yields to searches, saw it
    assert ctx.lode.activity.started == searches + 1
    assert pool.activity is ctx.worker.activity is ctx.lode.activity
    assert pool.query_graph is not None  # ...and embedded the query without torch
    for pid in pool.pids:
        assert "torch" not in Path(f"/proc/{pid}/maps").read_text()
    got, want = response.json(), _here(ctx, body)
    assert got.pop("took_ms") >= 0
    want.pop("took_ms")
    assert got == want
    assert got["total"] > 0


def test_errors_have_the_one_shape(served: tuple[str, ServerContext, Path]) -> None:
    base, ctx, _ = served
    pool = _pool(ctx)
    before = pool.answered
    response = _search(base, {"query": "cart", "projects": ["no-such-project"]})
    assert response.status_code == 404, response.text
    assert pool.answered == before + 1
    body = response.json()
    assert set(body) == {"status_code", "detail", "extra"}
    assert body["status_code"] == 404
    assert [e["key"] for e in body["extra"]] == ["projects"]
    assert "Traceback" not in response.text


def test_mcp_and_the_web_page_search_through_the_same_processes(
    served: tuple[str, ServerContext, Path],
) -> None:
    """One process model for every front end: the MCP ``search`` tool (over ``/mcp``) and
    the web page's results are answered by the search processes too, and say what HTTP says."""
    import anyio
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    base, ctx, _ = served
    pool = _pool(ctx)
    before = pool.answered

    async def ask() -> str:
        async with Client(streamable_http_client(f"{base}/mcp")) as client:
            result = await client.call_tool(
                "search", {"query": "add an item to the cart", "format": "json", "max_tokens": 4000}
            )
            assert not result.is_error, result.content
            return str(result.content[0].text)  # type: ignore[union-attr]

    answer = msgspec.json.decode(anyio.run(ask))
    assert pool.answered == before + 1
    http = _search(base, {"query": "add an item to the cart", "granularity": "chunk", "limit": 40}).json()
    best = [(h["file_path"], h["start_line"]) for g in http["groups"] for h in g["chunks"]]
    shown = [(r["path"], r["start_line"]) for r in answer["results"]]
    assert shown
    assert shown[0] in best[:3]
    page = httpx.post(f"{base}/ui/fragments/results", json={"query": "add an item to the cart"}, timeout=60)
    assert page.status_code == 200, page.text
    assert pool.answered == before + 3
    error = anyio.run(_mcp_error, base)
    assert "no-such-project" in error
    assert pool.answered == before + 4


async def _mcp_error(base: str) -> str:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with Client(streamable_http_client(f"{base}/mcp")) as client:
        result = await client.call_tool("search", {"query": "cart", "projects": ["no-such-project"]})
        assert result.is_error
        return str(result.content[0].text)  # type: ignore[union-attr]


def test_projects_are_seen_at_once(served: tuple[str, ServerContext, Path]) -> None:
    base, ctx, base_dir = served
    pool = _pool(ctx)
    before = pool.answered
    other = make_repo(base_dir / "other")
    created = httpx.post(f"{base}{API}/projects", json={"path": str(other), "name": "other"}).json()
    assert wait_task(base, created["task_id"], timeout=240)["status"] == "done"
    found = _search(base, {"query": "cart", "projects": ["other"], "granularity": "chunk"})
    assert found.status_code == 200, found.text
    projects = {h["project"] for g in found.json()["groups"] for h in g["chunks"]}
    assert projects == {"other"}
    pid = created["project"]["id"]
    assert httpx.patch(f"{base}{API}/projects/{pid}", json={"name": "renamed"}).status_code == 200
    assert _search(base, {"query": "cart", "projects": ["renamed"]}).status_code == 200
    assert _search(base, {"query": "cart", "projects": ["other"]}).status_code == 404
    assert httpx.delete(f"{base}{API}/projects/{pid}").status_code == 204
    gone = _search(base, {"query": "cart", "projects": ["renamed"]})
    assert gone.status_code == 404, gone.text
    assert pool.answered == before + 4  # every one by the search process


def test_a_killed_search_process_is_replaced(served: tuple[str, ServerContext, Path]) -> None:
    base, ctx, _ = served
    pool = _pool(ctx)
    (victim,) = pool.pids
    os.kill(victim, signal.SIGKILL)
    body = {"query": "add an item to the cart", "granularity": "chunk"}
    for _ in range(5):  # answered by the server meanwhile
        response = _search(base, body)
        assert response.status_code == 200, response.text
        assert response.json()["total"] > 0
    assert wait_healthy(base, timeout=240, processes=1)["search_processes"] == 1
    (replacement,) = pool.pids
    assert replacement != victim
    before = pool.answered
    assert _search(base, body).status_code == 200
    assert pool.answered == before + 1


def test_search_processes_end_with_the_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # served from a project folder with its own server.py: the processes must not import it
    (tmp_path / "server.py").write_text("raise SystemExit('the working directory was imported')\n")
    monkeypatch.chdir(tmp_path)
    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False, "search_processes": 2})
    contexts: list[ServerContext] = []
    with serve_in_thread(config, on_ready=contexts.append) as base:
        wait_healthy(base, timeout=240, processes=2)
        pids = _pool(contexts[0]).pids
        assert len(pids) == 2
    deadline = time.monotonic() + 30
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_search_process_that_hangs_is_ended(
    served: tuple[str, ServerContext, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, ctx, _ = served
    pool = _pool(ctx)
    wait_healthy(base, timeout=240, processes=1)
    (stuck,) = pool.pids
    monkeypatch.setattr(search_pool, "ANSWER_SECONDS", 2.0)
    os.kill(stuck, signal.SIGSTOP)  # alive, but never answers
    started = time.monotonic()
    response = _search(base, {"query": "add an item to the cart", "granularity": "chunk"})
    assert response.status_code == 200, response.text  # answered by the server after 2 s
    assert response.json()["total"] > 0
    assert 2.0 <= time.monotonic() - started < 30
    assert wait_healthy(base, timeout=240, processes=1)["search_processes"] == 1
    assert pool.pids != [stuck]
    assert not _alive(stuck) or _zombie(stuck)


def test_a_search_whose_client_goes_away_frees_its_process(served: tuple[str, ServerContext, Path]) -> None:
    base, ctx, _ = served
    pool = _pool(ctx)
    wait_healthy(base, timeout=240, processes=1)
    (child,) = pool.pids
    body = {"query": "add an item to the cart", "granularity": "chunk"}
    cancelled = pool.cancelled
    os.kill(child, signal.SIGSTOP)  # the search waits in the process
    try:
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(f"{base}{API}/search", json=body, timeout=1.0)  # the client gives up, closes
        deadline = time.monotonic() + 10
        while (pool.in_flight or pool.cancelled == cancelled) and time.monotonic() < deadline:
            time.sleep(0.05)
        # forgotten at once (not when the process answers): the next search is not counted
        # behind it, and the index writer no longer yields to it
        assert pool.in_flight == 0
        assert pool.cancelled == cancelled + 1
        time.sleep(0.1)  # (a search that ended counts as activity for 50 ms)
        assert not pool.activity.busy()
    finally:
        os.kill(child, signal.SIGCONT)
    before = pool.answered
    response = _search(base, body)
    assert response.status_code == 200, response.text
    assert pool.answered == before + 1, "answered by the same process"
    assert pool.pids == [child]


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("17", "search_processes must be in 0..16 (got 17)"),
        ("-1", "(got -1)"),
        ("two", "LODE_SEARCH_PROCESSES"),
    ],
)
def test_a_bad_search_processes_setting_is_one_line(tmp_path: Path, value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(env={"LODE_SEARCH_PROCESSES": value})
    env = {"LODE_SEARCH_PROCESSES": value, "LODE_DB": str(tmp_path / "db"), "LODE_PORT": str(free_port())}
    out = CliRunner().invoke(cli, ["serve", "--no-watch"], env=env)
    assert out.exit_code == 2
    assert message in out.output
    assert "Traceback" not in out.output
    assert len(out.output.strip().splitlines()) == 1
    assert not (tmp_path / "db").exists()  # refused before anything was opened
