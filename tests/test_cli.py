"""The command line: every ``--help`` answers without the engine, options are named as the
API fields they set (the old names still work, unshown), errors name the option as typed,
absolute path globs, defaults in help texts taken from the config, and ``lode status``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import click
import httpx
import pytest
from click.testing import CliRunner
from conftest import make_repo
from live import free_port, serve_in_thread

from indexer.api import Lode
from indexer.config import ChunkerConfig, ServerConfig, WatchConfig, load_config
from indexer.embed import FakeEmbedder
from indexer.models import Task
from indexer.search import SearchOptions
from indexer.search._content_io import DEFAULT_MIN_SCORE, ContentRequest, FindDocumentsRequest
from indexer.search.discover import RenderConfig
from server.cli import cli

ROOT = Path(__file__).resolve().parent.parent

#: Modules a ``--help`` must not import: the engine, the store, the model, the web app.
HEAVY = (
    "torch",
    "sentence_transformers",
    "lancedb",
    "lance",
    "pyarrow",
    "numpy",
    "onnxruntime",
    "tree_sitter",
    "litestar",
    "mcp",
    "httpx",
    "rich",
    "indexer.api",
    "indexer.store",
    "indexer.search._engine",
    "server.app",
)


def iter_commands(
    group: click.Command = cli, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    """Every command of the tree with the words that reach it (the root's are empty)."""
    yield path, group
    if isinstance(group, click.Group):
        for name, command in sorted(group.commands.items()):
            yield from iter_commands(command, (*path, name))


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(index folder, repository) of the fixture repo, indexed by the fake embedder."""
    base = tmp_path_factory.mktemp("cli")
    repo = make_repo(base / "repo")
    api = Lode(load_config(env={}, overrides={"db": base / "db"}), embedder=FakeEmbedder())
    api.index(repo, name="shop")
    api.close()
    return base / "db", repo


def _env(db: Path, **extra: str) -> dict[str, str]:
    """No lode server to find (a port nobody listens on), the fake model's index."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LODE_")}
    return {**env, "LODE_DB": str(db), "LODE_MODEL": "fake-hash-256", "LODE_PORT": str(free_port()), **extra}


def _search(db: Path, *args: str) -> Any:
    out = CliRunner().invoke(cli, ["search", "cart", "--mode", "lexical", "--json", *args], env=_env(db))
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


# ---- help ---------------------------------------------------------------------------------------
def test_every_help_answers_without_the_engine() -> None:
    """``lode --help`` and every ``lode … --help``, in a fresh process: each has an
    ``Example:``, and none imports the engine, the store, the model or the web app."""
    script = (
        "import json, sys\n"
        "from click.testing import CliRunner\n"
        "from server.cli import cli\n"
        "paths = json.loads(sys.argv[1])\n"
        "for path in paths:\n"
        "    out = CliRunner().invoke(cli, [*path, '--help'])\n"
        "    assert out.exit_code == 0, (path, out.output)\n"
        "    assert 'Example:' in out.output, path\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    paths = [list(path) for path, _ in iter_commands()]
    assert len(paths) > 15
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(paths)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = set(json.loads(done.stdout))
    heavy = sorted(m for m in loaded if m.split(".")[0] in HEAVY or m in HEAVY)
    assert heavy == []


def test_help_defaults_come_from_the_config() -> None:
    """A default a help text states is the config's own (``lode watch`` once said 300 ms)."""
    runner = CliRunner()

    def help_of(*path: str) -> str:
        return " ".join(runner.invoke(cli, [*path, "--help"]).output.split())

    assert f"(default {WatchConfig().quiet_ms})" in help_of("watch")
    server = ServerConfig()
    assert f"(default {server.port})" in help_of("serve")
    assert f"(default {server.host};" in help_of("serve")
    assert f"(default {ChunkerConfig().max_chunk_tokens})" in help_of("chunk")
    assert f"(default {DEFAULT_MIN_SCORE})" in help_of("search-content")
    render = RenderConfig()
    assert f"(default: {render.max_prompt_tokens})" in help_of("discover")
    assert f"(default: {render.format_style})" in help_of("discover")
    search = help_of("search")
    defaults = SearchOptions(query="x")
    for name in ("file_limit", "chunks_per_file", "limit", "offset"):
        option = "--" + name.replace("_", "-")
        assert f"{option} INTEGER" in search
    assert f"[default: {defaults.file_limit}]" in search


# ---- one vocabulary -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("command", "request_type", "skip"),
    [
        ("search", SearchOptions, {"query", "exact_terms", "min_score", "candidates"}),  # search_content's
        ("search-content", ContentRequest, set()),
        ("find-documents", FindDocumentsRequest, {"query"}),
    ],
)
def test_options_are_the_api_field_names(command: str, request_type: type, skip: set[str]) -> None:
    """Each request field is an option spelled as the field (``path_include`` ↔
    ``--path-include``), shown first in --help; older spellings are not shown."""
    found = cli.commands[command]
    options = {p.name: p for p in found.params if isinstance(p, click.Option)}
    shown = CliRunner().invoke(cli, [command, "--help"]).output
    for field in fields(request_type):
        if field.name in skip:
            continue
        option = options[field.name]
        name = "--" + field.name.replace("_", "-")
        assert option.opts[0] == name, field.name
        assert name in shown
        for old in getattr(option, "old_names", ()):
            assert f"{old} " not in shown, old
            assert f"{old}," not in shown, old


@pytest.mark.parametrize(
    ("new", "old", "value"),
    [
        ("--languages", "--lang", "go"),
        ("--path-include", "--path", "src/**"),
        ("--path-exclude", "--exclude", "src/**"),
        ("--node-types", "--node-type", "function"),
        ("--file-limit", "--files", "1"),
        ("--chunks-per-file", "--per-file", "1"),
        ("--node-name-pattern", "--name", "*total*"),
        ("--projects", "--project", "shop"),
    ],
)
def test_old_option_names_still_work(indexed: tuple[Path, Path], new: str, old: str, value: str) -> None:
    db, _ = indexed
    assert _search(db, new, value)["documents"] == _search(db, old, value)["documents"]
    assert _search(db, new, value)["documents"] != _search(db)["documents"] or new == "--projects"


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--path", "src/[z-a]"], "--path:"),
        (["--path-include", "src/[z-a]"], "--path-include:"),
        (["--path-include=src/[z-a]"], "--path-include:"),
        (["--exclude", "src/[z-a]"], "--exclude:"),
        (["--files", "0"], "--files:"),
        (["--file-limit", "0"], "--file-limit:"),
        (["--lang", "klingon"], "--lang:"),
        (["--node-type", "gizmo"], "--node-type:"),
        (["--project", "nope"], "--project:"),
        (["--scope-depth", "-1", "1"], "--scope-depth:"),
    ],
)
def test_errors_name_the_option_as_typed(indexed: tuple[Path, Path], args: list[str], named: str) -> None:
    db, _ = indexed
    out = CliRunner().invoke(cli, ["search", "cart", "--mode", "lexical", *args], env=_env(db))
    assert out.exit_code == 2, out.output
    assert out.output.startswith(f"lode: error: {named} "), out.output
    assert "_" not in out.output.split(":")[1]  # not the API field (path_include)


