"""The web page without a browser: page size, public shells, fragments (highlighting,
states, errors), the API key, and the highlighting helpers."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import make_repo
from litestar.testing import TestClient

import server.web
from indexer.config import LodeConfig, load_config
from indexer.embed import FakeEmbedder
from indexer.models import Project
from server import create_app
from server.web._highlight import code_block, highlight_lines, matching_lines, query_terms
from server.web._views import editor_href

Client = TestClient[Any]


def _client(config: LodeConfig) -> Client:
    # a loopback base URL: a loopback-bound lode refuses other Host names (DNS rebinding)
    return TestClient(
        create_app(config, embedder=FakeEmbedder()), base_url="http://127.0.0.1:7370", timeout=30
    )


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Client, Path]]:
    """A client over a store holding the fixture repo, fully indexed."""
    base = tmp_path_factory.mktemp("web")
    repo = make_repo(base / "repo")
    with _client(load_config(env={}, overrides={"db": base / "db", "enabled": False})) as client:
        created = client.post("/api/v1/projects", json={"path": str(repo), "name": "shop"}).json()
        client.app.state.ctx.worker.wait(created["task_id"], timeout=60)
        yield client, repo


@pytest.fixture
def empty(tmp_path: Path) -> Iterator[Client]:
    """A client over an empty store."""
    with _client(load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False})) as client:
        yield client


def _results(client: Client, **body: Any) -> str:
    response = client.post("/ui/fragments/results", json=body)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/html")
    return response.text


def test_public_api() -> None:
    assert server.web.__all__ == ["web_routes"]


def test_first_render_is_small_and_offline(empty: Client) -> None:
    page = empty.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assets = re.findall(r'(?:href|src)="(/ui/static/[^"]+)"', page.text)
    assert len(assets) == 2
    total = len(page.content)
    for url in assets:
        asset = empty.get(url)
        assert asset.status_code == 200
        assert "immutable" in asset.headers["cache-control"]
        total += len(asset.content)
    assert total < 100_000
    assert "http://" not in page.text
    assert "https://" not in page.text  # nothing from a CDN


def test_pages_stay_out_of_the_openapi_document(empty: Client) -> None:
    paths = empty.get("/api/openapi.json").json()["paths"]
    assert not [p for p in paths if p == "/" or p.startswith("/ui")]


def test_every_view_has_a_shell(empty: Client) -> None:
    assert 'data-view="projects"' in empty.get("/ui/projects").text
    chunk = empty.get("/ui/chunks/abc%22%3E").text
    assert 'data-view="chunk"' in chunk
    assert 'data-chunk-id="abc&#34;&gt;"' in chunk
    assert empty.get("/ui/static/nope.js").status_code == 404


def test_empty_store_explains_how_to_add_a_project(empty: Client) -> None:
    html = _results(empty, query="anything")
    assert 'data-state="empty"' in html
    assert "data-add-project" in html
    assert "lode index" in html
    assert 'data-state="empty"' in empty.get("/ui/fragments/projects").text


def test_results_are_highlighted_with_matching_lines_marked(indexed: tuple[Client, Path]) -> None:
    client, _ = indexed
    html = _results(client, query="cart total", granularity="chunk", limit=20)
    assert 'data-state="results"' in html
    assert 'href="/ui/chunks/' in html
    assert "src/shop/cart.py:" in html
    assert '<span class="k">def</span>' in html  # Pygments token classes
    assert 'class="ln mk"' in html  # lines holding a query word
    assert 'class="score"' in html
    assert "<script" not in html


def test_document_granularity_and_filters(indexed: tuple[Client, Path]) -> None:
    client, _ = indexed
    html = _results(client, query="cart total", granularity="document", languages=["go"])
    langs = set(re.findall(r'data-lang="([^"]+)"', html))
    assert langs == {"go"}
    none = _results(client, query="cart total", path_include=["nowhere/**"])
    assert 'data-state="none"' in none
    assert "path_include=nowhere/**" in none


def test_empty_query_gives_a_hint(indexed: tuple[Client, Path]) -> None:
    html = _results(indexed[0], query="")
    assert 'data-state="hint"' in html
    assert "Search 11 files in 1 project" in html


@pytest.mark.parametrize(
    ("url", "body", "field"),
    [
        ("/ui/fragments/results", {"query": "x", "path_include": ["src/[z-a]*"]}, "path_include"),
        ("/api/v1/search", {"query": "x", "path_exclude": ["[9-0]"]}, "path_exclude"),
        ("/ui/fragments/results", {"query": "x", "node_name_pattern": "[b-a]"}, "node_name_pattern"),
        ("/ui/fragments/results", {"query": "x", "node_types": ["gizmo"]}, "node_types"),
    ],
)
def test_bad_filter_is_a_400_naming_the_field(
    indexed: tuple[Client, Path], url: str, body: dict[str, Any], field: str
) -> None:
    response = indexed[0].post(url, json=body)
    assert response.status_code == 400, response.text
    error = response.json()
    assert set(error) == {"status_code", "detail", "extra"}
    assert error["extra"][0]["key"] == field


def test_bad_project_glob_is_a_400(indexed: tuple[Client, Path], tmp_path: Path) -> None:
    response = indexed[0].post("/api/v1/projects", json={"path": str(tmp_path), "exclude": ["[z-a]"]})
    assert response.status_code == 400, response.text
    assert response.json()["extra"][0]["key"] == "exclude"


def test_chunk_view_shows_the_whole_file(indexed: tuple[Client, Path]) -> None:
    client, repo = indexed
    html = _results(client, query="total_cents", granularity="chunk", mode="lexical", limit=1)
    chunk_id = re.search(r'href="/ui/chunks/([^"]+)"', html)
    assert chunk_id is not None
    view = client.get(f"/ui/fragments/chunks/{chunk_id.group(1)}")
    assert view.status_code == 200
    span = re.search(r'data-start="(\d+)" data-end="(\d+)"', view.text)
    assert span is not None
    start, end = int(span.group(1)), int(span.group(2))
    lines = (repo / "src/shop/cart.py").read_text().splitlines()
    assert view.text.count('<span class="ln') == len(lines)
    assert view.text.count('class="ln ck"') == end - start + 1
    assert f'href="vscode://file{repo}/src/shop/cart.py:{start}"' in view.text


def test_unknown_chunk_is_a_404(indexed: tuple[Client, Path]) -> None:
    response = indexed[0].get("/ui/fragments/chunks/nope")
    assert response.status_code == 404
    assert "no chunk" in response.json()["detail"]


def test_projects_fragment(indexed: tuple[Client, Path]) -> None:
    html = indexed[0].get("/ui/fragments/projects").text
    assert 'data-name="shop" data-state="ready"' in html
    assert "<dd>11</dd>" in html
    assert '<progress max="1" value="1.0"></progress> 100 %' in html
    assert 'data-watch="stopped"' in html
    assert 'data-action="reindex"' in html
    assert 'data-live="false"' in html


def test_api_key_guards_data_but_not_the_shell(tmp_path: Path) -> None:
    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False, "api_key": "k3y"})
    with _client(config) as client:
        page = client.get("/")
        assert page.status_code == 200
        assert 'data-key-required="true"' in page.text
        for url in re.findall(r'(?:href|src)="(/ui/static/[^"]+)"', page.text):
            assert client.get(url).status_code == 200
        assert client.post("/ui/fragments/results", json={"query": "x"}).status_code == 401
        assert client.get("/ui/fragments/projects").status_code == 401
        assert client.get("/ui/fragments/chunks/x").status_code == 401
        assert client.get("/api/v1/projects").status_code == 401
        auth = {"Authorization": "Bearer k3y"}
        assert client.get("/ui/fragments/projects", headers=auth).status_code == 200


def test_no_key_no_prompt(empty: Client) -> None:
    assert 'data-key-required="false"' in empty.get("/").text


# ---- highlighting helpers ------------------------------------------------------------
def test_highlight_keeps_one_html_line_per_source_line() -> None:
    code = 'def f():\n    """two\n    lines"""\n    return 1 < 2\n'
    lines = highlight_lines(code, "python")
    assert len(lines) == 4
    assert lines[1] == '    <span class="sd">"""two</span>'
    assert lines[2].startswith('<span class="sd">')  # a multi-line string is split per line
    assert "&lt;" in lines[3]
    assert highlight_lines("<b>", "no-such-language") == ["&lt;b&gt;"]


def test_matching_lines_and_terms() -> None:
    assert query_terms("Cart total, x") == ["cart", "total"]
    assert matching_lines(["a cart", "nothing", "SUBTOTAL"], ["cart", "total"]) == {0, 2}


def test_code_block_numbers_and_marks() -> None:
    block = code_block(highlight_lines("a\nb\nc", "text"), 10, {1}, chunk=range(11, 12))
    assert '<span class="ln" id="L10" data-n="10">' in block
    assert '<span class="ln mk ck" id="L11" data-n="11">' in block


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("vscode://file/{abs_path}:{line}", "vscode://file/r/a.py:3"),
        ("file://{abs_path}#L{line}", "file:///r/a.py#L3"),
        ("idea://open?file={abs_path}&line={line}", "idea://open?file=/r/a.py&line=3"),
        ("x://{path}:{line}", "x://a.py:3"),
        ("x://{nope}", None),
    ],
)
def test_editor_href(template: str, expected: str | None) -> None:
    project = Project(id="p", name="p", root="/r")
    assert editor_href(template, project, "a.py", 3) == expected
