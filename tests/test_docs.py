"""The documentation is checked mechanically: every ``LODE_*`` setting, CLI command and
option, HTTP route and MCP tool is documented in ``docs/``, and every command the README
and the docs show exists (the scripts are there, the ``lode`` command lines parse)."""

from __future__ import annotations

import asyncio
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from test_cli import iter_commands

from indexer.config import env_names, load_config
from indexer.embed import FakeEmbedder
from server.app import create_app
from server.cli import cli
from server.mcp import build_mcp

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = sorted(DOCS.glob("*.md"))


def docs_text() -> str:
    """Every page of ``docs/`` as one text."""
    return "\n".join(page.read_text(encoding="utf-8") for page in PAGES)


def mentions(text: str, word: str) -> bool:
    """``word`` in ``text`` as a whole token (``--path`` is not found in ``--path-include``)."""
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


def test_the_readme_fits_on_a_screen_or_four() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200
    linked = README.read_text(encoding="utf-8")
    assert [page.name for page in PAGES if f"(docs/{page.name})" not in linked] == []  # every page linked


def test_every_setting_is_documented() -> None:
    """The settings of ``indexer/config.py`` (``env_names``), and any other ``LODE_*``
    variable the code reads."""
    source = "\n".join(
        p.read_text(encoding="utf-8") for d in ("indexer", "server") for p in (ROOT / d).rglob("*.py")
    )
    read_elsewhere = set(re.findall(r"[\"'](LODE_[A-Z0-9_]+)[\"']", source))
    names = set(env_names()) | read_elsewhere
    assert "LODE_QUIET_MS" in names
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    assert sorted(n for n in names if not mentions(text, f"`{n}`")) == []


def test_every_command_and_option_is_documented() -> None:
    text = docs_text()
    missing = []
    for path, command in iter_commands():
        if path and not mentions(text, " ".join(("lode", *path))):
            missing.append(" ".join(("lode", *path)))
        for param in command.params:
            if isinstance(param, click.Option):
                missing += [
                    f"{' '.join(path)} {n}"
                    for n in (*param.opts, *param.secondary_opts)
                    if not mentions(text, n)
                ]
    assert missing == []


def _routes() -> Iterator[tuple[str, str]]:
    """(method, path with ``{}`` for each parameter) of every route of the app."""
    app = create_app(load_config(env={}, overrides={"db": "/nonexistent/lode-docs"}), embedder=FakeEmbedder())
    for route in app.routes:
        path = re.sub(r"\{[^}]*\}", "{}", route.path)
        methods = sorted(set(getattr(route, "methods", ()) or ()) - {"OPTIONS", "HEAD"})
        if not methods:
            yield "", path
        for method in methods:
            yield method, path


def test_every_http_route_is_documented() -> None:
    text = re.sub(r"\{[^}]*\}", "{}", (DOCS / "http-api.md").read_text(encoding="utf-8"))
    routes = list(_routes())
    assert ("POST", "/api/v1/search") in routes
    assert ("", "/mcp") in routes
    missing = [f"{m} {p}".strip() for m, p in routes if f"`{m} {p}".replace("` ", "`") not in text]
    assert missing == []


def test_every_mcp_tool_is_documented() -> None:
    tools = [tool.name for tool in asyncio.run(build_mcp(lambda: None).list_tools())]  # type: ignore[arg-type]
    assert 0 < len(tools) <= 8
    text = (DOCS / "mcp.md").read_text(encoding="utf-8")
    assert sorted(t for t in tools if f"`{t}`" not in text) == []


def _shell_lines(markdown: str) -> Iterator[str]:
    """The command lines of the ``sh`` blocks of a Markdown text (continuations joined,
    comments dropped)."""
    for block in re.findall(r"```sh\n(.*?)```", markdown, flags=re.DOTALL):
        joined = block.replace("\\\n", " ")
        for line in joined.splitlines():
            words = shlex.split(line, comments=True)
            if words:
                yield " ".join(shlex.quote(w) for w in words)


def _parse(words: list[str]) -> None:
    """Parse a ``lode`` command line as the CLI would (a bad option raises UsageError)."""
    command: click.Command = cli
    while isinstance(command, click.Group) and words and words[0] in command.commands:
        command = command.commands[words.pop(0)]
    assert not (isinstance(command, click.Group) and words), f"no command {words[0]!r}"
    command.make_context("lode", words)


@pytest.mark.parametrize("page", [README, *PAGES], ids=lambda p: p.name)
def test_the_commands_shown_exist(page: Path) -> None:
    """Every ``./scripts/…`` shown exists and runs; every ``lode`` command line parses."""
    lines = list(_shell_lines(page.read_text(encoding="utf-8")))
    if page == README:
        assert "./scripts/lode serve ." in lines
        assert "./scripts/test" in lines
    for line in lines:
        words = shlex.split(line)
        program = words[0]
        if program.startswith("./scripts/"):
            script = ROOT / program
            assert script.is_file(), line
            assert script.stat().st_mode & 0o111, f"{program} is not executable"
        if program in ("./scripts/lode", "lode"):
            try:
                _parse(words[1:])
            except click.UsageError as exc:
                pytest.fail(f"{page.name}: {line}: {exc}")
