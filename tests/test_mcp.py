"""MCP tools through the SDK's real client: stdio (``lode mcp`` subprocess, real model),
streamable HTTP (``/mcp`` of a running server), and stdio beside a running server (every
call forwarded to it, nothing written by the stdio process)."""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import make_repo
from live import serve_in_thread
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from indexer.api import Lode
from indexer.config import load_config
from indexer.embed import FakeEmbedder, TokenCounter, load_token_counter
from indexer.writer import current_writer
from server.mcp import TOOLS

#: What an agent pays before asking anything: every listed tool's description and schema.
MAX_SURFACE_CHARS = 6_000
BUDGETS = (200, 500, 1_000, 2_000, 4_000)
#: ``path:start-end  kind name  (score)``, the header of every search result.
HEADER = re.compile(
    r"^(?P<path>[^\s:]+):(?P<start>\d+)(?:-(?P<end>\d+))?  (?P<kind>[a-z_]+)(?: (?P<name>\S+))?"
    r"  \((?P<score>\d+\.\d\d)\)"
)
NUMBERED = re.compile(r"^\s*(\d+)  ")


def big_module(functions: int = 150) -> str:
    """A long Python module (a few thousand tokens) so that every budget cuts something."""
    parts = ['"""Warehouse stock levels: one restock rule per aisle."""\n']
    parts += [
        f"\n\ndef restock_aisle_{n}(levels: dict[str, int], minimum: int = {n % 7 + 2}) -> list[str]:\n"
        f'    """Return the shelves of aisle {n} whose stock fell under the minimum."""\n'
        "    low = [shelf for shelf, count in levels.items() if count < minimum]\n"
        "    low.sort()\n"
        "    return low\n"
        for n in range(functions)
    ]
    return "".join(parts)


def make_agent_repo(dest: Path) -> Path:
    """The fixture repo plus one long module."""
    repo = make_repo(dest)
    (repo / "src" / "shop" / "stock.py").write_text(big_module(), encoding="utf-8")
    return repo


def text_of(result: Any) -> str:
    """The text of a successful tool call."""
    assert not result.is_error, result.content
    assert result.structured_content is None
    return "".join(block.text for block in result.content)


def error_of(result: Any) -> str:
    """The message of a failed tool call."""
    assert result.is_error
    return "".join(block.text for block in result.content)


def headers_of(text: str) -> list[re.Match[str]]:
    """Every search result header of a text answer, and checks its numbered lines."""
    found = []
    current: re.Match[str] | None = None
    for line in text.splitlines():
        header = HEADER.match(line.strip())
        if header:
            current = header
            found.append(header)
            continue
        number = NUMBERED.match(line)
        if number and current is not None:
            start, end = int(current["start"]), int(current["end"] or current["start"])
            assert start <= int(number[1]) <= end, (line, current.group(0))
    return found


def surface_chars(tools: list[Any]) -> int:
    """Characters of every tool's name, description and input schema (compact JSON, as sent)."""
    return sum(
        len(t.name) + len(t.description or "") + len(json.dumps(t.input_schema, separators=(",", ":")))
        for t in tools
    )


async def _tools(client: Client) -> None:
    tools = (await client.list_tools()).tools
    assert [t.name for t in tools] == list(TOOLS)
    assert len(tools) <= 8
    assert surface_chars(tools) <= MAX_SURFACE_CHARS
    for tool in tools:
        assert tool.input_schema["additionalProperties"] is False
        assert "title" not in json.dumps(tool.input_schema)


async def _index(client: Client, repo: Path) -> None:
    registered = text_of(
        await client.call_tool("projects", {"action": "register", "path": str(repo), "name": "shop"})
    )
    assert registered.startswith("registered shop at ")
    deadline = time.monotonic() + 300
    while True:
        status = json.loads(
            text_of(await client.call_tool("projects", {"action": "status", "format": "json"}))
        )
        task = status["results"][0]
        if task["status"] not in ("queued", "running") or time.monotonic() > deadline:
            break
        await anyio.sleep(0.2)
    assert task["status"] == "done", task
    listed = text_of(await client.call_tool("projects", {}))
    assert listed.splitlines()[1].startswith(f"shop  {repo.resolve()}  ")


def _paths(text: str) -> list[str]:
    """The paths of a text answer's result headers (``path:start-end  kind …``)."""
    return re.findall(r"^(\S+):\d+(?:-\d+)?  ", text, re.M)