def test_an_empty_query_names_the_argument(indexed: tuple[Path, Path]) -> None:
    db, _ = indexed
    out = CliRunner().invoke(cli, ["search", " ", "--mode", "lexical"], env=_env(db))
    assert out.exit_code == 2
    assert out.output.startswith("lode: error: QUERY: must not be empty")


def test_search_lists_what_has_definitions_names(indexed: tuple[Path, Path]) -> None:
    db, _ = indexed
    args = ["search", "--has-definitions", "apply_discount", "--granularity", "chunk", "--json"]
    out = CliRunner().invoke(cli, args, env=_env(db))
    assert out.exit_code == 0, out.output
    groups = json.loads(out.output)["groups"]
    assert groups[0]["chunks"][0]["node_name"] == "apply_discount"
    out = CliRunner().invoke(cli, ["search"], env=_env(db))
    assert out.exit_code == 2
    assert out.output.startswith("lode: error: QUERY: must not be empty")


def test_absolute_path_globs_on_the_command_line(indexed: tuple[Path, Path]) -> None:
    """An absolute glob inside the project is made relative; outside it, exit 2 naming it."""
    db, repo = indexed
    relative = _search(db, "--path-include", "src/**")["documents"]
    assert relative
    assert _search(db, "--path-include", f"{repo}/src/**")["documents"] == relative
    assert _search(db, "--path", f"{repo}/src/**")["documents"] == relative
    out = CliRunner().invoke(cli, ["search", "cart", "--path-exclude", "/elsewhere/**"], env=_env(db))
    assert out.exit_code == 2
    assert out.output.startswith("lode: error: --path-exclude: '/elsewhere/**' is outside the project root")


