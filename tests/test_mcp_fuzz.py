"""Every MCP tool fuzzed from its own published input schema (hypothesis): random and
boundary arguments (empty, huge, NUL, paths leaving the project, numbers as text, wrong
types, lists over the limits, unknown names), sent through the SDK's real client to the
real app served in this process. No call crashes a tool (no ``Error executing tool``, no
exception logged), and every answer, errors included, fits its ``max_tokens`` counted
with the tokenizer the tools count with, without the last-resort cut having to act."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import httpx
import pytest
from conftest import make_repo
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from live import serve_in_thread, wait_task
from mcp import Client

from indexer.config import load_config
from indexer.embed import FakeEmbedder, TokenCounter, load_token_counter
from indexer.limits import MAX_GLOBS, MAX_NAMES
from server.mcp import TOOLS
from server.mcp._params import MAX_TOKENS_LIMIT, MIN_TOKENS

#: Texts that have broken something once, or sit on a limit.
BOUNDARY_TEXTS = [
    "", " ", "\x00", "a\x00b", "x" * 5_000, "ab." * 2_000, "../x", "/etc/passwd", "\\x", "~",
    "src/shop/cart.py", "src/shop/cart.py#Cart.remove_item", "src/shop/cart.py#" + "A." * 3_000,
    "Cart", "shop", "remove_item", "*", "**", "[z-a]", "(a", "\u2603" * 300, "\ud7ff\ue000", "0", "null",
    "shop,shop", "class,method", "src/**", "README.md", "'; DROP TABLE x; --", "%00", "a" * 4_097,
]  # fmt: skip
BOUNDARY_INTS = [0, -1, 1, 2, 5, 6, 99, 100, 101, 1_000, 10_000, 100_000, 100_001, 2**31, -(2**63), 2**64]
#: Plausible values by argument name (what an agent would send), so that most calls answer.
PLAUSIBLE: dict[str, list[Any]] = {
    "query": ["cart", "remove an item from the cart", "apply_discount", "parse http request", "Cart"],
    "question": ["what is shop", "how are discounts applied"],
    "name": ["Cart", "remove_item", "Cart.add_item", "apply_discount", "rmvitem", "Cart*", "shop"],
    "pattern": ["*cart*", "Cart*", "def \\w+", "return", "(?i)total", "*"],
    "path": ["src/shop/cart.py", "src/shop/cart.py#Cart.remove_item", "src", "src/shop", "README.md", "docs"],
    "from_path": ["src/shop/cart.py", "src/shop/pricing.py", "README.md"],
    "project": ["shop"], "projects": ["shop"], "include": ["sh*", "*"], "exclude": ["nope*"],
    "kind": ["method", "class", "function", "class,method", "section"],
    "languages": ["python", "go", "markdown", "rust"], "node_types": ["function", "method", "class", "section"],
    "roles": ["implementation", "test", "docs"], "exclude_roles": ["docs", "test"],
    "path_include": ["src/**", "*.py", "src/shop/*"], "path_exclude": ["*.md", "tests/**"],
    "has_definitions": ["Cart", "apply_discount"], "has_references": ["apply_discount", "Cart"],
    "node_name_pattern": ["*item*", "Cart"], "parent_context_pattern": ["class Cart*"],
    "paths": ["src/shop/cart.py", "README.md"], "stage": ["expand_queries", "filter_projects", "score_projects"],
    "max_tokens": [100, 150, 200, 300, 500, 1_000, 2_000], "limit": [1, 3, 10, 50], "offset": [0, 1, 5],
    "depth": [1, 2, 3, 5], "start_line": [1, 2, 10, 30], "end_line": [1, 5, 40], "max_bullets": [1, 3, 8],
    "scope_depth": [[0, 1], [1, 3], [0, 0]],
}  # fmt: skip


def _text() -> st.SearchStrategy[Any]:
    return st.one_of(st.text(max_size=40), st.sampled_from(BOUNDARY_TEXTS))


def _wrong() -> st.SearchStrategy[Any]:
    """A value of another JSON type than the schema's (or a number given as text)."""
    return st.sampled_from([None, 1, 1.5, True, "100", "true", [], {}, ["x"], {"a": 1}])


def _integer(name: str) -> st.SearchStrategy[Any]:
    if name == "max_tokens":
        return st.one_of(st.integers(MIN_TOKENS, 400), st.integers(MIN_TOKENS, MAX_TOKENS_LIMIT),
                         st.sampled_from(BOUNDARY_INTS))  # fmt: skip
    return st.one_of(st.integers(-5, 200), st.sampled_from(BOUNDARY_INTS))


def _array(items: dict[str, Any]) -> st.SearchStrategy[Any]:
    item = st.integers(-3, 10) if items.get("type") == "integer" else _text()
    return st.one_of(
        st.lists(item, max_size=4),
        st.sampled_from([["x"] * (MAX_GLOBS + 1), ["x"] * (MAX_NAMES + 1), ["src/*.py"] * 5_000]),
        st.lists(item, max_size=3).map(json.dumps),  # a list sent as JSON text
    )