async def _search(client: Client) -> None:
    found = text_of(
        await client.call_tool(
            "search",
            {"query": "remove a product from the cart", "node_types": ["method"], "languages": ["python"]},
        )
    )
    headers = headers_of(found)
    assert headers
    assert all(h["kind"] == "method" and h["path"].endswith(".py") for h in headers)
    best = headers[0]
    assert (best["path"], best["name"]) == ("src/shop/cart.py", "Cart.remove_item")
    assert "def remove_item" in found
    assert not re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-", found)  # no ids unless asked
    with_ids = text_of(await client.call_tool("search", {"query": "remove_item", "ids": True, "limit": 1}))
    chunk_id = re.search(r"id=(\S+)", with_ids)
    assert chunk_id
    by_id = text_of(await client.call_tool("read", {"id": chunk_id[1]}))
    assert by_id.splitlines()[0].startswith(headers_of(with_ids)[0].group(0).split("  ")[0])
    files = text_of(await client.call_tool("search", {"query": "shopping cart", "granularity": "document"}))
    assert re.match(r"^\S+  file  \(\d\.\d\d\)  \d+ units", files)
    as_json = json.loads(text_of(await client.call_tool("search", {"query": "cart", "format": "json"})))
    assert as_json["results"]
    docs_only = _paths(text_of(await client.call_tool("search", {"query": "cart", "roles": ["docs"]})))
    assert docs_only
    assert all(p.endswith(".md") for p in docs_only), docs_only
    no_docs = _paths(text_of(await client.call_tool("search", {"query": "cart", "exclude_roles": ["docs"]})))
    assert no_docs
    assert not any(p.endswith(".md") for p in no_docs), no_docs
    assert {"path", "start_line", "end_line", "code"} <= set(as_json["results"][0])


async def _symbols(client: Client) -> None:
    """Go to definition (its code numbered within the unit's lines) and find references
    (the definition, then each caller with the lines using the name)."""
    found = text_of(await client.call_tool("find_symbol", {"name": "remove_item"}))
    first, *body = found.splitlines()
    header = re.match(r"^src/shop/cart\.py:(\d+)-(\d+)  method Cart\.remove_item$", first)
    assert header, found
    numbers = [int(NUMBERED.match(line)[1]) for line in body if NUMBERED.match(line)]  # type: ignore[index]
    assert numbers == list(range(int(header[1]), int(header[2]) + 1))
    assert "def remove_item" in found
    qualified = text_of(await client.call_tool("find_symbol", {"name": "Cart.add_item", "kind": "method"}))
    assert re.match(r"^src/shop/cart\.py:\d+-\d+  method Cart\.add_item$", qualified.splitlines()[0])
    fuzzy = json.loads(
        text_of(
            await client.call_tool(
                "find_symbol", {"name": "cart.rmvitem", "match": "fuzzy", "format": "json"}
            )
        )
    )
    assert fuzzy["results"][0]["name"] == "Cart.remove_item"
    assert "def remove_item" in fuzzy["results"][0]["code"]
    refs = text_of(
        await client.call_tool("find_references", {"name": "apply_discount", "from_path": "src/shop/cart.py"})
    )
    lines = refs.splitlines()
    assert re.match(
        r"^defined: src/shop/pricing\.py:\d+-\d+  function apply_discount  \[same_module\]$", lines[0]
    )
    caller = next(i for i, line in enumerate(lines) if "method Cart.total_cents" in line)
    assert re.match(r"^src/shop/cart\.py:\d+-\d+  method Cart\.total_cents  \[same_file\]$", lines[caller])
    assert re.match(r"^\s*\d+  return apply_discount\(", lines[caller + 1])
    none = text_of(await client.call_tool("find_symbol", {"name": "no_such_unit_anywhere"}))
    assert "no definition of 'no_such_unit_anywhere'" in none


async def _read(client: Client) -> None:
    unit = text_of(await client.call_tool("read", {"path": "src/shop/cart.py#Cart.remove_item"}))
    first, *_body = unit.splitlines()
    assert re.match(r"^src/shop/cart\.py:\d+-\d+  method Cart\.remove_item$", first)
    assert "def remove_item" in unit
    lines = text_of(
        await client.call_tool("read", {"path": "src/shop/cart.py", "start_line": 2, "end_line": 4})
    )
    assert lines.splitlines()[0] == "src/shop/cart.py:2-4"
    assert [NUMBERED.match(x)[1] for x in lines.splitlines()[1:]] == ["2", "3", "4"]  # type: ignore[index]


async def _outline(client: Client) -> None:
    root = text_of(await client.call_tool("outline", {}))
    assert "src/  directory" in root
    units = text_of(await client.call_tool("outline", {"path": "src/shop/cart.py"}))
    assert re.search(r"^  src/shop/cart\.py:\d+-\d+  class Cart", units, re.MULTILINE)
    found = text_of(await client.call_tool("outline", {"action": "find", "pattern": "*remove*"}))
    assert re.search(r"^src/shop/cart\.py:\d+-\d+  method Cart\.remove_item", found, re.MULTILINE)
    grep = text_of(await client.call_tool("outline", {"action": "grep", "pattern": r"def remove_\w+"}))
    assert re.search(
        r"^src/shop/cart\.py:\d+  def remove_item\(.*\(in Cart\.remove_item\)$", grep, re.MULTILINE
    )
    cat = text_of(
        await client.call_tool("outline", {"action": "cat", "path": "src/shop/cart.py#Cart.remove_item"})
    )
    assert "def remove_item" in cat