# ---- lode status --------------------------------------------------------------------------------
def test_status_in_process_lists_live_tasks(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    api = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    api.index(repo, name="shop", embed=False)
    project = api.store.projects.get("shop")
    api.store.tasks.save(
        Task(id="t-running", project_id=project.id, status="running", phase="embed", files_total=10,
             files_done=10, chunks_total=40, chunks_embedded=10)
    )  # fmt: skip
    api.store.tasks.save(Task(id="t-done", project_id=project.id, status="done", phase="done"))
    api.close()
    out = CliRunner().invoke(cli, ["status", "--json"], env=_env(tmp_path / "db"))
    assert out.exit_code == 0, out.output
    status = json.loads(out.output)
    assert status["via"] == "local"
    assert [t["id"] for t in status["tasks"]] == ["t-running"]
    assert status["tasks"][0]["percent"] == 40.0  # files 20 % + a quarter of the embedding's 80 %
    text = CliRunner().invoke(cli, ["status"], env=_env(tmp_path / "db")).output
    assert "running  shop: embed 40 % (files 10/10, 10/40 chunks embedded)  t-running" in text
    assert "watcher unknown (no lode server)" in text


def test_status_through_a_server_shows_its_watchers_and_tasks(indexed: tuple[Path, Path]) -> None:
    db, _ = indexed
    config = load_config(env={}, overrides={"db": db, "enabled": False})
    with serve_in_thread(config, FakeEmbedder()) as base:
        port = base.rsplit(":", 1)[1]
        env = _env(db, LODE_PORT=port, LODE_HOST="127.0.0.1")
        out = CliRunner().invoke(cli, ["status", "--json"], env=env)
        assert out.exit_code == 0, out.output
        status = json.loads(out.output)
        assert status["via"] == base
        assert status["projects"][0]["watch"]["state"] == "stopped"  # the server watches nothing
        assert isinstance(status["tasks"], list)
        text = CliRunner().invoke(cli, ["status"], env=env).output
        assert f"served by {base}" in text
        assert "shop: " in text
        assert "; stopped — " in text
        local = json.loads(CliRunner().invoke(cli, ["status", "--json", "--local"], env=env).output)
        assert local["via"] == "local"
        # the search goes through the server and names the option typed on a field error
        bad = CliRunner().invoke(cli, ["search", "cart", "--path", "/elsewhere/**"], env=env)
        assert bad.exit_code == 2
        assert bad.output.startswith("lode: error: --path: '/elsewhere/**' is outside"), bad.output
        assert httpx.get(base + "/health").status_code == 200


# ---- search without a server: no torch ----------------------------------------------------------
@pytest.mark.slow
def test_search_without_a_server_never_imports_torch(tmp_path: Path, real_embedder: Any) -> None:
    """Once a query graph was exported (by the first run that loaded the model), an
    in-process ``lode search`` embeds its query with it: no torch, the same results."""
    from indexer.embed import load_embedder

    repo = make_repo(tmp_path / "repo")
    cache = tmp_path / "cache"
    env = _env(tmp_path / "db", LODE_CACHE_DIR=str(cache))
    env.pop("LODE_MODEL")
    os.environ["LODE_CACHE_DIR"] = str(cache)
    try:
        embedder = load_embedder()
        assert embedder.query_graph() is not None  # exports the graph into the cache, once
    finally:
        del os.environ["LODE_CACHE_DIR"]
    api = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=embedder)
    api.index(repo, name="shop")
    query = "apply a percentage discount"
    expected = [d.file_path for d in api.search(SearchOptions(query=query)).documents]
    api.close()
    script = (
        "import json, sys\n"
        "from click.testing import CliRunner\n"
        "from server.cli import cli\n"
        "out = CliRunner().invoke(cli, ['search', sys.argv[1], '--json'])\n"
        "assert out.exit_code == 0, out.output\n"
        "heavy = [m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules]\n"
        "print(json.dumps({'heavy': heavy, 'response': json.loads(out.output)}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, query], capture_output=True, text=True, cwd=ROOT, env=env, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["heavy"] == []
    assert [d["file_path"] for d in result["response"]["documents"]] == expected
