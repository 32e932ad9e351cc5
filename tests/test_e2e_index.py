"""End to end with the real model and real LanceDB: index, search, incremental runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.api import Lode
from indexer.config import load_config
from indexer.embed import Embedder
from indexer.search import SearchOptions

pytestmark = pytest.mark.slow


def _tops(api: Lode, query: str, count: int, **kw: object) -> list[tuple[str, str]]:
    resp = api.search(SearchOptions(query=query, granularity="chunk", **kw))  # type: ignore[arg-type]
    hits = sorted((h for g in resp.groups for h in g.chunks), key=lambda h: (-h.relevance_score, h.id))
    return [(h.file_path, h.node_name) for h in hits[:count]]


def _top(api: Lode, query: str, **kw: object) -> tuple[str, str]:
    return _tops(api, query, 1, **kw)[0]


def test_real_model_index_search_and_incremental_runs(
    tmp_path: Path, repo: Path, real_embedder: Embedder
) -> None:
    api = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=real_embedder)
    first = api.index(repo)
    assert first.files_indexed == 11
    assert first.chunks_embedded == first.chunks_written > 0

    # the method that does it (a unit of its own since chunker 2; it was inside the whole
    # ``impl Session``) before the docs' section about it, unless the question asks for docs
    for mode in ("semantic", "hybrid"):
        assert _top(api, "make session tokens expire later", mode=mode) == (
            "src/web/session.rs",
            "refresh_token",
        )
    how = "how do I make session tokens expire later"
    assert _top(api, how, mode="semantic") == ("docs/guide.md", "Sessions")
    assert ("docs/guide.md", "Sessions") in _tops(api, how, 2, mode="hybrid")
    for mode in ("semantic", "hybrid"):
        # the method itself, now a unit of its own (it was inside the whole ``impl Session``)
        assert _top(api, "make session tokens expire later", mode=mode, path_include=("src/**",)) == (
            "src/web/session.rs",
            "refresh_token",
        )
        assert _top(api, "longest matching prefix route", mode=mode) == ("src/web/router.go", "Match")
    assert _top(api, "reduce a price by a percentage") == ("src/shop/pricing.py", "apply_discount")

    assert api.index(repo).chunks_embedded == 0

    pricing = repo / "src/shop/pricing.py"
    pricing.write_text(pricing.read_text().replace("Add value-added tax", "Add sales tax"))
    edited = api.index(repo)
    assert (edited.files_indexed, edited.chunks_embedded) == (1, 1)

    (repo / "src/web/router.go").unlink()
    deleted = api.index(repo)
    assert deleted.files_deleted == 1
    project = api.store.projects.get("repo")
    assert "src/web/router.go" not in api.store.documents.states(project.id)
    resp = api.search(SearchOptions(query="longest matching prefix route", granularity="chunk", limit=50))
    assert all(h.file_path != "src/web/router.go" for g in resp.groups for h in g.chunks)

    (repo / "src/web/session.rs").rename(repo / "src/web/sessions.rs")
    renamed = api.index(repo)
    # its chunks are embedded again: their texts carry the new path's words
    moved = api.store.documents.states(project.id)["src/web/sessions.rs"].chunk_count
    assert (renamed.files_deleted, renamed.files_indexed, renamed.chunks_embedded) == (1, 1, moved)
    assert _top(api, "make session tokens expire later", languages=("rust",)) == (
        "src/web/sessions.rs",
        "refresh_token",
    )
    api.close()
