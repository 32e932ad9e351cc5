"""Hybrid search on the fixture repo (fake embedder): filters, granularities, modes,
code-aware lexical matching, injection strings, validation."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import make_repo

from indexer.api import Lode
from indexer.config import load_config
from indexer.embed import FakeEmbedder
from indexer.errors import NotFoundError, SearchCancelledError, ValidationError
from indexer.models import ChunkFilter, ChunkView
from indexer.search import ChunkHit, SearchOptions, SearchResponse, cancellable


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lode]:
    base = tmp_path_factory.mktemp("search")
    repo = make_repo(base / "repo")
    api = Lode(load_config(env={}, overrides={"db": base / "db"}), embedder=FakeEmbedder())
    api.index(repo, name="shop")
    yield api
    api.close()


def _chunks(resp: SearchResponse) -> list[ChunkHit]:
    if resp.granularity == "chunk":
        hits = [h for g in resp.groups for h in g.chunks]
        return sorted(hits, key=lambda h: (-h.relevance_score, h.id))  # rank order (ties by id here)
    return [h for d in resp.documents for h in d.chunks]


def _search(api: Lode, query: str, **kw: object) -> SearchResponse:
    return api.search(SearchOptions(query=query, **kw))  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["hybrid", "semantic", "lexical"])
def test_modes_find_the_discount_function(indexed: Lode, mode: str) -> None:
    resp = _search(indexed, "reduce an amount by a percentage", granularity="chunk", mode=mode)
    top = _chunks(resp)[0]
    assert (top.file_path, top.node_name) == ("src/shop/pricing.py", "apply_discount")
    assert 0 < top.relevance_score <= 1


def test_document_granularity_shape(indexed: Lode) -> None:
    resp = _search(indexed, "shopping cart items", file_limit=2, chunks_per_file=2)
    assert resp.granularity == "document"
    assert len(resp.documents) == 2
    assert resp.documents[0].file_path == "src/shop/cart.py"
    for doc in resp.documents:
        assert 1 <= len(doc.chunks) <= 2
        assert doc.chunk_count >= len(doc.chunks)
        assert doc.primary_language
        assert all(c.file_id == doc.id for c in doc.chunks)
    scores = [d.relevance_score for d in resp.documents]
    assert scores == sorted(scores, reverse=True)
    assert resp.has_more


def test_chunk_granularity_groups_by_file(indexed: Lode) -> None:
    resp = _search(indexed, "parse document", granularity="chunk", limit=10)
    assert resp.groups
    totals = [g.total_relevance for g in resp.groups]
    assert totals == sorted(totals, reverse=True)
    for group in resp.groups:
        scores = [c.relevance_score for c in group.chunks]
        assert scores == sorted(scores, reverse=True)
        assert {c.file_path for c in group.chunks} == {group.file_path}


@pytest.mark.parametrize("query", ["parse document", "parseDocument", "parse_document", "ParseDocument"])
def test_lexical_matches_every_identifier_spelling(indexed: Lode, query: str) -> None:
    resp = _search(indexed, query, granularity="chunk", mode="lexical", limit=20)
    names = {h.node_name for h in _chunks(resp)}
    assert {"parseDocument", "parse_document", "ParseDocument"} <= names


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("parse_document", "parse_document"),
        ("ParseDocument", "ParseDocument"),
        ("parseDocument", "parseDocument"),  # a method of a small class: a unit of its own
    ],
)
def test_identifier_query_ranks_the_exact_identifier_first(indexed: Lode, query: str, expected: str) -> None:
    for mode in ("lexical", "hybrid"):
        top = _chunks(_search(indexed, query, granularity="chunk", mode=mode))[0]
        assert top.node_name == expected, mode


def test_filters_alone(indexed: Lode) -> None:
    def names(**kw: object) -> set[str]:
        return {
            h.node_name
            for h in _chunks(_search(indexed, "cart item price", granularity="chunk", limit=50, **kw))
        }

    def paths(**kw: object) -> set[str]:
        return {
            h.file_path
            for h in _chunks(_search(indexed, "cart item price", granularity="chunk", limit=50, **kw))
        }

    assert paths(languages=("go",)) == {"src/web/router.go"}
    assert paths(path_include=("src/shop/**",)) <= {
        "src/shop/cart.py",
        "src/shop/pricing.py",
        "src/shop/__init__.py",
    }
    assert paths(path_include=("*.rs",)) == {"src/web/session.rs"}
    assert not {p for p in paths(path_exclude=("src/**",)) if p.startswith("src/")}
    assert names(node_types=("method",)) == {
        "add_item", "remove_item", "total_cents", "Match", "parseDocument", "new", "refresh_token", "next",
    }  # fmt: skip
    assert names(node_name_pattern="*_item") == {"add_item", "remove_item"}
    assert names(node_name_pattern="add_item") == {"add_item"}
    assert names(parent_context_pattern="class Cart*") == {"add_item", "remove_item", "total_cents"}
    assert names(scope_depth=(2, 2)) >= {"add_item", "remove_item", "total_cents"}
    assert all(
        len(h.scope_path) == 2
        for h in _chunks(_search(indexed, "cart", granularity="chunk", scope_depth=(2, 2)))
    )
    # Bounds beyond the stored column's range mean "any depth from there", not a store error.
    assert names(scope_depth=(2, 53851280822846)) >= {"add_item", "remove_item", "total_cents"}
    assert names(scope_depth=(53851280822846, 53851280822847)) == set()
    assert names(has_definitions=("discount_percent",)) == {"total_cents"}
    assert names(has_references=("apply_discount",)) >= {"total_cents"}
    assert "apply_discount" not in names(has_references=("apply_discount",))


def test_names_alone_list_what_they_name(indexed: Lode) -> None:
    """Without a query, has_definitions / has_references list the chunks they name."""
    defs = _chunks(_search(indexed, "", granularity="chunk", has_definitions=("apply_discount",)))
    assert defs
    assert defs[0].node_name == "apply_discount"
    assert all("apply_discount" in h.content for h in defs)
    refs = _chunks(_search(indexed, "  ", granularity="chunk", has_references=("apply_discount",), limit=50))
    assert "total_cents" in {h.node_name for h in refs}
    assert all("apply_discount" in h.content for h in refs)
    files = _search(indexed, "", has_references=("apply_discount",))
    assert files.granularity == "document"
    assert "src/shop/cart.py" in {d.file_path for d in files.documents}
    assert all(d.chunks for d in files.documents)
    with pytest.raises(ValidationError) as err:
        _search(indexed, "", granularity="chunk")
    assert err.value.errors[0].field == "query"


def test_filters_combined(indexed: Lode) -> None:
    resp = _search(
        indexed,
        "cart",
        granularity="chunk",
        languages=("python",),
        node_types=("method",),
        path_include=("src/shop/*.py",),
        node_name_pattern="*_item",
        scope_depth=(2, 3),
    )
    assert {h.node_name for h in _chunks(resp)} == {"add_item", "remove_item"}


def test_document_granularity_judges_files_by_filtered_chunks(indexed: Lode) -> None:
    resp = _search(indexed, "cart", node_types=("method",), file_limit=10)
    for doc in resp.documents:
        assert doc.chunks
        assert all(c.node_type == "method" for c in doc.chunks)
    assert {d.file_path for d in resp.documents} == {
        "src/shop/cart.py", "src/web/router.go", "src/web/request.py", "src/web/session.rs", "src/web/widget.js",
    }  # fmt: skip


@pytest.mark.parametrize(
    "evil",
    ["x' OR 1=1 --", "'; DROP TABLE code_chunks; --", "a\\' OR '1'='1", "%", "_", "[", "\\", "é' or ''='"],
)
def test_injection_strings_are_just_values(indexed: Lode, evil: str) -> None:
    for field in ("node_name_pattern", "parent_context_pattern"):
        resp = _search(indexed, "cart", granularity="chunk", **{field: evil})
        assert _chunks(resp) == []
    for field in ("languages", "path_include", "has_definitions", "has_references"):
        kwargs: dict[str, object] = {field: (evil,)}
        if field == "languages":
            with pytest.raises(ValidationError):
                _search(indexed, "cart", **kwargs)
            continue
        assert _chunks(_search(indexed, "cart", granularity="chunk", **kwargs)) == []
    assert indexed.store.chunks.count() > 0


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"query": "   "}, "query"),
        ({"granularity": "page"}, "granularity"),
        ({"mode": "fuzzy"}, "mode"),
        ({"scope_depth": (-1, 1)}, "scope_depth"),
        ({"limit": 0}, "limit"),
        ({"limit": 101}, "limit"),
        ({"offset": -1}, "offset"),
        ({"file_limit": 0}, "file_limit"),
        ({"chunks_per_file": 0}, "chunks_per_file"),
        ({"node_types": ("funktion",)}, "node_types"),
        ({"languages": ("klingon",)}, "languages"),
        ({"node_name_pattern": ""}, "node_name_pattern"),
        ({"path_include": ("",)}, "path_include"),
    ],
)
def test_validation_names_the_field(indexed: Lode, kwargs: dict[str, object], field: str) -> None:
    options = {"query": "cart", **kwargs}
    with pytest.raises(ValidationError) as err:
        indexed.search(SearchOptions(**options))  # type: ignore[arg-type]
    assert err.value.field == field


def test_an_unknown_project_is_not_found(indexed: Lode) -> None:
    with pytest.raises(NotFoundError, match="no-such-project"):
        indexed.search(SearchOptions(query="cart", projects=("no-such-project",)))


def test_an_empty_scope_depth_range_finds_nothing_and_says_so(indexed: Lode) -> None:
    answer = indexed.search(SearchOptions(query="cart", granularity="chunk", scope_depth=(3, 1)))
    assert answer.groups == ()
    assert any("empty range" in w for w in answer.warnings)


def test_several_errors_are_all_named(indexed: Lode) -> None:
    with pytest.raises(ValidationError) as err:
        indexed.search(SearchOptions(query="", limit=0, mode="x"))
    assert {e.field for e in err.value.errors} == {"query", "limit", "mode"}


def test_pagination_never_repeats_or_skips(indexed: Lode) -> None:
    full = _chunks(_search(indexed, "cart item", granularity="chunk", limit=32))
    paged: list[ChunkHit] = []
    for offset in range(0, 32, 4):
        paged.extend(_chunks(_search(indexed, "cart item", granularity="chunk", limit=4, offset=offset)))
    assert len(full) > 24  # the fixture's whole pool (31 chunks), so every page is full but the last
    assert len({h.id for h in paged}) == len(paged) == len(full)  # nothing repeated…
    assert {h.id for h in paged} == {h.id for h in full}  # …nothing skipped
    assert [h.relevance_score for h in paged] == [h.relevance_score for h in full]  # page order


def test_a_fixed_candidate_pool_is_the_same_on_every_page(indexed: Lode) -> None:
    """``candidates`` fixes each list's size: every page ranks the same pool (its total and
    scores unchanged), whatever the offset."""
    whole = _search(indexed, "cart item", granularity="chunk", limit=50, candidates=5)
    assert 5 <= whole.total < _search(indexed, "cart item", granularity="chunk", limit=50).total
    pages = [
        _search(indexed, "cart item", granularity="chunk", limit=3, offset=at, candidates=5)
        for at in range(0, whole.total, 3)
    ]
    assert {p.total for p in pages} == {whole.total}
    paged = [(h.id, h.relevance_score) for p in pages for h in _chunks(p)]
    assert paged == [(h.id, h.relevance_score) for h in _chunks(whole)]
    assert whole.files == tuple(dict.fromkeys(h.file_id for h in _chunks(whole)))
    scores = [h.relevance_score for h in _chunks(whole)]
    assert whole.mean_relevance == pytest.approx(sum(scores) / len(scores), abs=1e-5)
    assert {p.files for p in pages} == {whole.files}


def test_min_score_leaves_out_lower_results_and_their_count(indexed: Lode) -> None:
    every = _chunks(_search(indexed, "cart item", granularity="chunk", limit=100))
    kept = _search(indexed, "cart item", granularity="chunk", limit=100, min_score=0.4)
    assert 0 < kept.total == len([h for h in every if h.relevance_score >= 0.4]) < len(every)
    assert [h.id for h in _chunks(kept)] == [h.id for h in every if h.relevance_score >= 0.4]
    documents = _search(indexed, "cart item", file_limit=100, min_score=0.4)
    assert {d.id for d in documents.documents} == {h.file_id for h in _chunks(kept)}


def _holding(api: Lode, *terms: str) -> dict[str, int]:
    """Chunk id → how many of ``terms`` its text holds (as grep finds them), for those holding any."""
    from indexer.search._terms import contains_term

    project = api.store.projects.get("shop")
    docs, _ = api.store.documents.page(project.id, 0, 1000)
    counts = {
        c.id: sum(contains_term(c.chunk.content, t) for t in terms)
        for c in api.store.chunks.of_files([d.id for d in docs])
    }
    return {i: n for i, n in counts.items() if n}


@pytest.mark.parametrize("mode", ["hybrid", "lexical"])
def test_exact_terms_narrow_the_search_to_the_chunks_holding_them(indexed: Lode, mode: str) -> None:
    """Every chunk holding a term is ranked (those no list found too), and only those; at
    document granularity, their files."""
    holding = _holding(indexed, "percent")
    found = _search(
        indexed, "reduce an amount", exact_terms=("percent",), granularity="chunk", mode=mode, limit=100
    )
    assert {h.id for h in _chunks(found)} == set(holding)
    assert _chunks(found)[0].node_name == "apply_discount"
    files = _search(indexed, "reduce an amount", exact_terms=("percent",), mode=mode, file_limit=100)
    assert {d.id for d in files.documents} == {h.file_id for h in _chunks(found)}
    assert _search(indexed, "cart", exact_terms=("zzzNowhere",), granularity="chunk").total == 0


def test_each_exact_term_a_chunk_lacks_scales_its_score(indexed: Lode) -> None:
    """With no query text to rank by, every chunk holding a term scores alike but for the
    terms it holds: 1.5 times less for each term it lacks; and no split unit is folded."""
    terms = ("cart", "item", "discount")
    holding = _holding(indexed, *terms)
    options = {"exact_terms": terms, "granularity": "chunk", "limit": 100, "roles": ("implementation",)}
    hits = _chunks(_search(indexed, "", **options))
    assert len(set(holding.values())) >= 2
    assert {h.id for h in hits} <= set(holding)
    for hit in hits:
        assert hit.relevance_score == pytest.approx(0.5 * 1.5 ** (holding[hit.id] - len(terms)), abs=1e-6)
        assert hit.folded_pieces == 0


def test_scores_are_deterministic(indexed: Lode) -> None:
    a = _search(indexed, "session token refresh", granularity="chunk")
    b = _search(indexed, "session token refresh", granularity="chunk")
    assert [(h.id, h.relevance_score) for h in _chunks(a)] == [(h.id, h.relevance_score) for h in _chunks(b)]


def test_projects_filter_by_name_and_id(indexed: Lode) -> None:
    project = indexed.store.projects.get("shop")
    by_name = _search(indexed, "cart", projects=("shop",))
    by_id = _search(indexed, "cart", projects=(project.id,))
    assert [d.id for d in by_name.documents] == [d.id for d in by_id.documents]
    assert by_name.semantic_coverage == {project.id: 1.0}


def test_empty_index_returns_nothing(lode: Lode, repo: Path) -> None:
    lode.register(repo)
    resp = lode.search(SearchOptions(query="cart"))
    assert resp.documents == ()
    assert resp.total == 0


@pytest.mark.parametrize("granularity", ["chunk", "document"])
def test_project_scope_with_two_projects(tmp_path: Path, granularity: str) -> None:
    """One project named: only its files; every project (named or by default): both,
    although then the filter drops the project condition."""
    api = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    try:
        api.index(make_repo(tmp_path / "a"), name="alpha")
        api.index(make_repo(tmp_path / "b"), name="beta")
        alpha, beta = api.store.projects.get("alpha"), api.store.projects.get("beta")
        searcher = api.searcher
        assert searcher.project_scope([alpha]) == (alpha.id,)
        assert searcher.project_scope([alpha, beta]) == ()

        def projects(**kw: object) -> set[str]:
            resp = _search(api, "cart total", granularity=granularity, **kw)
            found = {g.project for g in resp.groups} | {d.project for d in resp.documents}
            assert resp.semantic_coverage.keys() <= {alpha.id, beta.id}
            return found

        assert projects(projects=("alpha",)) == {"alpha"}
        assert projects(projects=(beta.id,)) == {"beta"}
        assert projects() == {"alpha", "beta"}
        assert projects(projects=("alpha", "beta")) == {"alpha", "beta"}
    finally:
        api.close()


@pytest.fixture
def reader_writer(tmp_path: Path) -> Iterator[tuple[Path, Lode, Lode]]:
    """The fixture repo indexed through one connection, and a second one on the same store."""
    repo = make_repo(tmp_path / "repo")
    config = load_config(env={}, overrides={"db": tmp_path / "db"})
    reader = Lode(config, embedder=FakeEmbedder())
    writer = Lode(config, embedder=FakeEmbedder())
    try:
        reader.index(repo, name="shop")
        yield repo, reader, writer
    finally:
        writer.close()
        reader.close()


@pytest.mark.parametrize("cached_coverage", [True, False])
def test_chunks_without_a_vector_never_come_from_the_vector_list(
    reader_writer: tuple[Path, Lode, Lode], cached_coverage: bool
) -> None:
    """Rows written since the last embedding hold a placeholder vector; they must never
    come back from the vector list, whether this process's coverage read (cached for up
    to a second) saw them or not (the ``embedded`` prefilter is dropped only at a table
    version counted as fully embedded)."""
    repo, reader, writer = reader_writer
    assert reader.store.vectors.coverage() == 1.0  # cached for up to a second
    (repo / "src" / "fresh.py").write_text(
        "def fresh_one(x):\n    return x\n\n\ndef fresh_two(y):\n    return y * 2\n"
    )
    writer.index(repo, name="shop", embed=False)
    assert writer.store.vectors.coverage() < 1.0
    if not cached_coverage:
        reader.store.db.cache.clear()
    resp = _search(reader, "fresh", granularity="chunk", mode="semantic", limit=100)
    paths = {h.file_path for h in _chunks(resp)}
    assert paths
    assert "src/fresh.py" not in paths


def test_the_embedded_prefilter_is_dropped_only_at_a_fully_embedded_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo")
    api = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    try:
        api.index(repo, name="shop")
        store = api.store
        seen: list[tuple[str, bool]] = []
        original = store.search.vector_candidates

        def spy(kind: str, *args: object, **kwargs: object) -> object:
            seen.append((kind, bool(kwargs.get("embedded_only", True))))
            return original(kind, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(store.search, "vector_candidates", spy)
        version = store.search.chunk_table_version()
        assert store.search.all_embedded_at(version)
        _search(api, "discount", granularity="chunk")
        _search(api, "discount", granularity="document")
        # chunk lists drop the prefilter (files rank by their best chunks: no document list)
        assert sorted(seen) == [("chunks", False), ("chunks", False)]

        (repo / "src" / "fresh.py").write_text("def fresh_one(x):\n    return x\n")
        api.index(repo, name="shop", embed=False)
        assert store.search.chunk_table_version() != version
        assert not store.search.all_embedded_at(store.search.chunk_table_version())
        seen.clear()
        resp = _search(api, "fresh one", granularity="chunk", mode="semantic", limit=100)
        assert seen == [("chunks", True)]
        assert "src/fresh.py" not in {h.file_path for h in _chunks(resp)}
    finally:
        api.close()


def test_a_write_during_a_search_does_not_reach_the_version_it_pinned(
    reader_writer: tuple[Path, Lode, Lode], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The prefilter is dropped at a fully embedded version; rows without a vector written
    by another connection while the vector query runs are not in the version the search
    pinned (so no placeholder vector is found), and the next search keeps the prefilter."""
    repo, reader, writer = reader_writer
    fresh = "".join(f"def fresh_{i}(x):\n    return x + {i}\n\n\n" for i in range(40))
    (repo / "src" / "fresh.py").write_text(fresh)
    store = reader.store
    seen: list[bool] = []
    original = store.search.vector_candidates

    def write_then_search(kind: str, *args: object, **kwargs: object) -> object:
        seen.append(bool(kwargs.get("embedded_only", True)))
        if len(seen) == 1:
            writer.index(repo, name="shop", embed=False)  # placeholder vectors appear now
        return original(kind, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(store.search, "vector_candidates", write_then_search)
    resp = _search(reader, "fresh", granularity="chunk", mode="semantic", limit=100)
    assert seen == [False]
    paths = {h.file_path for h in _chunks(resp)}
    assert paths
    assert "src/fresh.py" not in paths
    resp = _search(reader, "fresh", granularity="chunk", mode="semantic", limit=100)
    assert seen == [False, True]  # the new version has rows without a vector
    assert "src/fresh.py" not in {h.file_path for h in _chunks(resp)}


def _by_id(resp: SearchResponse) -> dict[str, float]:
    return {h.id: h.relevance_score for h in _chunks(resp)}


@pytest.mark.parametrize("mode", ["hybrid", "semantic", "lexical"])
def test_chunk_search_by_row_ids_equals_the_search_by_ids(
    indexed: Lode, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    queries = ["cart item", "session token refresh", "parse the request", "render widget"]
    real_read = indexed.store.chunks.views_at_rows
    pinned_reads: list[int] = []

    def spy(row_ids: list[int], version: int | None = None) -> dict[int, ChunkView]:
        pinned_reads.append(len(row_ids))
        return real_read(row_ids, version)

    monkeypatch.setattr(indexed.store.chunks, "views_at_rows", spy)
    by_rows = {q: _search(indexed, q, granularity="chunk", mode=mode, limit=20) for q in queries}
    assert len(pinned_reads) == len(queries), "each search read its page by row id, once"
    # a pinned version that cannot be read (its files removed): the search falls back to ids
    read_rows: list[int] = []

    def gone(row_ids: list[int], version: int | None = None) -> dict[int, ChunkView]:
        read_rows.append(len(row_ids))
        raise OSError(f"version {version} was cleaned up")

    monkeypatch.setattr(indexed.store.chunks, "views_at_rows", gone)
    for q in queries:
        a, b = _by_id(_search(indexed, q, granularity="chunk", mode=mode, limit=20)), _by_id(by_rows[q])
        assert a, q
        assert sorted(a.values()) == sorted(b.values()), q
        # the same chunks, except where ties at the page's last score fall (id or table order)
        last = min(a.values())
        assert {i: v for i, v in a.items() if v > last} == {i: v for i, v in b.items() if v > last}, q
    assert read_rows, "the pinned path was tried first"


@pytest.mark.parametrize(("granularity", "limit"), [("chunk", 10), ("chunk", 1), ("document", 5)])
def test_a_write_between_finding_and_reading_rows_never_shows_another_chunk(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch, granularity: str, limit: int
) -> None:
    """A delete and a compaction (which moves rows) between the candidate lists and the page
    read: the page is read in the version its row ids were found in, so every hit is the
    chunk that was ranked, and the next search sees the delete."""
    api = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    sizes = {"limit": limit} if granularity == "chunk" else {"file_limit": limit}
    try:
        project_id = api.index(repo, name="shop").project_id
        store = api.store
        before = _search(api, "cart item", granularity=granularity, **sizes)
        assert any(h.file_path == "src/shop/cart.py" for h in _chunks(before))
        cart = store.documents.states(project_id)["src/shop/cart.py"].id
        real_read = store.chunks.views_at_rows
        reads: list[int] = []

        def read_after_a_rewrite(row_ids: list[int], version: int | None = None) -> object:
            if not reads:  # the first time: delete a file and compact between finding and reading
                store.files.delete([cart])
                store.maintenance.optimize()
                assert store.search.chunk_table_version() != version
            reads.append(len(row_ids))
            return real_read(row_ids, version)

        monkeypatch.setattr(store.chunks, "views_at_rows", read_after_a_rewrite)
        during = _search(api, "cart item", granularity=granularity, **sizes)
        assert len(reads) == 1
        fields = [(h.id, h.relevance_score, h.file_path, h.content) for h in _chunks(during)]
        assert fields == [(h.id, h.relevance_score, h.file_path, h.content) for h in _chunks(before)]
        monkeypatch.setattr(store.chunks, "views_at_rows", real_read)
        after = _chunks(_search(api, "cart item", granularity=granularity, **sizes))
        assert after
        assert all(h.file_path != "src/shop/cart.py" for h in after)
        stored = {c.id: c for c in store.chunks.get([h.id for h in after])}
        assert all(stored[h.id].chunk.content == h.content for h in after)  # each hit is its own chunk
    finally:
        api.close()


@pytest.mark.parametrize("granularity", ["chunk", "document"])
def test_a_row_id_lance_cannot_read_any_more_makes_the_search_try_again(
    indexed: Lode, monkeypatch: pytest.MonkeyPatch, granularity: str
) -> None:
    expected = _by_id(_search(indexed, "cart item", granularity=granularity))
    real_read = indexed.store.chunks.views_at_rows
    calls: list[int] = []

    def gone_once(row_ids: list[int], version: int | None = None) -> dict[int, ChunkView]:
        calls.append(len(row_ids))
        if len(calls) == 1:  # what Lance raises when the pinned version's files were removed
            raise OSError("Not found: code_chunks.lance/data/….lance")
        return real_read(row_ids, version)

    monkeypatch.setattr(indexed.store.chunks, "views_at_rows", gone_once)
    assert _by_id(_search(indexed, "cart item", granularity=granularity)) == expected
    assert len(calls) == 2


@pytest.mark.slow
def test_searches_keep_answering_while_the_writer_folds_optimizes_and_prunes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Maintenance through pylance (index folds, segment merges, cleanups) must not hold
    the readers' shared dataset objects: a search meanwhile would fail."""
    from datetime import timedelta

    from indexer.store._lance import _maintenance

    monkeypatch.setattr(_maintenance, "FOLD_ROWS", 4)
    repo = make_repo(tmp_path / "repo")
    api = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    try:
        api.index(repo, name="shop")
        store = api.store
        errors: list[BaseException] = []
        done = threading.Event()

        def search() -> None:
            while not done.is_set():
                try:
                    _search(api, "cart item total", granularity="chunk")
                    _search(api, "cart item total", granularity="document")
                except BaseException as exc:  # any failure is the finding
                    errors.append(exc)
                    return

        threads = [threading.Thread(target=search) for _ in range(3)]
        for thread in threads:
            thread.start()
        try:
            for n in range(6):
                (repo / "src" / f"gen_{n}.py").write_text(
                    "".join(f"def gen_{n}_{i}(x):\n    return x + {i}\n\n\n" for i in range(12))
                )
                api.index(repo, name="shop", embed=False)
                store.maintenance.fold_new_rows()
                if n % 2:
                    store.maintenance.optimize()
                store.versions.prune(keep=timedelta(0))
        finally:
            done.set()
            for thread in threads:
                thread.join()
        assert not errors, errors[:1]
    finally:
        api.close()


def test_an_identifier_search_reads_one_version_while_files_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search for an identifier ranks candidates with ids; every read of it is pinned to
    one version of the chunk table: read at the newest version each, a file rewritten
    between the candidate lists and the read of their facts left row ids of deleted rows,
    which Lance 13 refuses to read ("must not target deleted rows": a 503 while a watcher
    re-indexed saved files)."""
    repo = make_repo(tmp_path / "repo")
    api = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    try:
        api.index(repo, name="shop")
        store = api.store
        real = store.search.chunk_facts
        pricing = repo / "src" / "shop" / "pricing.py"

        def rewrite_first(candidates, version=None):  # type: ignore[no-untyped-def]
            # the file changes after the candidates were found, before their facts are read
            pricing.write_text(pricing.read_text() + "\n\ndef added_later(x):\n    return x\n")
            api.index(repo, name="shop", paths=["src/shop/pricing.py"], embed=False)
            return real(candidates, version)

        monkeypatch.setattr(store.search, "chunk_facts", rewrite_first)
        resp = _search(api, "apply_discount", granularity="chunk", mode="lexical")
        names = [h.node_name for h in _chunks(resp)]
        assert "apply_discount" in names
    finally:
        api.close()


def test_chunk_facts_of_rows_deleted_since_are_read_by_id(tmp_path: Path) -> None:
    """Candidates found in an older version whose rows were deleted since: their facts come
    by id (never an error), at the newest version."""
    repo = make_repo(tmp_path / "repo")
    api = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    try:
        api.index(repo, name="shop")
        store = api.store
        found = store.search.text_candidates("chunks", "discount", ChunkFilter(), 20)
        assert found
        pricing = repo / "src" / "shop" / "pricing.py"
        pricing.write_text(pricing.read_text() + "\n\ndef added_later(x):\n    return x\n")
        api.index(repo, name="shop", paths=["src/shop/pricing.py"], embed=False)
        facts = store.search.chunk_facts(found)
        alive = {c.id for c in store.chunks.get([c.id for c in found])}
        assert alive
        assert set(facts) == {c.key for c in found if c.id in alive}
    finally:
        api.close()


def test_a_cancelled_search_stops_at_its_next_stage(indexed: Lode) -> None:
    from server._search_worker import answer

    lode = indexed
    gone = threading.Event()
    with cancellable(gone):
        assert lode.search(SearchOptions(query="cart")).total > 0
        gone.set()
        with pytest.raises(SearchCancelledError):
            lode.search(SearchOptions(query="cart"))
        status, body = answer(lode, SearchOptions(query="cart"))
    assert status == 499, body
    assert lode.search(SearchOptions(query="cart")).total > 0  # outside: not cancelled
