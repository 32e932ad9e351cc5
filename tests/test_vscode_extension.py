"""The VS Code extension (``editors/vscode``): its package.json contributions match what
``extension.ts`` registers and what ``settings.ts`` reads (fast, no node); it type-checks under
``tsc --strict``; its logic modules (no ``vscode`` import) pass their node tests against a live
server (live search, definitions and references through ``/api/v1/symbols/at``, the status bar
from the event stream); and ``vsce package`` makes a .vsix holding the bundled extension.
VS Code itself is not run (it cannot be downloaded here): see editors/vscode/README.md."""

from __future__ import annotations

import json
import re
import shutil
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import make_repo
from live import serve_in_thread, wait_task

from clients import missing_programs
from clients._toolchain import Ran, ensure_npm_packages, run
from clients.ts_client import TS_CLIENT, client_lock, node_test_counts, run_npm
from indexer.config import load_config
from indexer.embed import FakeEmbedder

VSCODE = Path(__file__).resolve().parent.parent / "editors" / "vscode"
_SOURCES = VSCODE / "src"


def _package() -> dict[str, Any]:
    package: dict[str, Any] = json.loads((VSCODE / "package.json").read_text(encoding="utf-8"))
    return package


def _registered_commands() -> tuple[dict[str, str], set[str]]:
    """``COMMANDS`` in extension.ts (key → id) and the keys passed to ``registerCommand``."""
    source = (_SOURCES / "extension.ts").read_text(encoding="utf-8")
    block = re.search(r"export const COMMANDS = \{(?P<body>.*?)\} as const;", source, re.DOTALL)
    assert block is not None, "extension.ts has no `export const COMMANDS = {...} as const;`"
    commands = dict(re.findall(r"(\w+): \"([\w.]+)\"", block["body"]))
    registered = set(re.findall(r"registerCommand\(COMMANDS\.(\w+)", source))
    return commands, registered


def test_every_contributed_command_is_registered_and_every_registered_one_contributed() -> None:
    contributed = {c["command"]: c for c in _package()["contributes"]["commands"]}
    commands, registered = _registered_commands()
    assert set(commands.values()) == set(contributed)
    assert registered == set(commands)
    titles = {f"{c['category']}: {c['title']}" for c in contributed.values()}
    assert titles == {"lode: search", "lode: go to definition", "lode: find references"}


def _settings_defaults() -> dict[str, Any]:
    """``DEFAULT_SETTINGS`` in settings.ts, read as JSON-ish text."""
    source = (_SOURCES / "settings.ts").read_text(encoding="utf-8")
    block = re.search(r"DEFAULT_SETTINGS[^=]*= Object\.freeze\(\{(?P<body>.*?)\}\);", source, re.DOTALL)
    assert block is not None
    pairs = re.findall(r"(\w+): (.+?),\n", block["body"])
    return {key: json.loads(value) for key, value in pairs}


def test_every_setting_is_typed_with_its_default_and_read_by_settings_ts() -> None:
    properties = _package()["contributes"]["configuration"]["properties"]
    defaults = _settings_defaults()
    assert set(properties) == {f"lode.{key}" for key in defaults}
    assert {"lode.serverUrl", "lode.token"} <= set(properties)
    json_types = {str: "string", list: "array", int: "number", float: "number", bool: "boolean"}
    for key, schema in properties.items():
        assert schema["type"] == json_types[type(schema["default"])], key
        assert schema["default"] == defaults[key.removeprefix("lode.")], key
        assert schema.get("markdownDescription") or schema.get("description"), key
        if schema["type"] == "array":
            assert schema["items"] == {"type": "string"}, key


def test_the_manifest_names_its_bundle_and_pins_exactly() -> None:
    package = _package()
    pyproject = tomllib.loads((VSCODE.parent.parent / "pyproject.toml").read_text(encoding="utf-8"))
    assert package["version"] == pyproject["project"]["version"]
    assert package["main"] == "./dist/extension.js"
    assert package["engines"]["vscode"] == "^" + package["devDependencies"]["@types/vscode"]
    assert package["dependencies"] == {"@lode/client": "file:../../clients/typescript"}
    pins = package["devDependencies"]
    assert [f"{n}@{v}" for n, v in pins.items() if not re.fullmatch(r"\d+\.\d+\.\d+", v)] == []
    lock = json.loads((VSCODE / "package-lock.json").read_text(encoding="utf-8"))
    assert {name: lock["packages"][f"node_modules/{name}"]["version"] for name in pins} == pins
    # the lock copies the linked client's manifest: npm ci refuses a lock out of step with it
    client = json.loads((TS_CLIENT / "package.json").read_text(encoding="utf-8"))
    linked = lock["packages"]["../../clients/typescript"]
    fields = ("version", "dependencies", "devDependencies")
    assert {f: linked[f] for f in fields} == {f: client[f] for f in fields}, (
        "run npm install in editors/vscode"
    )
    for module in ("settings", "results", "liveSearch", "navigation", "status"):
        source = (_SOURCES / f"{module}.ts").read_text(encoding="utf-8")
        assert not re.search(r"from \"vscode\"|require\(\"vscode\"\)", source), f"{module}.ts imports vscode"
    ignored = (VSCODE / ".gitignore").read_text(encoding="utf-8").split()
    assert {"node_modules/", "dist/", "build/", "*.vsix"} <= set(ignored)


