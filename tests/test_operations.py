"""The one list of operations (``indexer.operations``) against the front ends: every HTTP
route, MCP tool and CLI command serves a listed operation, every adapter the list names
exists, every operation's Python API exists, and the code map in ``docs/architecture.md``
is the one the list makes."""

from __future__ import annotations

import asyncio
import importlib
from pathlib import Path

import click
import pytest
from test_cli import iter_commands

from indexer.config import load_config
from indexer.operations import OPERATIONS
from server.app import create_app
from server.cli import cli
from server.mcp import build_mcp

#: Front-end commands and probes: not operations (see ``indexer.operations``).
NOT_OPERATIONS = {"lode serve", "lode watch", "lode mcp", "health"}
ARCHITECTURE = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"


def _route_ids(tmp_path: Path) -> set[str]:
    app = create_app(load_config(env={}, overrides={"db": tmp_path / "db"}))
    ids = set()
    for route in app.routes:
        for handler in getattr(route, "route_handlers", []):
            if handler.include_in_schema is not False and handler.operation_id:
                ids.add(str(handler.operation_id))
    return ids


def _commands() -> set[str]:
    return {
        " ".join(("lode", *path))
        for path, command in iter_commands(cli)
        if path and not isinstance(command, click.Group)
    }


def test_names_are_unique() -> None:
    names = [op.name for op in OPERATIONS]
    assert len(names) == len(set(names))


def test_every_route_serves_one_operation(tmp_path: Path) -> None:
    served = [route for op in OPERATIONS for route in op.http]
    assert len(served) == len(set(served))
    assert set(served) == _route_ids(tmp_path) - NOT_OPERATIONS


def test_every_tool_serves_an_operation() -> None:
    tools = {tool.name for tool in asyncio.run(build_mcp(lambda: None).list_tools())}  # type: ignore[arg-type]
    named = {entry.split()[0] for op in OPERATIONS for entry in op.mcp}
    assert named == tools


def test_every_command_serves_an_operation() -> None:
    named = {command for op in OPERATIONS for command in op.cli}
    assert named == _commands() - NOT_OPERATIONS


@pytest.mark.parametrize("op", OPERATIONS, ids=[op.name for op in OPERATIONS])
def test_the_python_api_of_an_operation_exists(op: object) -> None:
    module, _, rest = op.python.partition(".")  # type: ignore[attr-defined]
    parts = op.python.split(".")  # type: ignore[attr-defined]
    for cut in range(len(parts) - 1, 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            target = getattr(target, name)
        assert callable(target) or isinstance(target, property)
        return
    pytest.fail(f"{op.python} does not resolve ({module}.{rest})")  # type: ignore[attr-defined]


def code_map() -> str:
    """The code map's table, made from the list."""
    rows = [
        "| operation | Python API | HTTP (operation id) | MCP | CLI |",
        "| --- | --- | --- | --- | --- |",
    ]
    for op in OPERATIONS:
        cells = [
            f"`{op.name}`",
            f"`{op.python}`",
            ", ".join(f"`{r}`" for r in op.http) or "–",
            ", ".join(f"`{t}`" for t in op.mcp) or "–",
            ", ".join(f"`{c}`" for c in op.cli) or "–",
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def test_the_code_map_is_the_lists() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    assert code_map() in text, (
        "docs/architecture.md's operations table differs: run tests/test_operations.py as a script"
    )


if __name__ == "__main__":
    print(code_map())
