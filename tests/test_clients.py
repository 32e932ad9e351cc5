"""Clients generated from lode's OpenAPI document (as ``/api/openapi.json`` serves it) work as
they are: Redocly's recommended rules find no error and no warning; openapi-python-client,
@hey-api/openapi-ts, openapi-typescript and openapi-generator (typescript-fetch) each
generate with no warning, and what they write type-checks strictly (``mypy --strict``,
``tsc --strict``) with no error; a TypeScript program written against the openapi-typescript
client (called through openapi-fetch) drives a live server through an editor plugin's first
calls. Needs node, npm and java on PATH: the node tools install from
``clients/package-lock.json`` once (``npm ci``, again only when the lock file changes), the
Python ones come with ./scripts/setup. ``./scripts/clients`` prints the same reports. What a
generator prints or writes the same for every document is shown as ignored, not counted
(``clients/_typescript.py``, ``clients/_python.py`` list it)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import make_repo
from live import serve_in_thread

from clients import (
    GENERATORS,
    build_driver,
    check_generator,
    ensure_node_modules,
    lint_document,
    missing_programs,
    run_driver,
    write_document,
)
from indexer.config import load_config
from indexer.embed import FakeEmbedder

CLIENTS = Path(__file__).resolve().parent.parent / "clients"


def test_the_node_tools_are_pinned_exactly_and_locked() -> None:
    package = json.loads((CLIENTS / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((CLIENTS / "package-lock.json").read_text(encoding="utf-8"))
    pins = package["devDependencies"]
    assert {
        "@hey-api/openapi-ts",
        "openapi-typescript",
        "openapi-fetch",
        "@redocly/cli",
        "typescript",
    } <= set(pins)
    assert [f"{n}@{v}" for n, v in pins.items() if not re.fullmatch(r"\d+\.\d+\.\d+", v)] == []
    locked = {name: lock["packages"][f"node_modules/{name}"]["version"] for name in pins}
    assert locked == pins
    assert lock["packages"][""]["devDependencies"] == pins


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The served OpenAPI document in a file, the node tools installed."""
    missing = missing_programs()
    if missing:
        pytest.skip(f"the client checks need {', '.join(missing)} on PATH")
    ensure_node_modules()
    return write_document(tmp_path_factory.mktemp("openapi") / "openapi.json")


@pytest.mark.slow
def test_redocly_recommended_rules_find_no_error_and_no_warning(spec: Path, tmp_path: Path) -> None:
    report = lint_document(spec, tmp_path)
    assert (report.errors, report.warnings) == ((), ()), report.render()


@pytest.mark.slow
@pytest.mark.parametrize("generator", GENERATORS)
def test_the_generated_client_has_no_warning_and_type_checks(
    generator: str, spec: Path, tmp_path: Path
) -> None:
    generated, compiled = check_generator(generator, spec, tmp_path)
    assert (generated.clean, compiled.errors) == (True, ()), f"{generated.render()}\n{compiled.render()}"


@pytest.mark.slow
def test_a_generated_typescript_client_drives_a_live_server(spec: Path, tmp_path: Path) -> None:
    reports, script = build_driver(spec, tmp_path / "drive")
    assert all(r.clean for r in reports), "\n".join(r.render() for r in reports)
    repo = make_repo(tmp_path / "repo")
    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False})
    with serve_in_thread(config, FakeEmbedder()) as base:
        found = run_driver(script, base, repo)
    assert found["task"]["status"] == "done", found["task"]
    assert found["top_hit"] == {
        "file_path": "src/shop/pricing.py",
        "node_name": "apply_discount",
        "start_line": 6,
    }
    definition = {
        "file_path": "src/shop/pricing.py",
        "name": "apply_discount",
        "kind": "function",
        "start_line": 6,
    }
    assert found["symbols"] == [definition]
    sites = {(r["file_path"], r["line"]) for r in found["references"]}
    assert ("src/shop/cart.py", 38) in sites, found["references"]
    assert found["range"]["start_line"] == 6
    assert found["range"]["text"].startswith("def apply_discount(amount_cents: int, percent: int) -> int:")
