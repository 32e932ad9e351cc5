"""Search reads the symbol index: a query naming something (identifiers, or one word) puts
the chunks defining it in the candidate pool and ranks them first (implementation before
tests), under every filter of the search; a plain-English query is unchanged. The lexical and vector lists are made to
miss the definition by leaving its chunk out of what the store returns for them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import make_repo

from indexer.api import Lode
from indexer.config import load_config
from indexer.embed import FakeEmbedder
from indexer.models import ChunkFilter
from indexer.search import ChunkHit, SearchOptions, SearchResponse

#: A test double with the same name as the implementation's function, and a test using it.
TEST_DOUBLE = '''"""Tests of the price arithmetic."""


def apply_discount(amount_cents: int, percent: int) -> int:
    """A stand-in that never discounts."""
    return amount_cents


def test_apply_discount_keeps_whole_cents() -> None:
    assert apply_discount(1000, 15) == 1000
    assert apply_discount(999, 0) == apply_discount(999, 100)
'''


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lode]:
    base = tmp_path_factory.mktemp("search-symbols")
    repo = make_repo(base / "repo")
    (repo / "tests").mkdir()
    (repo / "tests" / "test_pricing.py").write_text(TEST_DOUBLE, encoding="utf-8")
    api = Lode(load_config(env={}, overrides={"db": base / "db"}), embedder=FakeEmbedder())
    api.index(repo, name="shop")
    yield api
    api.close()


def _hits(resp: SearchResponse) -> list[ChunkHit]:
    if resp.granularity == "document":
        return [h for d in resp.documents for h in d.chunks]
    return sorted((h for g in resp.groups for h in g.chunks), key=lambda h: -h.relevance_score)


def _search(api: Lode, query: str, **kw: Any) -> SearchResponse:
    return api.search(SearchOptions(query=query, granularity=kw.pop("granularity", "chunk"), **kw))


def _definition_ids(api: Lode, name: str) -> set[str]:
    return {s.chunk_id for s in api.store.symbols.definitions([name])}


@pytest.fixture
def lists_miss(indexed: Lode, monkeypatch: pytest.MonkeyPatch) -> Callable[[set[str]], None]:
    """Make the vector and full-text lists of the store leave these chunk ids out."""

    def hide(ids: set[str]) -> None:
        store = indexed.store
        rows = {
            c.row_id
            for c in store.search.chunk_candidates(dict.fromkeys(ids, 1.0), ChunkFilter(), detail="row")
        }
        for method in ("vector_candidates", "text_candidates"):
            real = getattr(store.search, method)

            def without(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
                return [c for c in _real(*args, **kwargs) if c.id not in ids and c.row_id not in rows]

            monkeypatch.setattr(store.search, method, without)

    return hide


@pytest.mark.parametrize("query", ["apply_discount", "Cart.remove_item", "add_tax", "Router", "next"])
@pytest.mark.parametrize("mode", ["hybrid", "lexical"])
def test_a_definition_the_other_lists_miss_is_found_and_first(
    indexed: Lode,
    lists_miss: Callable[[set[str]], None],
    monkeypatch: pytest.MonkeyPatch,
    query: str,
    mode: str,
) -> None:
    name = query.rsplit(".", 1)[-1]
    lists_miss(_definition_ids(indexed, name))
    with monkeypatch.context() as patch:  # the premise: without the symbol index it is not found
        patch.setattr(indexed.store.symbols, "definitions", lambda *a, **k: [])
        without = _hits(_search(indexed, query, mode=mode, limit=5))
    assert name not in {h.node_name for h in without}
    found = _hits(_search(indexed, query, mode=mode, limit=5))
    assert (found[0].node_name, found[0].role) == (name, "implementation"), [h.node_name for h in found]
    files = _search(indexed, query, mode=mode, granularity="document", file_limit=3)
    assert files.documents[0].chunks[0].node_name == name


def test_the_implementation_comes_before_a_test_double_of_the_same_name(indexed: Lode) -> None:
    found = _hits(_search(indexed, "apply_discount", limit=10))
    defining = [(h.file_path, h.role) for h in found if h.node_name == "apply_discount"]
    assert defining[:2] == [("src/shop/pricing.py", "implementation"), ("tests/test_pricing.py", "test")]


@pytest.mark.parametrize(
    ("filters", "first"),
    [
        ({"roles": ("test",)}, ("tests/test_pricing.py", "apply_discount")),
        ({"path_exclude": ("src/**",)}, ("tests/test_pricing.py", "apply_discount")),
        ({"languages": ("go",)}, None),
        ({"node_types": ("class",)}, None),
        ({"path_include": ("docs/**",)}, None),
        ({"exclude_roles": ("implementation", "test")}, None),
        ({"node_name_pattern": "add_*"}, None),
        ({"parent_context_pattern": "Cart"}, None),
        ({"has_references": ("nothing_uses_this",)}, None),
    ],
)
def test_every_filter_holds_for_the_definitions(
    indexed: Lode,
    lists_miss: Callable[[set[str]], None],
    filters: dict[str, Any],
    first: tuple[str, str] | None,
) -> None:
    lists_miss(_definition_ids(indexed, "apply_discount"))
    found = _hits(_search(indexed, "apply_discount", limit=20, **filters))
    defining = [(h.file_path, h.node_name) for h in found if h.node_name == "apply_discount"]
    if first is None:
        assert defining == []
    else:
        assert defining[:1] == [first]
        assert all(path == first[0] for path, _ in defining)


def test_projects_filter_the_definitions(tmp_path: Path) -> None:
    api = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    try:
        api.index(make_repo(tmp_path / "one"), name="one")
        (tmp_path / "two").mkdir()
        (tmp_path / "two" / "other.py").write_text("def unrelated_helper() -> None:\n    pass\n")
        api.index(tmp_path / "two", name="two")
        in_two = _hits(_search(api, "apply_discount", projects=("two",)))
        assert all(h.project == "two" for h in in_two)
        assert "apply_discount" not in {h.node_name for h in in_two}
        assert _hits(_search(api, "apply_discount", projects=("one",)))[0].node_name == "apply_discount"
    finally:
        api.close()


@pytest.mark.parametrize("query", ["remove a product from the cart", "reduce an amount by a percentage"])
def test_a_plain_english_query_never_reads_the_symbol_index(
    indexed: Lode, monkeypatch: pytest.MonkeyPatch, query: str
) -> None:
    before = _hits(_search(indexed, query, limit=10))
    asked: list[object] = []
    monkeypatch.setattr(indexed.store.symbols, "definitions", lambda *a, **k: asked.append(a) or [])
    after = _hits(_search(indexed, query, limit=10))
    assert asked == []
    assert [(h.id, h.relevance_score) for h in after] == [(h.id, h.relevance_score) for h in before]


@pytest.mark.parametrize("mode", ["hybrid", "lexical"])
def test_a_type_comes_before_the_impl_blocks_of_its_name(
    indexed: Lode, lists_miss: Callable[[set[str]], None], mode: str
) -> None:
    kinds = {s.kind for s in indexed.store.symbols.definitions(["Session"])}
    assert {"struct", "impl"} <= kinds  # the premise: two units named Session
    lists_miss(_definition_ids(indexed, "Session"))
    found = _hits(_search(indexed, "Session", mode=mode, limit=5))
    assert (found[0].node_type, found[0].node_name) == ("struct", "Session"), [h.node_type for h in found]
