"""The TypeScript client package (``clients/typescript``, npm ``@lode/client``): its generated
types are current with the document lode serves, its pins are exact and locked, it packs into
a tarball of JavaScript and type declarations, and its node tests (node:test) pass against
live servers: search, the symbol at a position, file text, a 400 and a 401 typed, discovery
through a ``server.json``, and an event after a file is saved. The node packages install from
``clients/typescript/package-lock.json`` once (``npm ci``, again when the lock changes)."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import tarfile
import tomllib
from collections.abc import Iterator
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin, get_type_hints

import httpx
import pytest
from conftest import make_repo
from live import serve_in_thread, wait_task

from clients import dump_document, missing_programs
from clients._toolchain import run
from clients.ts_client import (
    SCHEMA,
    TS_CLIENT,
    document_digest,
    node_test_counts,
    recorded_digest,
    render_schema,
    run_npm,
)
from indexer.config import load_config
from indexer.embed import FakeEmbedder
from server.http.schemas.events import (
    CoverageEventOut,
    FilesEventOut,
    HelloEventOut,
    LaggedEventOut,
    VersionEventOut,
)

ROOT = Path(__file__).resolve().parent.parent


def test_the_generated_types_name_the_document_lode_serves() -> None:
    assert recorded_digest() == document_digest(dump_document()), (
        f"{SCHEMA} is stale: run python -m clients.ts_client generate"
    )


def test_the_package_has_lodes_version_exact_pins_and_a_lock() -> None:
    package = json.loads((TS_CLIENT / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((TS_CLIENT / "package-lock.json").read_text(encoding="utf-8"))
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert (package["name"], package["version"]) == ("@lode/client", pyproject["project"]["version"])
    assert (package["type"], package["exports"]["."]["types"]) == ("module", "./dist/index.d.ts")
    pins = {**package["dependencies"], **package["devDependencies"]}
    assert [f"{n}@{v}" for n, v in pins.items() if not re.fullmatch(r"\d+\.\d+\.\d+", v)] == []
    assert {name: lock["packages"][f"node_modules/{name}"]["version"] for name in pins} == pins
    ignored = (TS_CLIENT / ".gitignore").read_text(encoding="utf-8").split()
    assert {"node_modules/", "dist/", "build/", "*.tgz"} <= set(ignored)


@pytest.fixture(scope="module")
def npm() -> None:
    """node and npm on PATH, else skip (run_npm installs the package's node modules)."""
    missing = [name for name in missing_programs() if name != "java"]
    if missing:
        pytest.skip(f"the TypeScript client needs {', '.join(missing)} on PATH")


@pytest.mark.slow
def test_the_committed_client_is_what_the_served_document_generates(npm: None) -> None:
    assert render_schema() == SCHEMA.read_text(encoding="utf-8"), (
        f"{SCHEMA} is stale: run python -m clients.ts_client generate"
    )


@pytest.mark.slow
def test_npm_pack_makes_a_tarball_of_javascript_and_declarations(npm: None, tmp_path: Path) -> None:
    ran = run_npm(["pack", "--pack-destination", str(tmp_path), "--json"])
    assert ran.returncode == 0, ran.output
    [packed] = json.loads(ran.stdout[ran.stdout.index("[") :])
    with tarfile.open(tmp_path / packed["filename"]) as tar:
        names = set(tar.getnames())
    for module in ("index", "client", "errors", "events", "discovery", "generated/schema"):
        assert {f"package/dist/{module}.js", f"package/dist/{module}.d.ts"} <= names, sorted(names)
    assert "package/package.json" in names
    assert not [n for n in names if "/test/" in n or "node_modules" in n], sorted(names)


@pytest.fixture(scope="module")
def servers(npm: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Two live servers (the fake embedder, the watcher on): one with the fixture repository
    indexed as project ``shop``, one started with an API key; the node tests' environment."""
    tmp = tmp_path_factory.mktemp("ts-client")
    repo = make_repo(tmp / "repo")
    config = load_config(env={}, overrides={"db": tmp / "db"})
    keyed = load_config(env={}, overrides={"db": tmp / "keyed-db", "enabled": False})
    keyed = dataclasses.replace(keyed, server=dataclasses.replace(keyed.server, api_key="s3cret-key"))
    with (
        serve_in_thread(config, FakeEmbedder()) as base,
        serve_in_thread(keyed, FakeEmbedder()) as keyed_base,
    ):
        created = httpx.post(f"{base}/api/v1/projects", json={"path": str(repo), "name": "shop"}, timeout=30)
        created.raise_for_status()
        task = wait_task(base, created.json()["task_id"])
        assert task["status"] == "done", task
        yield {
            "LODE_TEST_URL": base,
            "LODE_TEST_KEYED_URL": keyed_base,
            "LODE_TEST_KEY": "s3cret-key",
            "LODE_TEST_REPO": str(repo),
        }


@pytest.mark.slow
def test_the_node_tests_pass_against_live_servers(servers: dict[str, str]) -> None:
    shutil.rmtree(TS_CLIENT / "build" / "tsc", ignore_errors=True)
    built = run_npm(["run", "build:test"])
    assert built.returncode == 0, built.output
    env = {**servers, "LODE_URL": "", "LODE_API_KEY": "", "LODE_RUNTIME_DIR": ""}
    ran = run(
        ["node", "--test", "--test-reporter=tap", "build/tsc/test/"], cwd=TS_CLIENT, env=env, timeout=180
    )
    counts = node_test_counts(ran.stdout)
    assert ran.returncode == 0, ran.output
    assert (counts["fail"], counts["skipped"]) == (0, 0), ran.output
    assert counts["pass"] >= 13, ran.output


_TS_TYPES = {bool: "boolean", int: "number", float: "number", str: "string", type(None): "null"}


def _ts_type(annotation: Any) -> str:
    """A Python field type as TypeScript writes it (the few the event structs use)."""
    if get_origin(annotation) is Annotated:
        return _ts_type(get_args(annotation)[0])
    if get_origin(annotation) in (UnionType, Union):
        return " | ".join(_ts_type(a) for a in get_args(annotation))
    if get_origin(annotation) is list:
        return f"{_ts_type(get_args(annotation)[0])}[]"
    return _TS_TYPES[annotation]


def _ts_interfaces(source: str) -> dict[str, dict[str, str]]:
    """``export interface Name { field: type; … }`` blocks of a TypeScript file."""
    found = re.finditer(r"export interface (?P<name>\w+) \{(?P<body>[^}]*)\}", source)
    return {m["name"]: dict(re.findall(r"^\s+(\w+): ([^;]+);$", m["body"], re.MULTILINE)) for m in found}


def test_the_event_types_written_by_hand_match_the_servers_event_structs() -> None:
    interfaces = _ts_interfaces((TS_CLIENT / "src" / "events.ts").read_text(encoding="utf-8"))
    for struct in (HelloEventOut, FilesEventOut, CoverageEventOut, VersionEventOut, LaggedEventOut):
        hints = get_type_hints(struct, include_extras=True)
        want = {field: _ts_type(hints[field]) for field in struct.__struct_fields__}
        assert interfaces[struct.__name__.removesuffix("Out")] == want, struct.__name__