async def _discover(client: Client) -> None:
    prompt = text_of(await client.call_tool("discover", {"question": "what is shop", "max_tokens": 800}))
    assert "[shop:README.md:L" in prompt
    stage = json.loads(
        text_of(await client.call_tool("discover", {"question": "what is shop", "stage": "expand_queries"}))
    )
    assert "what is shop" in stage["queries"]


async def _budgets(client: Client, counter: TokenCounter) -> None:
    """Each budget holds (counted with the named tokenizer); an answer that left results out
    used most of it and says how to get the rest."""
    calls = [
        ("search", {"query": "restock the shelves of an aisle", "limit": 100}, True),
        ("search", {"query": "restock", "granularity": "document", "limit": 20}, False),
        ("find_symbol", {"name": "restock_aisle_*", "match": "glob"}, True),
        ("find_references", {"name": "sort"}, True),
        ("read", {"path": "src/shop/stock.py"}, True),
        ("outline", {"action": "grep", "pattern": "def restock"}, False),
        ("discover", {"question": "how are aisles restocked"}, False),
    ]
    for name, args, always_cut in calls:
        for budget in BUDGETS:
            text = text_of(await client.call_tool(name, {**args, "max_tokens": budget}))
            used = counter.count(text)
            assert used <= budget, (name, budget, used)
            cut = re.search(r"left out|not shown", text)
            assert cut or not always_cut, (name, budget, text[-300:])
            if cut and name != "discover":
                assert re.search(r"offset=|start_line=|narrower|larger max_tokens|read them", text)
            if re.search(r"more (results )?left out|lines \d+-\d+ not shown", text):
                assert used >= 0.8 * budget, (name, budget, used)


async def _bad_arguments(client: Client) -> None:
    bad = [
        ("search", {"query": "cart", "limit": 0}, "limit"),
        ("search", {"query": "cart", "node_types": ["gizmo"]}, "node_types"),
        ("search", {"query": "cart", "projects": ["nope"]}, "projects"),
        ("search", {"query": "cart", "path_include": ["src/[z-a]*"]}, "path_include"),
        ("search", {"query": "cart", "limt": 3}, "limt"),
        ("search", {"query": "cart", "roles": ["tests"]}, "roles"),
        ("search", {"query": "cart", "max_tokens": 5}, "max_tokens"),
        ("find_symbol", {"name": "  "}, "name"),
        ("find_symbol", {"name": "Cart", "kind": "gizmo"}, "kind"),
        ("find_symbol", {"name": "Cart", "match": "sounds-like"}, "match"),
        ("find_symbol", {"name": "Cart", "project": "nope"}, "project"),
        ("find_references", {"name": ""}, "name"),
        ("find_references", {"name": "Cart", "max_tokens": 10}, "max_tokens"),
        ("find_references", {"name": "Cart", "language": "go"}, "language"),
        ("read", {"path": "src/shop/cart.py", "start_line": 0}, "start_line"),
        ("read", {"path": "src/nope.py"}, "path"),
        ("read", {}, "path"),
        ("outline", {"action": "ls", "path": "nope"}, "path"),
        ("outline", {"action": "fly"}, "action"),
        ("outline", {"action": "grep", "pattern": "(a"}, "pattern"),
        ("discover", {"question": "what is shop", "stage": "nope"}, "stage"),
        ("discover", {"question": "x", "stage": "promote_readme", "input": {"chunks": 3}}, "input.chunks"),
        ("projects", {"action": "reindex", "project": "nope"}, "project"),
        ("projects", {"action": "register", "path": "/nope/nowhere"}, "path"),
    ]
    for name, args, field in bad:
        message = error_of(await client.call_tool(name, args))
        assert field in message, (name, args, message)
    # the session survived every error
    assert "shop" in text_of(await client.call_tool("projects", {}))


async def _unknown_tool(client: Client) -> None:
    """A tool name lode does not have (the tools before issue 30 included) is an error naming it."""
    for name in ("search_code", "list_projects", "outline_ls", "expand_queries"):
        message = error_of(await client.call_tool(name, {}))
        assert f"unknown tool {name!r}" in message, message
        assert "search, find_symbol" in message


async def _exercise(client: Client, repo: Path) -> None:
    counter = load_token_counter()
    await _tools(client)
    await _index(client, repo)
    await _search(client)
    await _symbols(client)
    await _read(client)
    await _outline(client)
    await _discover(client)
    await _budgets(client, counter)
    await _bad_arguments(client)
    await _unknown_tool(client)


