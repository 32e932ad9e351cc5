"""MCP tools through the SDK's real client: stdio (``lode mcp`` subprocess, real model)
and streamable HTTP (``/mcp`` of a running server)."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import make_repo
from live import serve_in_thread
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from indexer.config import load_config
from indexer.embed import FakeEmbedder

TOOLS = {
    "search_code",
    "list_projects",
    "register_project",
    "reindex_project",
    "index_status",
    "get_document",
    "get_chunk",
}


def _data(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return dict(result.structured_content)
    return dict(json.loads(result.content[0].text))


async def _exercise(client: Client, repo: Path) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) >= TOOLS
    assert "node_types" in tools["search_code"].input_schema["properties"]
    assert tools["search_code"].description

    registered = _data(await client.call_tool("register_project", {"path": str(repo), "name": "shop"}))
    task_id = registered["task_id"]
    deadline = time.monotonic() + 180
    while True:
        task = _data(await client.call_tool("index_status", {"task_id": task_id}))["task"]
        if task["status"] not in ("queued", "running") or time.monotonic() > deadline:
            break
        await anyio.sleep(0.2)
    assert task["status"] == "done", task

    projects = _data(await client.call_tool("list_projects", {}))["projects"]
    assert [p["name"] for p in projects] == ["shop"]

    found = _data(
        await client.call_tool(
            "search_code",
            {"query": "remove a product from the cart", "granularity": "chunk", "node_types": ["method"],
             "languages": ["python"], "limit": 3},
        )
    )  # fmt: skip
    hits = [h for g in found["groups"] for h in g["chunks"]]
    assert hits
    assert all(h["node_type"] == "method" and h["language"] == "python" for h in hits)
    best = max(hits, key=lambda h: h["relevance_score"])
    assert best["node_name"] == "remove_item"

    doc = _data(await client.call_tool("get_document", {"project": "shop", "path": best["file_path"],
                                                         "start_line": best["start_line"], "end_line": best["end_line"]}))  # fmt: skip
    assert "def remove_item" in doc["text"]
    assert doc["text"].lstrip().startswith(str(best["start_line"]))
    chunk = _data(await client.call_tool("get_chunk", {"chunk_id": best["id"]}))
    assert chunk["node_name"] == "remove_item"

    small = _data(
        await client.call_tool("search_code", {"query": "cart", "file_limit": 10, "max_tokens": 50})
    )
    assert small["truncated"] is True
    assert len(small["documents"]) == 1

    bad = await client.call_tool("search_code", {"query": "cart", "limit": 0})
    assert bad.is_error
    assert "limit" in bad.content[0].text
    unknown = await client.call_tool("search_code", {"query": "cart", "projects": ["nope"]})
    assert unknown.is_error
    assert "projects" in unknown.content[0].text
    for field, value in (
        ("languages", ["klingon"]),
        ("path_include", ["src/[z-a]*"]),
        ("node_types", ["gizmo"]),
    ):
        invalid = await client.call_tool("search_code", {"query": "cart", field: value})
        assert invalid.is_error, field
        assert field in invalid.content[0].text
    missing = await client.call_tool("get_document", {"document_id": "nope"})
    assert missing.is_error
    # the session survived the errors
    again = _data(await client.call_tool("list_projects", {}))
    assert again["projects"]


@pytest.mark.slow
def test_mcp_over_stdio_with_the_real_model(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "server", "mcp", "--no-watch"],
        env={**os.environ, "LODE_DB": str(tmp_path / "db"), "HF_HUB_OFFLINE": "1"},
    )

    async def main() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            await _exercise(client, repo)

    anyio.run(main)


def test_mcp_over_http(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False})
    with serve_in_thread(config, FakeEmbedder()) as base:

        async def main() -> None:
            async with Client(f"{base}/mcp", read_timeout_seconds=60) as client:
                await _exercise(client, repo)

        anyio.run(main)


def test_mcp_over_http_has_the_body_limit(tmp_path: Path) -> None:
    """``/mcp`` is mounted beside the routes, where Litestar's body limit does not reach:
    a body over ``max_body_bytes`` is a 413 in lode's error shape, declared or streamed."""
    import httpx

    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False, "max_body_bytes": 4096})
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    big = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "' + b"x" * 8000 + b'"}}'
    with serve_in_thread(config, FakeEmbedder()) as base:
        declared = httpx.post(f"{base}/mcp/", content=big, headers=headers)
        assert declared.status_code == 413
        assert declared.json()["status_code"] == 413

        def streamed() -> Iterator[bytes]:
            yield big[:3000]
            yield big[3000:]

        chunked = httpx.post(f"{base}/mcp/", content=streamed(), headers=headers)
        assert chunked.status_code == 413
        small = httpx.post(
            f"{base}/mcp/",
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            },
            headers=headers,
        )
        assert small.status_code == 200, small.text