def _value(name: str, schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    if "enum" in schema:
        good: st.SearchStrategy[Any] = st.sampled_from(schema["enum"])
        return st.one_of(good, good, _text(), _wrong())
    kind = schema.get("type")
    strategies = {
        "string": _text(),
        "integer": _integer(name),
        "boolean": st.booleans(),
        "array": _array(schema.get("items", {})),
        "object": st.dictionaries(_text(), st.one_of(_text(), st.integers(), st.lists(_text(), max_size=2)),
                                  max_size=3),
    }  # fmt: skip
    return st.one_of(strategies.get(kind, _text()), strategies.get(kind, _text()), _wrong())


def _plausible(name: str, schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """A value an agent would send (so the call answers and its answer is what is fitted)."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "boolean":
        return st.booleans()
    if kind == "object":
        return st.just({})
    if name in PLAUSIBLE:
        values = st.sampled_from(PLAUSIBLE[name])
        return (
            st.lists(values, min_size=1, max_size=3) if kind == "array" and name != "scope_depth" else values
        )
    return (
        st.lists(st.just("x"), max_size=1) if kind == "array" else st.text("abcxyz_", min_size=1, max_size=8)
    )


#: Arguments a plausible call leaves out (an id or a stage's input is not made up).
_NOT_PLAUSIBLE = {"id", "stage", "input", "config"}


def _fields(schema: dict[str, Any], value: Any, skip: set[str] | frozenset[str] = frozenset()) -> Any:
    properties = {k: v for k, v in schema["properties"].items() if k not in skip}
    optional = {name: value(name, prop) for name, prop in properties.items()}
    wanted = [*schema.get("required", []), *(["path"] if skip and "start_line" in properties else [])]
    required = {name: optional.pop(name) for name in wanted}
    return st.fixed_dictionaries(required, optional=optional)


def arguments(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Arguments for a tool from its input schema: plausible ones (two calls in three),
    or any of its properties random or on a boundary, now and then with an unknown one."""
    unknown = st.dictionaries(st.sampled_from(["nope", "limt", "x" * 500]), st.just(1), max_size=1)
    fuzzed = st.builds(
        lambda given, extra: {**given, **extra},
        _fields(schema, _value),
        st.one_of(st.just({}), st.just({}), st.just({}), unknown),
    )
    plausible = _fields(schema, _plausible, _NOT_PLAUSIBLE)
    return st.one_of(plausible, plausible, fuzzed)


def budget(schema: dict[str, Any], args: dict[str, Any]) -> int:
    """The budget an answer to ``args`` must fit: ``max_tokens`` when valid, the tool's
    default when absent, the smallest budget when invalid."""
    if "max_tokens" not in args:
        return int(schema["properties"]["max_tokens"]["default"])
    given = args["max_tokens"]
    ok = type(given) is int and MIN_TOKENS <= given <= MAX_TOKENS_LIMIT
    return given if ok else MIN_TOKENS


def _exists(path: str) -> bool:
    try:
        return Path(path.strip() or ".").expanduser().exists()
    except (OSError, ValueError):
        return False


class _Records(logging.Handler):
    """Warnings and errors logged while the fuzzing runs."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Any, dict[str, Any], str]]:
    """(portal, MCP client, tool schemas, base URL) of a server with the fixture repo as ``shop``."""
    base_dir = tmp_path_factory.mktemp("mcp-fuzz")
    repo = make_repo(base_dir / "repo")
    config = load_config(env={}, overrides={"db": base_dir / "db", "enabled": False})
    with serve_in_thread(config, FakeEmbedder()) as base:
        created = httpx.post(f"{base}/api/v1/projects", json={"path": str(repo), "name": "shop"})
        assert wait_task(base, created.json()["task_id"])["status"] == "done"
        with anyio.from_thread.start_blocking_portal() as portal:
            client_cm = Client(f"{base}/mcp", read_timeout_seconds=120)
            with portal.wrap_async_context_manager(client_cm) as client:
                schemas = {t.name: t.input_schema for t in portal.call(client.list_tools).tools}
                yield portal, client, schemas, base


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return load_token_counter()


@pytest.mark.parametrize("tool", TOOLS)
def test_every_tool_survives_random_and_boundary_arguments_within_its_budget(
    session: tuple[Any, Any, dict[str, Any], str], counter: TokenCounter, tool: str
) -> None:
    portal, client, schemas, base = session
    schema = schemas[tool]
    records = _Records()
    watched = [logging.getLogger(n) for n in ("mcp.server.mcpserver.server", "server.mcp._guard", "server")]
    for logger in watched:
        logger.addHandler(records)

    @settings(max_examples=50, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])  # fmt: skip
    @given(arguments(schema))
    def call(args: dict[str, Any]) -> None:
        path = args.get("path")
        if tool == "projects" and isinstance(path, str):  # never register a real folder (., /tmp…)
            assume(not _exists(path))
        result = portal.call(client.call_tool, tool, args)
        text = "".join(getattr(block, "text", "") for block in result.content)
        assert text, (tool, args)
        assert "Error executing tool" not in text, (tool, args, text[:300])
        used, allowed = counter.count(text), budget(schema, args)
        assert used <= allowed, (tool, {k: str(v)[:60] for k, v in args.items()}, used, allowed, text[:300])

    try:
        call()
    finally:
        for logger in watched:
            logger.removeHandler(records)
    assert [r.getMessage()[:300] for r in records.records] == []
    assert httpx.get(f"{base}/health").status_code == 200
