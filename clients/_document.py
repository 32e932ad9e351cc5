"""The OpenAPI document the checks read: exactly what ``GET /api/openapi.json`` serves."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["dump_document", "write_document"]


def dump_document() -> dict[str, Any]:
    """The document a lode server serves, asked of the app in-process (no socket, a
    throwaway index, the fake embedder): the app's lifespan finishes the document (exact
    request schemas), so ``create_app(...).openapi_schema`` alone is not what clients get."""
    from litestar.testing import TestClient

    from indexer.config import load_config
    from indexer.embed import FakeEmbedder
    from server.app import create_app

    with tempfile.TemporaryDirectory(prefix="lode-openapi-") as tmp:
        config = load_config(env={}, overrides={"db": Path(tmp) / "db", "enabled": False})
        app = create_app(config, embedder=FakeEmbedder())
        with TestClient(app, base_url="http://127.0.0.1") as client:  # the Host the browser guard allows
            response = client.get("/api/openapi.json")
            response.raise_for_status()
            document: dict[str, Any] = response.json()
    return document


def write_document(path: Path, document: dict[str, Any] | None = None) -> Path:
    """Write ``document`` (default: the served one) to ``path`` as JSON; returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(document if document is not None else dump_document(), indent=1, ensure_ascii=False)
    path.write_text(text + "\n", encoding="utf-8")
    return path
