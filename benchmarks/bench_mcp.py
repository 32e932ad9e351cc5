"""MCP for agents: what an answer costs, what it finds, and how soon the first one comes.

1. **answers**: 20 fixed agent questions over click (its source as published, indexed
   once): bytes and tokens per answer (the model's word-pieces, the tokenizer answers are
   budgeted with), each with the tools' default arguments, and the size of the tool list
   (descriptions and input schemas). (Until the old 27 tools were removed, the same
   questions were asked of them too: docs/mcp.md keeps that comparison.)
2. **recall**: for the quality benchmark's queries (doc comment → unit, doc comments
   blanked), the share whose target unit is in the answer cut at 500, 1,000, 2,000 and
   4,000 tokens: ``search`` and grep-then-read (``benchmarks/_mcp_recall.py`` says how
   each is counted).
3. **latency** (timing: run it on a quiet machine): the first ``search`` after
   ``initialize`` of ``lode mcp`` over stdio on the indexed project, alone and beside a
   running ``lode serve`` (every call forwarded), in fresh processes.

Writes ``benchmarks/results/mcp.json`` and prints markdown tables.

Example:
    .venv/bin/python -m benchmarks.bench_mcp --quick
    .venv/bin/python -m benchmarks.bench_mcp --quick --no-latency --corpus click --corpus cobra
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks._mcp_recall import BUDGETS, measure_recall, summarize
from benchmarks.quality.corpora import CORPORA, cache_dir, fetch_corpus, read_corpus

RESULTS = Path(__file__).parent / "results"
QUICK_PAIRS = 100
QUICK_CORPORA = ("click", "cobra", "commander")


@dataclass(frozen=True, slots=True)
class Question:
    """One agent question: the tool call an agent makes for it."""

    text: str
    tool: str
    args: dict[str, Any]


def questions() -> list[Question]:
    """The 20 questions (8 searches, 4 reads, 4 outline steps, 2 discoveries, 2 project looks)."""
    searches = [
        "where are command line options parsed",
        "how is a boolean flag with a --no- secondary name handled",
        "ask the user to confirm before continuing",
        "read a default value from an environment variable",
        "generate shell completion for bash",
        "wrap help text into columns",
        "invoke a subcommand of a group",
        "get_terminal_size",
    ]
    out = [Question(q, "search", {"query": q}) for q in searches]
    out += [
        Question("read Context.scope", "read", {"path": "src/click/core.py#Context.scope"}),
        Question("read decorators.py", "read", {"path": "src/click/decorators.py"}),
        Question("read parser.py lines 1-120", "read", {"path": "src/click/parser.py", "start_line": 1, "end_line": 120}),
        Question("read termui.prompt", "read", {"path": "src/click/termui.py#prompt"}),
        Question("list src/click", "outline", {"path": "src/click"}),
        Question("units of core.py", "outline", {"path": "src/click/core.py"}),
        Question("find *complete*", "outline", {"action": "find", "pattern": "*complete*"}),
        Question("grep def get_ in core.py", "outline", {"action": "grep", "pattern": r"def get_\w+", "path": "src/click/core.py"}),
        Question("what is click", "discover", {"question": "what is click"}),
        Question("how are errors reported", "discover", {"question": "how does click report usage errors"}),
        Question("which projects", "projects", {}),
        Question("indexing status", "projects", {"action": "status"}),
    ]  # fmt: skip
    return out


def _size(result: Any, counter: Any) -> dict[str, Any]:
    text = "".join(getattr(b, "text", "") for b in result.content)
    wire = result.model_dump_json(by_alias=True, exclude_none=True)
    return {"bytes": len(text.encode()), "tokens": counter.count(text), "wire_bytes": len(wire.encode()),
            "error": bool(result.is_error)}  # fmt: skip


def _surface(tools: list[Any]) -> dict[str, int]:
    chars = sum(
        len(t.name) + len(t.description or "") + len(json.dumps(t.input_schema, separators=(",", ":")))
        for t in tools
    )
    return {"tools": len(tools), "chars": chars}


def measure_answers(ctx: Any) -> dict[str, Any]:
    """Each question asked of the tools: its answer's size; and the tool list's size."""
    import anyio
    from mcp import Client

    from server.mcp import build_mcp

    counter = ctx.token_counter()
    rows: dict[str, Any] = {}

    async def main() -> dict[str, Any]:
        async with Client(build_mcp(lambda: ctx)) as client:
            surface = _surface((await client.list_tools()).tools)
            for q in questions():
                size = _size(await client.call_tool(q.tool, q.args), counter)
                rows[q.text] = {"tool": q.tool, "bytes": size["bytes"], "tokens": size["tokens"],
                                "wire_bytes": size["wire_bytes"], "error": size["error"]}  # fmt: skip
            return surface

    surface = anyio.run(main)
    totals = {key: sum(r[key] for r in rows.values()) for key in ("bytes", "tokens", "wire_bytes")}
    return {"tool_list": surface, "answers": rows, "answers_total": totals}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _first_call_ms(db: Path, runs: int) -> list[float]:
    """Milliseconds from ``initialize`` done to the first ``search`` answered, fresh ``lode mcp``
    processes over stdio."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "server", "mcp", "--no-watch"],
        env={**os.environ, "LODE_DB": str(db), "HF_HUB_OFFLINE": "1"},
    )

    async def once() -> float:
        async with Client(params, read_timeout_seconds=120) as client:
            started = time.perf_counter()
            result = await client.call_tool("search", {"query": "parse command line options"})
            took = (time.perf_counter() - started) * 1000
            assert not result.is_error, result.content
            return took

    return [round(anyio.run(once), 1) for _ in range(runs)]