def _npm(args: list[str], env: dict[str, str] | None = None, timeout: float = 600) -> Ran:
    """``npm ARGS`` in the extension's folder, the client's dist/ held still meanwhile."""
    with client_lock():
        ran = run(["npm", *args], cwd=VSCODE, env=env, timeout=timeout)
    assert ran.returncode == 0, f"npm {' '.join(args)}:\n{ran.output}"
    return ran


@pytest.fixture(scope="module")
def installed() -> None:
    """The client package built (the extension links it) and the extension's node packages
    installed from their lock files; skip without node and npm."""
    missing = [name for name in missing_programs() if name != "java"]
    if missing:
        pytest.skip(f"the VS Code extension needs {', '.join(missing)} on PATH")
    built = run_npm(["run", "build"])
    assert built.returncode == 0, built.output
    ensure_npm_packages(VSCODE)


@pytest.mark.slow
def test_the_extension_type_checks_strictly(installed: None) -> None:
    ran = run(
        [VSCODE / "node_modules" / ".bin" / "tsc", "--project", "tsconfig.json", "--pretty", "false"],
        cwd=VSCODE,
    )
    assert ran.returncode == 0, ran.output


@pytest.mark.slow
def test_vsce_packages_the_bundled_extension(installed: None) -> None:
    for folder in ("dist", "build/vsix"):
        shutil.rmtree(VSCODE / folder, ignore_errors=True)
    (VSCODE / "build" / "vsix").mkdir(parents=True)
    out = VSCODE / "build" / "vsix" / "lode.vsix"
    _npm(["run", "package", "--", "--out", str(out)], timeout=300)
    with zipfile.ZipFile(out) as vsix:
        names = set(vsix.namelist())
        manifest = json.loads(vsix.read("extension/package.json"))
        bundle = vsix.read("extension/dist/extension.js").decode("utf-8")
    assert {"extension.vsixmanifest", "extension/readme.md", "extension/dist/extension.js"} <= names
    assert manifest["contributes"] == _package()["contributes"]
    assert not [
        n for n in names if n.startswith(("extension/src/", "extension/test/", "extension/node_modules/"))
    ]
    assert 'require("vscode")' in bundle
    assert "api/v1/symbols/at" in bundle  # the client is bundled in, not required at run time
    assert 'require("@lode/client")' not in bundle


@pytest.fixture(scope="module")
def server(installed: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A live server (the fake embedder) with the fixture repository indexed as ``shop``."""
    tmp = tmp_path_factory.mktemp("vscode")
    repo = make_repo(tmp / "repo")
    config = load_config(env={}, overrides={"db": tmp / "db", "enabled": False})
    with serve_in_thread(config, FakeEmbedder()) as base:
        created = httpx.post(f"{base}/api/v1/projects", json={"path": str(repo), "name": "shop"}, timeout=30)
        created.raise_for_status()
        task = wait_task(base, created.json()["task_id"])
        assert task["status"] == "done", task
        yield {"LODE_TEST_URL": base, "LODE_TEST_REPO": str(repo)}


@pytest.mark.slow
def test_the_logic_modules_pass_their_node_tests_against_a_live_server(server: dict[str, str]) -> None:
    shutil.rmtree(VSCODE / "build" / "test", ignore_errors=True)
    _npm(["run", "build:test"])
    env = {**server, "LODE_URL": "", "LODE_API_KEY": "", "LODE_RUNTIME_DIR": ""}
    ran = run(["node", "--test", "--test-reporter=tap", "build/test/"], cwd=VSCODE, env=env, timeout=180)
    counts = node_test_counts(ran.stdout)
    assert ran.returncode == 0, ran.output
    assert (counts["fail"], counts["skipped"]) == (0, 0), ran.output
    assert counts["pass"] >= 9, ran.output