def _stdio(db: Path, **env: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "server", "mcp", "--no-watch"],
        env={**os.environ, "LODE_DB": str(db), "HF_HUB_OFFLINE": "1", **env},
    )


@pytest.mark.slow
def test_mcp_over_stdio_with_the_real_model(tmp_path: Path) -> None:
    repo = make_agent_repo(tmp_path / "repo")
    errlog = tmp_path / "stderr.txt"

    async def main() -> None:
        with errlog.open("w") as err:
            async with Client(
                stdio_client(_stdio(tmp_path / "db"), errlog=err), read_timeout_seconds=300
            ) as client:
                assert "forwards" not in (client.instructions or "")
                await _exercise(client, repo)

    anyio.run(main)
    # nothing but the protocol on stdout (else the client fails), nothing but lode's own
    # log lines on stderr (a tool error is the agent's business, not a log line)
    chatter = [line for line in errlog.read_text().splitlines() if not line.startswith("lode mcp: ")]
    assert chatter == []


def test_mcp_over_http(tmp_path: Path) -> None:
    repo = make_agent_repo(tmp_path / "repo")
    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False})
    with serve_in_thread(config, FakeEmbedder()) as base:

        async def main() -> None:
            async with Client(f"{base}/mcp", read_timeout_seconds=120) as client:
                await _exercise(client, repo)

        anyio.run(main)


def _table_versions(db: Path) -> dict[str, list[str]]:
    """Every table's committed versions (Lance writes a manifest per version)."""
    return {
        table.name: sorted(p.name for p in (table / "_versions").iterdir()) for table in db.glob("*.lance")
    }


def _settled_versions(db: Path, quiet: float = 6.0, timeout: float = 90.0) -> dict[str, list[str]]:
    """The tables' versions once none changed for ``quiet`` seconds (a server just started
    creates its missing indexes and folds rows in: its writes, not a client's)."""
    deadline = time.monotonic() + timeout
    last, since = _table_versions(db), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.25)
        now = _table_versions(db)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return now
    raise AssertionError("the server's tables kept changing")


def _children() -> Iterator[int]:
    """This process's child processes (Linux ``/proc``)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():
            yield int(stat.parent.name)


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc to see what the child loaded")
@pytest.mark.slow
def test_stdio_beside_a_running_server_forwards_every_call_and_writes_nothing(tmp_path: Path) -> None:
    repo = make_agent_repo(tmp_path / "repo")
    db = tmp_path / "db"
    config = load_config(env={}, overrides={"db": db, "enabled": False})
    lode = Lode(config, embedder=FakeEmbedder())
    lode.index(repo, name="shop")  # indexed and optimized before the server starts: it stays idle
    lode.close()
    calls = [
        ("search", {"query": "remove a product from the cart"}),
        ("read", {"path": "src/shop/cart.py#Cart.remove_item"}),
        ("outline", {"action": "grep", "pattern": "def remove"}),
        ("find_symbol", {"name": "remove_item"}),
        ("find_references", {"name": "apply_discount"}),
        ("discover", {"question": "what is shop", "max_tokens": 500}),
        ("projects", {}),
    ]
    with serve_in_thread(config, FakeEmbedder()) as base:
        writer = current_writer(db)
        assert writer is not None
        assert writer.pid == os.getpid()
        assert writer.url == base

        async def main() -> None:
            with tempfile.TemporaryFile("w+") as err:
                async with Client(stdio_client(_stdio(db), errlog=err), read_timeout_seconds=60) as client:
                    assert f"forwards every tool call to the lode server at {base}" in (
                        client.instructions or ""
                    )
                    await _tools(client)
                    before = _settled_versions(db)  # the server's own start-up maintenance done
                    for name, args in calls:
                        assert text_of(await client.call_tool(name, args))
                    after = _table_versions(db)
                    assert after == before, {
                        k: (before.get(k), v) for k, v in after.items() if before.get(k) != v
                    }
                    error = error_of(await client.call_tool("search", {"query": "cart", "limit": 0}))
                    assert "limit" in error
                    # (the session may have other children: the local S3 server of an earlier test)
                    (child,) = [
                        pid for pid in _children() if b"mcp" in Path(f"/proc/{pid}/cmdline").read_bytes()
                    ]
                    maps = Path(f"/proc/{child}/maps").read_text()
                    assert "lancedb" not in maps
                    assert "libtorch" not in maps
                    queued = text_of(
                        await client.call_tool("projects", {"action": "reindex", "project": "shop"})
                    )
                    assert queued.startswith("re-index of shop queued")
                assert current_writer(db) == writer

        anyio.run(main)