def measure_latency(db: Path, runs: int) -> dict[str, Any]:
    """First-call latency of ``lode mcp`` alone, then beside a running ``lode serve``."""
    import httpx

    out: dict[str, Any] = {}
    alone = _first_call_ms(db, runs)
    out["stdio alone"] = {"p50_ms": statistics.median(alone), "max_ms": max(alone), "runs_ms": alone}
    port = _free_port()
    # the server's discovery file (its URL and per-user token), where ``lode mcp`` finds it,
    # in a folder of its own: not the one of a lode service this user may run
    runtime = Path(tempfile.mkdtemp(prefix="lode-bench-mcp-runtime-"))
    os.environ["LODE_RUNTIME_DIR"] = str(runtime)
    server = subprocess.Popen(
        [sys.executable, "-m", "server", "serve", "--db", str(db), "--port", str(port), "--no-watch"],
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).json().get("model_loaded"):
                    break
            except (httpx.HTTPError, ValueError):
                pass
            time.sleep(0.5)
        beside = _first_call_ms(db, runs)
        out["stdio beside a server"] = {
            "p50_ms": statistics.median(beside),
            "max_ms": max(beside),
            "runs_ms": beside,
        }
    finally:
        server.terminate()
        server.wait(timeout=60)
        del os.environ["LODE_RUNTIME_DIR"]
        shutil.rmtree(runtime, ignore_errors=True)
    return out


def _index_click(db: Path, embedder: Any) -> Path:
    """click's source as published, indexed as project ``click``; returns its folder."""
    from indexer.api import Lode
    from indexer.config import load_config

    spec = next(c for c in CORPORA if c.name == "click")
    root = db.parent / "click"
    for rel, data in read_corpus(fetch_corpus(spec), spec, full=False).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    lode = Lode(load_config(overrides={"db": db, "enabled": False}), embedder=embedder)
    lode.index(root, name="click")
    lode.close()
    return root


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    profile = parser.add_mutually_exclusive_group()
    profile.add_argument(
        "--quick", action="store_true", help=f"{', '.join(QUICK_CORPORA)}; ≤{QUICK_PAIRS} pairs each"
    )
    profile.add_argument("--full", action="store_true", help="every corpus, every pair")
    parser.add_argument(
        "--corpus", action="append", choices=[c.name for c in CORPORA], help="recall: only these"
    )
    parser.add_argument("--limit", type=int, help="recall: pairs per corpus")
    parser.add_argument("--runs", type=int, default=5, help="latency: fresh processes per setting")
    parser.add_argument("--no-latency", action="store_true", help="skip the timing part")
    parser.add_argument("--no-recall", action="store_true", help="skip the recall part")
    parser.add_argument("--output", type=Path, default=RESULTS / "mcp.json")
    return parser.parse_args()


def to_markdown(result: dict[str, Any]) -> str:
    """The answers, recall and latency tables."""
    lines = ["| question | tool | tokens | bytes |", "| --- | --- | ---: | ---: |"]
    for text, row in result["answers"].items():
        lines.append(f"| {text} | {row['tool']} | {row['tokens']} | {row['bytes']} |")
    total = result["answers_total"]
    lines.append(f"| **all 20** | | **{total['tokens']}** | **{total['bytes']}** |")
    surface = result["tool_list"]
    lines += ["", f"tool list: {surface['tools']} tools, {surface['chars']} characters"]
    if "recall" in result:
        recall = result["recall"]
        lines += ["", f"recall at a token budget ({recall['pairs']} queries)", "",
                  "| method | " + " | ".join(str(b) for b in BUDGETS) + " |",
                  "| --- |" + " ---: |" * len(BUDGETS)]  # fmt: skip
        for method, by_budget in recall["recall"].items():
            lines.append(f"| {method} | " + " | ".join(f"{by_budget[str(b)]:.1%}" for b in BUDGETS) + " |")
    for setting, figures in result.get("first_call", {}).items():
        lines.append(
            f"\nfirst call, {setting}: p50 {figures['p50_ms']:.0f} ms, max {figures['max_ms']:.0f} ms"
        )
    return "\n".join(lines)


def main() -> int:
    """Run the benchmark, write its JSON and print its tables."""
    args = _parse_args()
    started = time.perf_counter()
    from benchmarks._vector_cache import CachedEmbedder
    from indexer.config import load_config
    from indexer.embed import load_embedder
    from server.context import open_context

    config = load_config()
    model = load_embedder(config.embed)
    model.query_graph()  # exported into the cache: lode mcp embeds queries without torch
    embedder = CachedEmbedder(model, cache_dir() / "vectors" / "quality.sqlite")
    result: dict[str, Any] = {
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
        "tokenizer": "",
    }
    with tempfile.TemporaryDirectory(prefix="lode-bench-mcp-") as tmp:
        db = Path(tmp) / "db"
        _index_click(db, embedder)
        ctx = open_context(load_config(overrides={"db": db, "enabled": False}), embedder=embedder, warm=False,
                           command="bench_mcp")  # fmt: skip
        try:
            result["tokenizer"] = ctx.token_counter().name
            result.update(measure_answers(ctx))
        finally:
            ctx.close()
        if not args.no_latency:
            result["first_call"] = measure_latency(db, args.runs)
    if not args.no_recall:
        names = args.corpus or ([c.name for c in CORPORA] if args.full else list(QUICK_CORPORA))
        limit = args.limit if args.limit is not None else (None if args.full else QUICK_PAIRS)
        specs = [c for c in CORPORA if c.name in names]
        result["recall"] = summarize(measure_recall(specs, embedder, limit=limit))
    result["seconds"] = round(time.perf_counter() - started, 1)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(to_markdown(result))
    print(f"bench_mcp: {result['seconds']} s; wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
