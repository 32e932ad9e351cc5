"""search_content, find_documents and document access: in-process with the fake embedder
(recall against a scan, pagination, min_score, tokens, index changes, paths), over real
HTTP, over MCP, on the command line, and with the real model (slow)."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from click.testing import CliRunner
from conftest import make_repo
from live import serve_in_thread, wait_task
from mcp import Client

from indexer.api import Lode
from indexer.cli import cli
from indexer.config import load_config
from indexer.embed import Embedder, FakeEmbedder
from indexer.errors import NotFoundError, PathError, TokenExpiredError, ValidationError
from indexer.models import StoredChunk
from indexer.pipeline import run_lexical_phase
from indexer.search._content_io import (
    DEFAULT_MIN_SCORE,
    ContentRequest,
    ContentResponse,
    FindDocumentsRequest,
)
from indexer.search._terms import contains_term, is_case_sensitive

API = "/api/v1"

TRICKY = {
    "src/hooks.js": (
        "// React hooks used by the widget.\n"
        "export function Counter() {\n  const [n, setN] = useState(0);\n  return n;\n}\n\n"
        "export function Legacy() {\n  const s = usestate(1); // lower case: not the hook\n  return s;\n}\n\n"
        "export function Stateful() {\n  return useStateful(UseState);\n}\n"
    ),
    "docs/versions.md": (
        "# Versions\n\nRequires v4.2 or later; v4.20 and V4.2 differ; v42 is old.\n\n"
        "## Notes\n\nThe TMOAT agent and the tmoat tests. Arrows: a->b, xa->by, p->next.\n\n"
        "## Tables\n\nvec0 tables, Vec0 too. A naïve café.\n"
    ),
    "src/net.py": (
        '"""Networking: WebSocket and HTTP servers."""\n\n\n'
        "class WebSocketServer:\n    def web_socket(self):\n        return 'websocket WEBSOCKET'\n\n\n"
        "class HTTPServer:\n    def serve(self, valid_id):\n        cart = 'discarted CART'\n        return cart\n\n\n"
        "def is_a(the_value):\n    return the_value is the_value\n"
    ),
    "src/odd.py": (
        "def itself_check(obj):\n    # compare the object with itself\n    return obj is obj\n\n\n"
        "BLOB = 'averyveryveryveryverylongwordwithzebrainsideofitx'  # over 40 characters\n\n\n"
        "def reattach(node):\n    return node.reattach_all()\n"
    ),
}
TERMS = [
    "useState", "UseState", "usestate", "WebSocket", "websocket", "Socket", "socket", "HTTP", "Server",
    "v4.2", "v4", "V4.2", "TMOAT", "a->b", "->", "vec0", "vec", "cart", "id", "the", "is_a", "naïve",
    "café", "parse_document", "parseDocument", "Document", "apply_discount", "discount", "Session", "token",
    "useStateful", "web_socket", "Cart", "x", "ebSocket", "v4.20", "a->", "tach", "self", "zebrainside",
    "attach_a", "o", "turn obj",
]  # fmt: skip


def _fill(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Lode, Path]]:
    base = tmp_path_factory.mktemp("content")
    repo = make_repo(base / "repo")
    _fill(repo, TRICKY)
    api = Lode(load_config(env={}, overrides={"db": base / "db"}), embedder=FakeEmbedder())
    api.index(repo, name="shop")
    yield api, repo
    api.close()


def _all_chunks(api: Lode, project: str = "shop") -> list[StoredChunk]:
    store = api.store
    pid = store.projects.get(project).id
    docs, _ = store.documents.page(pid, 0, 100_000)
    return store.chunks.of_files([d.id for d in docs])


def _walk(api: Lode, request: ContentRequest) -> list[ContentResponse]:
    pages = [api.search_content(request)]
    while pages[-1].continuation.has_more:
        token = pages[-1].continuation.next_token
        pages.append(api.search_content(ContentRequest(limit=request.limit, continuation_token=token)))
        assert len(pages) < 1000
    return pages


def _ids(pages: list[ContentResponse]) -> list[str]:
    return [r.chunk_id for p in pages for r in p.data.results]


# ---- exact terms ---------------------------------------------------------------------------
@pytest.mark.parametrize("term", TERMS)
def test_exact_terms_match_a_plain_substring_scan(shop: tuple[Lode, Path], term: str) -> None:
    """Every chunk whose text holds the term as a substring (a grep of every chunk, with the
    case rule) is returned, once, and only those."""
    api, _ = shop
    flags = 0 if is_case_sensitive(term) else re.IGNORECASE
    grep = {c.id for c in _all_chunks(api) if re.search(re.escape(term), c.chunk.content, flags)}
    found = _ids(_walk(api, ContentRequest(exact_terms=(term,), min_score=0.0, limit=50)))
    assert len(found) == len(set(found))
    assert set(found) == grep


@pytest.mark.parametrize(
    ("term", "scans"),
    [
        ("cart", False),
        ("ebSocket", False),
        ("tach", False),
        ("self", True),
        ("zebrainside", True),
        ("->", True),
    ],
)
def test_only_terms_the_index_cannot_answer_are_scanned(
    shop: tuple[Lode, Path], term: str, scans: bool
) -> None:
    """Mid-word terms go through the vocabulary and the full-text index; a term inside a stop
    word (``self`` in ``itself``) or an over-long word (the index drops both) is scanned."""
    api, _ = shop
    response = api.search_content(ContentRequest(exact_terms=(term,), min_score=0.0))
    assert response.data.results
    assert any("scanning" in w for w in response.status.warnings) is scans


def test_the_default_threshold_keeps_every_exact_match(shop: tuple[Lode, Path]) -> None:
    api, _ = shop
    everything = _walk(api, ContentRequest(exact_terms=("cart", "useState"), min_score=0.0, limit=50))
    default = _walk(api, ContentRequest(exact_terms=("cart", "useState"), limit=50))
    assert _ids(default) == _ids(everything)


def test_exact_only_is_grep_like(shop: tuple[Lode, Path]) -> None:
    """Terms alone return every chunk holding any of them (a grep of every chunk), each with
    the terms it holds; the chunks holding the most terms lead."""
    api, _ = shop
    terms = ("cart", "item", "discount")
    results = [r for p in _walk(api, ContentRequest(exact_terms=terms, limit=50)) for r in p.data.results]
    grep = {c.id for c in _all_chunks(api) if any(contains_term(c.chunk.content, t) for t in terms)}
    assert {r.chunk_id for r in results} == grep
    for r in results:
        assert set(r.matched_terms) == {t for t in terms if contains_term(r.content, t)}
    counts = [len(r.matched_terms) for r in results]
    assert counts[0] == max(counts) >= 2
    assert min(counts) == 1


def test_case_rules(shop: tuple[Lode, Path]) -> None:
    api, _ = shop

    def contents(term: str) -> list[str]:
        return [
            r.content for r in api.search_content(ContentRequest(exact_terms=(term,), limit=50)).data.results
        ]

    assert all("useState" in c for c in contents("useState"))  # identifier: exact case only
    assert any("useStateful(" in c for c in contents("useState"))  # inside a longer name, as grep
    assert not any("usestate(1)" in c and "useState(" not in c for c in contents("useState"))
    assert any("'websocket WEBSOCKET'" in c for c in contents("WEBSOCKET"))  # any case
    assert all(re.search("websocket", c, re.IGNORECASE) for c in contents("websocket"))
    assert any("discarted" in c for c in contents("cart"))  # inside a word, as grep


def test_hybrid_finds_exact_matches_outside_the_vector_candidates(shop: tuple[Lode, Path]) -> None:
    api, _ = shop
    request = ContentRequest(
        semantic_concepts=("quantum chromodynamics",), exact_terms=("TMOAT",), min_score=0.0, limit=50
    )
    results = [r for p in _walk(api, request) for r in p.data.results]
    assert [r.document_id for r in results if r.matched_terms] == ["docs/versions.md"]


def test_exact_terms_narrow_a_concept_search(shop: tuple[Lode, Path]) -> None:
    """Concepts with an exact term: every chunk holding the term, and only those, ranked by
    the concept (the chunk the concept asks for first, as without the term)."""
    api, _ = shop
    concept = ("reduce an amount by a percentage",)
    plain = api.search_content(ContentRequest(semantic_concepts=concept, min_score=0.0, limit=50))
    narrowed = api.search_content(
        ContentRequest(semantic_concepts=concept, exact_terms=("percent",), min_score=0.0, limit=50)
    )
    holding = {c.id for c in _all_chunks(api) if contains_term(c.chunk.content, "percent")}
    assert {r.chunk_id for r in narrowed.data.results} == holding
    assert all(r.matched_terms == ("percent",) for r in narrowed.data.results)
    assert narrowed.data.results[0].node_name == plain.data.results[0].node_name == "apply_discount"


def test_rows_written_since_the_last_optimize_are_found(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    api = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    try:
        api.index(repo, name="shop")
        (repo / "fresh.py").write_text("def zorbleFrobnicator():\n    return 'quuxWidget'\n")
        run_lexical_phase(api.store, api.lazy_embedder, api.store.projects.get("shop"), api.config)
        for term in ("zorbleFrobnicator", "Frobnicator", "quuxWidget"):
            found = api.search_content(ContentRequest(exact_terms=(term,))).data.results
            assert [r.document_id for r in found] == ["fresh.py"], term
    finally:
        api.close()


def test_exact_terms_work_before_vectors_exist(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    api = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    try:
        api.index(repo, name="shop", embed=False)
        resp = api.search_content(ContentRequest(("shopping cart",), ("apply_discount",), limit=50))
        assert {r.node_name for r in resp.data.results} >= {"apply_discount"}
        assert all(r.matched_terms for r in resp.data.results)
        assert any("semantic index incomplete" in w for w in resp.status.warnings)
        scanned = api.search_content(ContentRequest(exact_terms=("->",)))
        assert any("scanning" in w for w in scanned.status.warnings)
    finally:
        api.close()


# ---- response shape ---------------------------------------------------------------------------
def test_response_shape(shop: tuple[Lode, Path]) -> None:
    api, _ = shop
    resp = api.search_content(
        ContentRequest(semantic_concepts=("shopping cart items",), exact_terms=("Cart",), limit=3)
    )
    assert resp.status.success
    assert resp.status.code == 200
    assert len(resp.data.results) == 3
    top = resp.data.results[0]
    assert top.document_id == "src/shop/cart.py"
    assert top.project == "shop"
    assert top.document_keywords
    assert 5 <= len(top.document_keywords) <= 7
    stats = resp.data.statistics
    assert stats.total_results >= 3
    assert stats.files_covered[0] == "src/shop/cart.py"
    assert 0 < stats.avg_relevance <= 1
    assert "shopping cart items" in stats.search_interpretation
    assert "'Cart'" in stats.search_interpretation
    assert resp.continuation.has_more
    assert resp.continuation.next_token
    assert resp.navigation_hints.related_queries
    assert any("get_document_data" in a for a in resp.navigation_hints.next_actions)
    assert all(0 <= r.relevance_score <= 1 for r in resp.data.results)


def test_related_queries_are_never_always_empty(shop: tuple[Lode, Path]) -> None:
    api, _ = shop
    for request in (
        ContentRequest(exact_terms=("Route",)),
        ContentRequest(semantic_concepts=("session tokens expire",)),
    ):
        resp = api.search_content(request)
        assert resp.data.results
        assert resp.navigation_hints.related_queries


def test_no_results_say_what_to_do(shop: tuple[Lode, Path]) -> None:
    api, _ = shop
    resp = api.search_content(ContentRequest(exact_terms=("zzzNothingLikeThis",)))
    assert resp.data.results == ()
    assert resp.status.success
    assert resp.status.message == "No results"
    assert not resp.continuation.has_more
    assert resp.continuation.next_token is None
    assert "min_score" in resp.navigation_hints.next_actions[0]


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        (ContentRequest(), "semantic_concepts"),
        (ContentRequest(semantic_concepts=("",)), "semantic_concepts"),
        (ContentRequest(exact_terms=("a\x00b",)), "exact_terms"),
        (ContentRequest(exact_terms=("x",) * 21), "exact_terms"),
        (ContentRequest(exact_terms=("x",), min_score=1.5), "min_score"),
        (ContentRequest(exact_terms=("x",), limit=51), "limit"),
        (ContentRequest(exact_terms=("x",), limit=0), "limit"),
        (ContentRequest(continuation_token="not a token"), "continuation_token"),
    ],
)
def test_bad_requests_name_the_field(shop: tuple[Lode, Path], request_: ContentRequest, field: str) -> None:
    api, _ = shop
    with pytest.raises(ValidationError) as err:
        api.search_content(request_)
    assert err.value.field == field


def test_project_filter(shop: tuple[Lode, Path]) -> None:
    api, _ = shop
    resp = api.search_content(ContentRequest(exact_terms=("cart",), project="shop", limit=50))
    assert {r.project for r in resp.data.results} == {"shop"}


# ---- pagination and min_score --------------------------------------------------------------------
@pytest.fixture(scope="module")
def widgets(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Lode, Path]]:
    """A project with 120 chunks holding ``widgetCount`` (40 of them ``frobnicate`` too)."""
    base = tmp_path_factory.mktemp("widgets")
    repo = base / "repo"
    files = {}
    for i in range(30):
        funcs = []
        for j in range(4):
            extra = "    frobnicate(widgetCount)\n" if (i + j) % 3 == 0 else ""
            funcs.append(
                f"def count_{i}_{j}(widgetCount):\n    '''Count widgets of shelf {i} row {j}.'''\n"
                f"{extra}    return widgetCount + {i * 10 + j}\n"
            )
        files[f"shelves/shelf_{i:02d}.py"] = "\n\n".join(funcs)
    _fill(repo, files)
    api = Lode(load_config(env={}, overrides={"db": base / "db"}), embedder=FakeEmbedder())
    api.index(repo, name="widgets")
    yield api, repo
    api.close()


@pytest.mark.parametrize(
    "request_",
    [
        ContentRequest(exact_terms=("widgetCount", "frobnicate"), limit=10, project="widgets"),
        ContentRequest(
            semantic_concepts=("count the widgets on a shelf",),
            exact_terms=("frobnicate",),
            limit=7,
            min_score=0.0,
        ),
    ],
)
def test_walking_every_page(widgets: tuple[Lode, Path], request_: ContentRequest) -> None:
    api, _ = widgets
    pages = _walk(api, request_)
    assert len(pages) > 5
    ids = _ids(pages)
    assert len(ids) == len(set(ids))  # no duplicates
    totals = {p.data.statistics.total_results for p in pages}
    assert totals == {len(ids)}  # totals stable, none missing
    scores = [r.relevance_score for p in pages for r in p.data.results]
    assert scores == sorted(scores, reverse=True)
    assert all(len(p.data.results) == request_.limit for p in pages[:-1])
    one_page = api.search_content(dataclasses.replace(request_, limit=50))
    assert ids[:50] == _ids([one_page])  # pages are slices of one ranking, ties included
    if not request_.semantic_concepts:
        expected = {
            c.id for c in _all_chunks(api, "widgets") if contains_term(c.chunk.content, "widgetCount")
        }
        assert set(ids) == expected
        assert len(ids) == 120


def test_min_score_results_are_nested(shop: tuple[Lode, Path]) -> None:
    for api, request in (
        (shop[0], ContentRequest(semantic_concepts=("shopping cart items",), exact_terms=("Cart", "item"))),
        (shop[0], ContentRequest(("cart items total cents",))),
    ):

        def at(score: float, api: Lode = api, request: ContentRequest = request) -> dict[str, float]:
            pages = _walk(
                api, ContentRequest(request.semantic_concepts, request.exact_terms, min_score=score)
            )
            return {r.chunk_id: r.relevance_score for p in pages for r in p.data.results}

        strict, default, loose = at(0.8), at(0.5), at(0.0)
        assert strict
        assert set(strict) < set(default) <= set(loose)
        assert all(s >= 0.8 for s in strict.values())
        assert all(s >= 0.5 for s in default.values())


def test_tokens_refuse_tampering_and_other_queries(widgets: tuple[Lode, Path]) -> None:
    api, _ = widgets
    first = api.search_content(ContentRequest(exact_terms=("widgetCount",), limit=5))
    token = first.continuation.next_token
    assert token
    tampered = token[:-3] + ("AAA" if not token.endswith("AAA") else "BBB")
    for request in (
        ContentRequest(continuation_token=tampered),
        ContentRequest(exact_terms=("frobnicate",), continuation_token=token),
        ContentRequest(exact_terms=("widgetCount",), min_score=0.9, continuation_token=token),
    ):
        with pytest.raises(ValidationError) as err:
            api.search_content(request)
        assert err.value.field == "continuation_token"
    with pytest.raises(NotFoundError, match="project"):  # another scope: a project this index lacks
        api.search_content(
            ContentRequest(exact_terms=("widgetCount",), project="shop", continuation_token=token)
        )
    same = api.search_content(ContentRequest(exact_terms=("widgetCount",), limit=5, continuation_token=token))
    assert {r.chunk_id for r in same.data.results}.isdisjoint({r.chunk_id for r in first.data.results})
    documents_token = api.find_documents(
        FindDocumentsRequest(query="widgets", limit=2)
    ).continuation.next_token
    with pytest.raises(ValidationError):
        api.search_content(ContentRequest(continuation_token=documents_token))


def test_index_changes_page_on_or_expire(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _fill(repo, {f"m{i}.py": f"def handler_{i}():\n    return 'gadgetId {i}'\n" for i in range(12)})
    api = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    try:
        api.index(repo, name="g")
        request = ContentRequest(exact_terms=("gadgetId",), limit=4)
        first = api.search_content(request)
        # An unrelated change: the results seen so far are still the head of the ranking.
        (repo / "unrelated.py").write_text("def other():\n    return 1\n")
        api.index(repo, name="g")
        second = api.search_content(ContentRequest(limit=4, continuation_token=first.continuation.next_token))
        assert len(second.data.results) == 4
        walked = _ids([first, second])
        assert len(set(walked)) == 8
        assert walked == _ids([api.search_content(ContentRequest(exact_terms=("gadgetId",), limit=8))])
        # A change to a file already paged through: the token expires instead of mixing rankings.
        seen = second.data.results[0].document_id
        (repo / seen).write_text((repo / seen).read_text() + "\n\ndef more():\n    return 'gadgetId'\n")
        api.index(repo, name="g")
        with pytest.raises(TokenExpiredError):
            api.search_content(ContentRequest(limit=4, continuation_token=second.continuation.next_token))
    finally:
        api.close()


# ---- find_documents ------------------------------------------------------------------------------
def test_find_documents(shop: tuple[Lode, Path]) -> None:
    api, _ = shop
    resp = api.find_documents(FindDocumentsRequest(query="shopping cart", limit=3))
    docs = resp.data.documents
    assert docs[0].document_id == "src/shop/cart.py"
    assert docs[0].summary == "A shopping cart that keeps items in memory."
    assert 5 <= len(docs[0].document_keywords) <= 7
    assert docs[0].languages == ("python",)
    assert docs[0].chunk_count > 1
    scores = [d.relevance_score for d in docs]
    assert scores == sorted(scores, reverse=True)
    assert resp.navigation_hints.related_queries
    pages = [resp]
    while pages[-1].continuation.has_more:
        token = pages[-1].continuation.next_token
        pages.append(api.find_documents(FindDocumentsRequest(limit=3, continuation_token=token)))
    paths = [d.document_id for p in pages for d in p.data.documents]
    assert len(paths) == len(set(paths)) == resp.data.statistics.total_results
    with pytest.raises(ValidationError) as err:
        api.find_documents(FindDocumentsRequest(query=" "))
    assert err.value.field == "query"
    with pytest.raises(ValidationError):
        api.find_documents(
            FindDocumentsRequest(query="other", continuation_token=resp.continuation.next_token)
        )


# ---- document access -------------------------------------------------------------------------------
def test_document_access_by_path(shop: tuple[Lode, Path]) -> None:
    api, _ = shop
    hit = api.search_content(ContentRequest(exact_terms=("remove_item",))).data.results[0]
    data = api.document_data("shop", hit.document_id)
    assert data.document_id == "src/shop/cart.py"
    assert [c.chunk_index for c in data.chunks] == list(range(data.chunk_count))
    assert data.summary
    assert data.keywords
    text = api.document_text("shop", hit.document_id, hit.start_line, hit.end_line)
    assert text.text == hit.content + "\n" or hit.content in text.text
    assert text.start_line == hit.start_line
    assert text.total_lines >= hit.end_line
    whole = api.document_text("shop", "README.md")
    assert whole.text == (Path(shop[1]) / "README.md").read_text()
    with pytest.raises(NotFoundError):
        api.document_data("shop", "src/nope.py")
    with pytest.raises(ValidationError) as err:
        api.document_text("shop", "README.md", 5, 2)
    assert err.value.field == "end_line"


@pytest.mark.parametrize(
    "document_id", ["../secret.txt", "/etc/passwd", "src/../../x", "src/./cart.py", "a//b", "C:/x", "..", ""]
)
def test_paths_outside_the_root_are_refused(shop: tuple[Lode, Path], document_id: str) -> None:
    api, _ = shop
    with pytest.raises(PathError) as err:
        api.document_data("shop", document_id)
    assert err.value.field == "document_id"


def test_a_symlink_leaving_the_root_is_refused(shop: tuple[Lode, Path], tmp_path: Path) -> None:
    api, repo = shop
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    (repo / "escape.txt").symlink_to(outside)
    (repo / "docs_link").symlink_to(tmp_path)
    try:
        for document_id in ("escape.txt", "docs_link/outside.txt"):
            with pytest.raises(PathError):
                api.document_text("shop", document_id)
    finally:
        (repo / "escape.txt").unlink()
        (repo / "docs_link").unlink()


# ---- HTTP, MCP, CLI --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, str]]:
    base_dir = tmp_path_factory.mktemp("content-server")
    repo = make_repo(base_dir / "repo")
    config = load_config(env={}, overrides={"db": base_dir / "db", "enabled": False})
    with serve_in_thread(config, FakeEmbedder()) as base:
        created = httpx.post(f"{base}{API}/projects", json={"path": str(repo), "name": "shop"}).json()
        assert wait_task(base, created["task_id"])["status"] == "done"
        yield base, repo, created["project"]["id"]


def _error(response: httpx.Response, status: int, key: str | None = None) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"status_code", "detail", "extra"}
    assert body["status_code"] == status
    if key is not None:
        assert body["extra"][0]["key"] == key, body
    return dict(body)


def test_http_search_content_and_errors(server: tuple[str, Path, str]) -> None:
    base, repo, pid = server
    url = f"{base}{API}/search_content"
    ok = httpx.post(url, json={"semantic_concepts": ["shopping cart"], "exact_terms": ["Cart"], "limit": 2})
    assert ok.status_code == 200, ok.text
    body = ok.json()
    assert set(body) == {"data", "status", "continuation", "navigation_hints"}
    assert set(body["data"]) == {"results", "statistics"}
    assert {
        "chunk_id",
        "document_id",
        "content",
        "relevance_score",
        "chunk_index",
        "document_keywords",
    } <= set(body["data"]["results"][0])
    assert set(body["data"]["statistics"]) >= {
        "total_results",
        "files_covered",
        "avg_relevance",
        "search_interpretation",
    }
    assert set(body["status"]) >= {"success", "code", "message"}
    assert set(body["navigation_hints"]) == {"next_actions", "related_queries"}
    token = body["continuation"]["next_token"]
    nxt = httpx.post(url, json={"continuation_token": token, "limit": 2})
    assert nxt.status_code == 200
    assert nxt.json()["data"]["statistics"]["total_results"] == body["data"]["statistics"]["total_results"]
    _error(httpx.post(url, json={}), 400, "semantic_concepts")
    _error(httpx.post(url, json={"exact_terms": ["x"], "min_score": 2}), 400, "min_score")
    _error(httpx.post(url, json={"exact_terms": ["x"], "limit": 51}), 400, "limit")
    _error(httpx.post(url, json={"exact_terms": ["x"], "bogus": 1}), 400, "bogus")
    _error(httpx.post(url, json={"continuation_token": token[:-4] + "AAAA"}), 400, "continuation_token")
    _error(
        httpx.post(url, json={"exact_terms": ["Item"], "continuation_token": token}),
        400,
        "continuation_token",
    )
    (repo / "src" / "shop" / "cart.py").write_text(
        (repo / "src" / "shop" / "cart.py").read_text() + "\n# Cart\n"
    )
    task = httpx.post(f"{base}{API}/projects/{pid}/index", json={"paths": ["src/shop/cart.py"]}).json()
    assert wait_task(base, task["id"])["status"] == "done"
    _error(httpx.post(url, json={"continuation_token": token}), 409)


def test_http_find_documents_and_document_routes(server: tuple[str, Path, str]) -> None:
    base, _, pid = server
    found = httpx.post(f"{base}{API}/find_documents", json={"query": "session tokens", "limit": 2})
    assert found.status_code == 200, found.text
    top = found.json()["data"]["documents"][0]
    assert top["document_id"] == "src/web/session.rs"
    assert top["summary"]
    doc = httpx.get(f"{base}{API}/projects/{pid}/documents/{top['document_id']}")
    assert doc.status_code == 200, doc.text
    assert doc.json()["chunks"]
    assert doc.json()["text"] is None
    by_name = httpx.get(
        f"{base}{API}/projects/shop/documents/src/web/session.rs/text",
        params={"start_line": 2, "end_line": 3},
    )
    assert by_name.status_code == 200, by_name.text
    text = by_name.json()["text"]
    assert text["start_line"] == 2
    assert text["end_line"] == 3
    assert text["text"].count("\n") == 2
    _error(httpx.get(f"{base}{API}/projects/{pid}/documents/src/nope.rs"), 404)
    _error(httpx.get(f"{base}{API}/projects/{pid}/documents/%2E%2E/%2E%2E/etc/passwd"), 400, "document_id")
    _error(httpx.get(f"{base}{API}/projects/{pid}/documents//etc/passwd"), 400, "document_id")
    _error(httpx.post(f"{base}{API}/find_documents", json={"query": ""}), 400, "query")


def test_mcp_tools(server: tuple[str, Path, str]) -> None:
    """The content routes have no MCP tools of their own: ``search`` finds a file, ``read``
    reads it by id, and a path or id leaving the project is refused naming it."""
    base, _, _ = server

    async def run() -> None:
        async with Client(f"{base}/mcp", read_timeout_seconds=60) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert not {"search_content", "find_documents", "get_document_data", "get_document_text"} & names
            args = {"query": "apply_discount", "granularity": "document", "ids": True, "limit": 3}
            hits = await client.call_tool("search", args)
            assert not hits.is_error, hits.content
            document_id = re.search(r"  id=(\S+)", hits.content[0].text)
            assert document_id, hits.content[0].text
            text = await client.call_tool("read", {"id": document_id[1], "start_line": 1})
            assert not text.is_error, text.content
            assert "apply_discount" in text.content[0].text
            for args, field in (({"path": "../x"}, "path"), ({"id": "../x"}, "id")):
                escape = await client.call_tool("read", args)
                assert escape.is_error
                assert escape.content[0].text.startswith(f"{field}: "), escape.content[0].text

    anyio.run(run)


def test_cli_through_the_server(server: tuple[str, Path, str]) -> None:
    base, _, _ = server
    port = base.rsplit(":", 1)[1]
    runner = CliRunner()
    env = {**os.environ, "LODE_PORT": port, "LODE_HOST": "127.0.0.1"}
    out = runner.invoke(cli, ["search-content", "--term", "apply_discount", "--json"], env=env)
    assert out.exit_code == 0, out.output
    assert "apply_discount" in {r["node_name"] for r in json.loads(out.output)["data"]["results"]}
    found = runner.invoke(cli, ["find-documents", "discount", "--limit", "2"], env=env)
    assert found.exit_code == 0, found.output
    assert "src/shop/" in found.output
    assert "related:" in found.output
    bad = runner.invoke(cli, ["search-content", "--json"], env=env)
    assert bad.exit_code == 2
    assert "--semantic-concepts" in bad.output  # the option, as the CLI names it


def test_cli_in_process(shop: tuple[Lode, Path]) -> None:
    api, _ = shop
    out = CliRunner().invoke(
        cli,
        ["search-content", "--term", "TMOAT", "--local", "--db", str(api.config.db), "--project", "shop"],
        env={**os.environ, "LODE_MODEL": "fake-hash-256"},
    )
    assert out.exit_code == 0, out.output
    assert "docs/versions.md" in out.output


# ---- the real model ------------------------------------------------------------------------------
@pytest.mark.slow
def test_default_min_score_is_useful_with_the_real_model(tmp_path: Path, real_embedder: Embedder) -> None:
    """The unit a concept asks for is among the first three and above the default threshold;
    naming it as an exact term too puts it first."""
    repo = make_repo(tmp_path / "repo")
    api = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=real_embedder)
    try:
        api.index(repo, name="shop")
        expectations = {
            "percentage discount on a price": "apply_discount",
            "remove a product from the cart": "remove_item",
            "expiring session tokens": "Session",
            "longest matching route prefix": "Match",
        }
        for concept, name in expectations.items():
            resp = api.search_content(ContentRequest(semantic_concepts=(concept,)))
            top = [r.node_name for r in resp.data.results[:3]]
            assert name in top, (concept, top, [r.relevance_score for r in resp.data.results])
            assert all(r.relevance_score >= DEFAULT_MIN_SCORE for r in resp.data.results)
            named = api.search_content(ContentRequest(semantic_concepts=(concept,), exact_terms=(name,)))
            assert named.data.results[0].node_name == name, (concept, named.data.results[:2])
    finally:
        api.close()
