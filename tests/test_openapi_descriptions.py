"""Every field of every schema in the served OpenAPI document has a description.

A field whose type is another Struct is described too: Litestar renders
``Annotated[SomeOut, Meta(description=...)]`` as ``{"allOf": [{"$ref": ...}], "description": ...}``,
so no property needs to be a bare ``$ref``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from indexer.config import load_config
from server.app import create_app
from server.openapi import openapi_document


@pytest.fixture
def schemas(tmp_path: Path) -> dict[str, Any]:
    """The component schemas of the app's OpenAPI document (no server, store or model)."""
    config = load_config(env={}, overrides={"db": tmp_path / "db"})
    found: dict[str, Any] = openapi_document(create_app(config))["components"]["schemas"]
    return found


def test_every_property_has_a_description(schemas: dict[str, Any]) -> None:
    missing = [
        f"{name}.{prop}"
        for name, schema in sorted(schemas.items())
        for prop, sub in (schema.get("properties") or {}).items()
        if not str(sub.get("description", "")).strip()
    ]
    assert not missing, f"{len(missing)} field(s) without a description: {', '.join(missing)}"


def test_described_struct_fields_still_reference_their_schema(schemas: dict[str, Any]) -> None:
    project = schemas["ProjectCreated"]["properties"]["project"]
    assert project["allOf"] == [{"$ref": "#/components/schemas/ProjectOut"}]
    statistics = schemas["ContentDataOut"]["properties"]["statistics"]
    assert statistics["allOf"] == [{"$ref": "#/components/schemas/ContentStatisticsOut"}]
