"""The HTTP contract is pinned: the served OpenAPI document's paths and schemas (finished
as ``/api/openapi.json`` serves it) equal ``tests/data/openapi.json``. A refactor must not change them by accident; a change meant
to be made updates the file in the same commit (the test writes the current document to
``test-artifacts/openapi.json`` to copy over it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from indexer.config import load_config
from server.app import create_app
from server.openapi import openapi_document

PINNED = Path(__file__).parent / "data" / "openapi.json"
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"


def _contract(tmp_path: Path) -> dict[str, Any]:
    config = load_config(env={}, overrides={"db": tmp_path / "db"})
    spec = openapi_document(create_app(config))
    return {"paths": spec["paths"], "components": spec["components"]}


def test_the_openapi_paths_and_schemas_are_the_pinned_ones(tmp_path: Path) -> None:
    current = _contract(tmp_path)
    pinned = json.loads(PINNED.read_text(encoding="utf-8"))
    if current != pinned:
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / "openapi.json").write_text(json.dumps(current, indent=1, sort_keys=True) + "\n")
    assert sorted(current["paths"]) == sorted(pinned["paths"])
    changed = sorted(
        name
        for section in ("paths", "components")
        for name in {*current[section], *pinned[section]}
        if current[section].get(name) != pinned[section].get(name)
    )
    assert changed == [], (
        f"the OpenAPI document changed in {changed}: if meant, copy test-artifacts/openapi.json "
        "over tests/data/openapi.json"
    )
