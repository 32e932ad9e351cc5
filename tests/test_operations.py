"""The one list of operations (``indexer.operations``) against the front ends: every HTTP
route, MCP tool and CLI command serves a listed operation, every adapter the list names
exists, every operation's Python API exists, and the code map in ``docs/architecture.md``
is the one the list makes."""

from __future__ import annotations

import asyncio
import importlib
import sys
from pathlib import Path

import click
import pytest
from test_cli import iter_commands

from indexer.config import load_config
from indexer.operations import OPERATIONS
from server.app import create_app
from server.cli import cli
from server.mcp import TOOL_SPECS, build_mcp

#: Front-end commands and probes: not operations (see ``indexer.operations``).
NOT_OPERATIONS = {
    "lode serve",
    "lode watch",
    "lode mcp",
    "health",
    *(f"lode service {c}" for c in ("install", "uninstall", "start", "stop", "status", "logs")),
}
ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "architecture.md"


def _file(module: str) -> str:
    """A module's file, relative to the checkout."""
    return Path(sys.modules[module].__file__ or "").resolve().relative_to(ROOT).as_posix()


def _routes(tmp_path: Path) -> dict[str, str]:
    """Operation id → the file of the route serving it."""
    app = create_app(load_config(env={}, overrides={"db": tmp_path / "db"}))
    found = {}
    for route in app.routes:
        for handler in getattr(route, "route_handlers", []):
            if handler.include_in_schema is not False and handler.operation_id:
                found[str(handler.operation_id)] = _file(handler.fn.__module__)
    return found


def _route_ids(tmp_path: Path) -> set[str]:
    return set(_routes(tmp_path))


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


def code_files(tmp_path: Path) -> str:
    """The code map's second table: for each feature, the indexer code and the one adapter
    per front end (files found from the app's routes, the MCP tools and the CLI commands)."""
    routes = _routes(tmp_path)
    tools = {spec.name: _file(spec.run.__module__) for spec in TOOL_SPECS}
    commands = {
        " ".join(("lode", *path)): _file(command.callback.__module__)
        for path, command in iter_commands(cli)
        if path and command.callback is not None
    }
    rows: dict[tuple[str, ...], list[str]] = {}
    for op in OPERATIONS:
        files = (
            op.code,
            ", ".join(sorted({routes[r] for r in op.http})) or "–",
            ", ".join(sorted({tools[t.split()[0]] for t in op.mcp})) or "–",
            ", ".join(sorted({commands[c] for c in op.cli})) or "–",
        )
        rows.setdefault(files, []).append(op.name)
    lines = ["| operations | indexer | HTTP | MCP | CLI |", "| --- | --- | --- | --- | --- |"]
    for files, names in rows.items():
        cells = [", ".join(f"`{n}`" for n in names), *(f"`{f}`" if f != "–" else f for f in files)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def test_every_feature_is_where_the_list_says(tmp_path: Path) -> None:
    for op in OPERATIONS:
        assert (ROOT / op.code).exists(), (op.name, op.code)
        assert op.code.startswith("indexer/"), (op.name, op.code)


def test_the_code_map_is_the_lists(tmp_path: Path) -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    for table in (code_map(), code_files(tmp_path)):
        assert table in text, (
            "docs/architecture.md's code map differs: run tests/test_operations.py as a script"
        )


if __name__ == "__main__":
    import tempfile

    print(code_map())
    print()
    with tempfile.TemporaryDirectory() as tmp:
        print(code_files(Path(tmp)))
