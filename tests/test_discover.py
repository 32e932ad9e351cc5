"""Discovery: each stage on hand-built inputs, the config file, and the pipeline end to end
(fixture repo; fake embedder, and once with the real model)."""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import fields
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import make_repo

import indexer.search.discover as discover_pkg
from indexer.api import Lode
from indexer.cli import cli
from indexer.config import load_config
from indexer.config_file import discover_overrides, load_config_file, load_discover_config
from indexer.embed import Embedder
from indexer.errors import ConfigError, ValidationError
from indexer.search.discover import (
    STAGES,
    AnswerPlan,
    Bullet,
    CompressionConfig,
    DiscoverConfig,
    ExpansionConfig,
    FilterConfig,
    FocusConfig,
    PlanConfig,
    ProjectRef,
    ReadmeConfig,
    RenderConfig,
    ScoredChunk,
    ScoringConfig,
    build_answer_plan,
    categorize,
    compress_evidence,
    context_window,
    discover,
    expand_queries,
    extract_terms,
    filter_projects,
    focus_projects,
    mmr_select,
    promote_readme,
    remove_near_duplicates,
    render_prompt,
    run_stage,
    score_projects,
    with_overrides,
)
from indexer.search.discover._pipeline import names_project

ROOT = Path(__file__).parent.parent
STAGE_NAMES = [
    "filter_projects", "score_projects", "expand_queries", "broad_discovery", "semantic_focus",
    "promote_readme", "compress_evidence", "build_answer_plan", "render_prompt",
]  # fmt: skip


def _chunk(
    path: str, index: int = 0, score: float = 0.5, content: str = "", project: str = "p", **kw: object
) -> ScoredChunk:
    start = 1 + 10 * index
    return ScoredChunk(project=project, file_path=path, content=content or f"chunk {index} of {path}",
                       start_line=start, end_line=start + 9, chunk_index=index, score=score,
                       id=f"{project}/{path}#{index}", **kw)  # type: ignore[arg-type]  # fmt: skip


def _bullet(text: str, category: str, score: float, path: str = "README.md", line: int = 1) -> Bullet:
    return Bullet(text=text, citation=f"p:{path}:L{line}-L{line}", category=category, score=score, project="p",
                  file_path=path, start_line=line, end_line=line)  # fmt: skip


def test_public_api_is_sorted_and_complete() -> None:
    assert discover_pkg.__all__ == sorted(discover_pkg.__all__, key=lambda n: (not n.isupper(), n))
    assert all(hasattr(discover_pkg, name) for name in discover_pkg.__all__)
    assert list(STAGES) == STAGE_NAMES


# ---- 1. filter ------------------------------------------------------------------------
PROJECTS = [
    ProjectRef(name)
    for name in ("vectorizer-docs", "vectorizer-source", "test-collection", "vectorizer-test")
]


def test_filter_globs_include_and_exclude() -> None:
    found = filter_projects(
        "vectorizer features", PROJECTS, FilterConfig(include=("vectorizer*",), exclude=("*-test",))
    )
    assert [p.name for p in found.projects] == ["vectorizer-docs", "vectorizer-source"]
    assert found.terms == ("vectorizer", "features")


def test_filter_defaults_to_every_project_whatever_the_question() -> None:
    assert len(filter_projects("how are discounts applied", PROJECTS).projects) == len(PROJECTS)
    only_docs = filter_projects("anything", PROJECTS, FilterConfig(include=("*-DOCS",)))
    assert [p.name for p in only_docs.projects] == ["vectorizer-docs"]  # case-insensitive


def test_stopwords_english_and_portuguese() -> None:
    assert extract_terms("O que é o vectorizer") == ["vectorizer"]
    assert extract_terms("What is the Cart, and how does it work?") == ["Cart", "work"]
    assert extract_terms("what is parse_request", ["parse_request"]) == []


# ---- 2. score -------------------------------------------------------------------------
def test_score_projects_name_terms_and_signals() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    projects = [
        ProjectRef("misc", chunks=10, updated_at=now - timedelta(days=400)),
        ProjectRef("vectorizer-docs", chunks=10, updated_at=now, tags=("documentation",)),
        ProjectRef("other-core", chunks=10, updated_at=now),
    ]
    scored = score_projects(["vectorizer"], projects, now=now)
    assert [s.project.name for s in scored] == ["vectorizer-docs", "other-core", "misc"]
    best = scored[0]
    assert best.name_match == 1.0  # contains the term and starts with it (x1.5, capped)
    assert best.term_boost == pytest.approx(1 / 5)  # "docs"
    assert all(0.0 <= s.score <= 1.0 for s in scored)
    only_signals = score_projects(
        ["vectorizer"], projects, ScoringConfig(name_match_weight=0, term_boost_weight=0), now=now
    )
    assert only_signals[-1].project.name == "misc"  # old: recency decayed


def test_focus_prefers_the_projects_the_question_names() -> None:
    scored = score_projects(
        ["click", "command"], [ProjectRef("click"), ProjectRef("commander"), ProjectRef("cobra")]
    )
    evidence = [_chunk("a.js", score=0.9, project="commander"), _chunk("b.go", score=0.9, project="cobra")]
    assert [p.name for p in focus_projects(scored, evidence, FocusConfig(), ["click", "command"])] == [
        "click"
    ]
    mixed = focus_projects(scored, evidence, FocusConfig(prefer_named_projects=False, top_projects=2))
    assert len(mixed) == 2
    assert names_project(["Click"], "click-docs")
    assert not names_project(["command"], "commander")


# ---- 3. expand ------------------------------------------------------------------------
def test_expand_queries_templates_round_robin_and_capped() -> None:
    queries = expand_queries("O que é o vectorizer")
    assert queries[0] == "O que é o vectorizer"
    assert len(queries) == 8
    assert queries[1:4] == ["vectorizer definition", "vectorizer features", "vectorizer architecture"]
    assert expand_queries("O que é o vectorizer") == queries  # deterministic
    assert len(expand_queries("what is x", ExpansionConfig(max_expansions=3))) == 3
    only_api = expand_queries("vectorizer", ExpansionConfig(include_definition=False, include_features=False,
        include_architecture=False, include_performance=False, include_use_cases=False))  # fmt: skip
    assert only_api == ["vectorizer", "vectorizer API", "vectorizer usage"]
    custom = ExpansionConfig(templates={"definition": ("meaning of {terms}",)}, include_features=False,
                             include_architecture=False, include_api=False, include_performance=False,
                             include_use_cases=False)  # fmt: skip
    assert expand_queries("what is the cart", custom) == ["what is the cart", "meaning of cart"]


def test_expansion_skips_a_template_equal_to_the_question() -> None:
    queries = expand_queries("what is shop")
    assert queries.count("what is shop") == 1


# ---- 4. broad: dedup and MMR -----------------------------------------------------------
def _unit(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_mmr_picks_a_diverse_item_over_a_near_duplicate() -> None:
    a, near_dup, diverse = _chunk("a.py", score=1.0), _chunk("b.py", score=0.95), _chunk("c.py", score=0.8)
    vectors = {a.key: _unit(1, 0, 0), near_dup.key: _unit(1, 0.05, 0), diverse.key: _unit(0, 1, 0)}
    picked = mmr_select([near_dup, diverse, a], vectors, k=2, mmr_lambda=0.7)
    assert [c.file_path for c in picked] == ["a.py", "c.py"]
    relevance_only = mmr_select([near_dup, diverse, a], vectors, k=2, mmr_lambda=1.0)
    assert [c.file_path for c in relevance_only] == ["a.py", "b.py"]
    assert mmr_select([], vectors, 3, 0.7) == []


def test_near_duplicates_keep_the_better_copy() -> None:
    low, high, other = (
        _chunk("low.py", score=0.4),
        _chunk("high.py", score=0.9),
        _chunk("other.py", score=0.1),
    )
    vectors = {low.key: _unit(1, 0.01), high.key: _unit(1, 0), other.key: _unit(0, 1)}
    kept = remove_near_duplicates([low, other, high], vectors, threshold=0.85)
    assert [c.file_path for c in kept] == ["high.py", "other.py"]
    same_text = [_chunk("x.py", score=0.5, content="same"), _chunk("y.py", score=0.6, content="same")]
    assert [c.file_path for c in remove_near_duplicates(same_text, {}, 0.85)] == ["y.py"]


# ---- 5. focus: neighbour context ---------------------------------------------------------
def test_context_window_adds_neighbours_of_the_same_file() -> None:
    file_f = [_chunk("f.py", i) for i in range(10)]
    file_g = [_chunk("g.py", i) for i in range(4)]
    hits = [_chunk("f.py", 5, score=0.8), _chunk("g.py", 0, score=0.6), _chunk("f.py", 7, score=0.4)]
    files = {("p", "f.py"): file_f, ("p", "g.py"): file_g}
    context = context_window(hits, files, window=2, decay=0.5)
    spots = {(c.file_path, c.chunk_index): c for c in context}
    assert set(spots) == {
        ("f.py", 3),
        ("f.py", 4),
        ("f.py", 6),
        ("f.py", 8),
        ("f.py", 9),
        ("g.py", 1),
        ("g.py", 2),
    }
    assert ("f.py", 7) not in spots  # a hit itself is not context
    assert spots[("f.py", 4)].score == pytest.approx(0.4)  # 0.8 * 0.5
    assert spots[("f.py", 3)].score == pytest.approx(0.2)  # 0.8 * 0.25
    assert spots[("f.py", 6)].score == pytest.approx(0.4)  # best of 0.8*0.5 and 0.4*0.5
    assert all(c.origin == "context" for c in context)
    assert context_window(hits, files, window=0, decay=0.5) == []


# ---- 6. README promotion -------------------------------------------------------------
def test_promote_readme_first_and_boosted() -> None:
    chunks = [_chunk("src/a.py", score=0.9), _chunk("README.md", score=0.3), _chunk("docs/guide.md", score=0.5),
              _chunk("pkg/readme.rst", score=0.2), _chunk("src/notes.md", score=0.5)]  # fmt: skip
    promoted = promote_readme(chunks)
    assert [c.file_path for c in promoted[:2]] == ["README.md", "pkg/readme.rst"]
    assert promoted[0].score == pytest.approx(0.45)
    scores = {c.file_path: c.score for c in promoted}
    assert scores["docs/guide.md"] == pytest.approx(0.6)  # top-level docs boosted
    assert scores["src/notes.md"] == 0.5  # "*.md" matches top-level files only
    mixed = promote_readme(chunks, ReadmeConfig(always_top=False))
    assert mixed[0].file_path == "src/a.py"


# ---- 7. compress ---------------------------------------------------------------------
README = """# Vectorizer

Vectorizer is a high-performance vector database used for semantic search in code.
It is small.

## Architecture

The server package holds the HTTP layer, the index and the background workers together."""


def test_compress_extracts_cited_categorised_sentences() -> None:
    chunk = _chunk("README.md", 0, score=1.0, content=README, language="markdown", node_type="section")
    bullets = compress_evidence(["vectorizer"], [chunk])
    texts = {b.text: b for b in bullets}
    first = texts["Vectorizer is a high-performance vector database used for semantic search in code."]
    assert first.category == "definition"
    assert first.citation == "p:README.md:L3-L3"  # the sentence's own line
    assert "It is small." not in texts  # under 8 words
    arch = texts["The server package holds the HTTP layer, the index and the background workers together."]
    assert arch.category == "architecture"
    assert arch.citation == "p:README.md:L8-L8"


def test_compress_code_gives_signature_summary_and_key_lines() -> None:
    code = 'def apply_discount(price: int, percent: int) -> int:\n    """Apply a whole-percent discount."""\n' \
           "    cut = price * percent // 100\n    return price - cut\n"  # fmt: skip
    chunk = _chunk("src/pricing.py", 2, score=0.7, content=code, language="python", node_type="function")
    [bullet] = compress_evidence(["discount", "percent"], [chunk])
    assert bullet.kind == "code"
    assert bullet.text.startswith("`def apply_discount(price: int, percent: int) -> int:`")
    assert "Apply a whole-percent discount." in bullet.text
    assert "`cut = price * percent // 100`" in bullet.text
    assert bullet.citation == "p:src/pricing.py:L21-L30"


def test_citations_are_unique_across_files() -> None:
    text = "The cart number {} keeps every item of the order in memory until checkout."
    paths = [("p", "a/README.md"), ("p", "b/README.md"), ("p", "docs/x.md"), ("q", "docs/x.md")]
    chunks = [_chunk(path, 0, content=text.format(i), project=project, language="markdown")
              for i, (project, path) in enumerate(paths)]  # fmt: skip
    assert len({(c.chunk_index, c.start_line, c.end_line) for c in chunks}) == 1  # same position everywhere
    bullets = compress_evidence([], chunks)
    citations = [b.citation for b in bullets]
    assert len(citations) == 4
    assert len(set(citations)) == 4
    assert all(re.fullmatch(r"[pq]:[\w/.]+:L1-L1", c) for c in citations)
    duplicate = compress_evidence(
        [], [*chunks, _chunk("c.md", 0, content=text.format(0), language="markdown")]
    )
    assert len(duplicate) == 4  # the same sentence twice is one bullet


def test_compress_limits_per_document_and_total() -> None:
    sentence = "Sentence number {} talks about the cart and its many items in detail."
    body = " ".join(sentence.format(i) for i in range(10))
    chunks = [
        _chunk("README.md", i, content=body.replace("number", f"n{i}"), language="markdown") for i in range(3)
    ]
    assert len(compress_evidence([], chunks, CompressionConfig(max_per_doc=3))) == 3
    assert (
        len(compress_evidence([], chunks, CompressionConfig(max_per_doc=10, max_per_chunk=10, max_bullets=4)))
        == 4
    )


def test_categories() -> None:
    assert categorize("lode is a local-first code search engine") == "definition"
    assert categorize("It supports hybrid search") == "feature"
    assert categorize("Latency stays under 30 ms") == "performance"
    assert categorize("Talk to it over the HTTP API") == "integration"
    assert categorize("For example, index a folder") == "use_case"
    assert categorize("Nothing to see", heading="Architecture") == "architecture"
    assert categorize("Nothing to see") == "other"


# ---- 8. plan -------------------------------------------------------------------------
def test_answer_plan_sections_in_priority_order() -> None:
    bullets = [_bullet("f1", "feature", 0.9), _bullet("d1", "definition", 0.5, "a.md"),
               _bullet("d2", "definition", 0.7), *(_bullet(f"o{i}", "other", 0.1, "b.md") for i in range(7))]  # fmt: skip
    plan = build_answer_plan(bullets)
    assert [s.category for s in plan.sections] == ["definition", "feature", "other"]
    assert [b.text for b in plan.sections[0].bullets] == ["d2", "d1"]
    assert [s.priority for s in plan.sections] == [1, 2, 3]
    assert len(plan.sections[2].bullets) == 5
    assert plan.omitted == 2
    assert plan.sources == ("p:README.md", "p:a.md", "p:b.md")
    strict = build_answer_plan(
        bullets, PlanConfig(sections=("feature", "definition"), min_bullets_per_section=2)
    )
    assert [s.category for s in strict.sections] == ["definition"]


# ---- 9. render -----------------------------------------------------------------------
def _plan(n: int) -> AnswerPlan:
    bullets = [_bullet(f"Evidence sentence number {i} " + "with several words " * 5, cat, 1 - i / 100, f"f{i}.md", i)
               for i, cat in zip(range(n), ["definition", "feature"] * n, strict=False)]  # fmt: skip
    return build_answer_plan(bullets, PlanConfig(max_bullets_per_section=100))


def test_render_fits_the_budget_cutting_only_at_bullet_boundaries() -> None:
    plan = _plan(20)
    full = render_prompt("what is p", plan, RenderConfig(max_prompt_tokens=100_000))
    assert full.dropped_bullets == 0
    assert full.text.count("[p:f") == 20
    small = render_prompt("what is p", plan, RenderConfig(max_prompt_tokens=400))
    assert small.tokens <= 400 < full.tokens
    assert 0 < small.dropped_bullets < 20
    kept = [line for line in small.text.splitlines() if re.match(r"\d+\. ", line)]
    whole = {f"{i}. {b.text} [{b.citation}]" for s in plan.sections for i, b in enumerate(s.bullets, 1)}
    assert kept
    assert all(line in whole for line in kept)
    assert len(kept) + small.dropped_bullets == 20
    note = f"{small.dropped_bullets} bullet(s) dropped"
    assert note in small.text
    assert "Truncated to fit 400 tokens" in small.text
    assert sum(small.dropped_by_section.values()) == small.dropped_bullets
    sources = small.text.split("## Sources")[1]
    assert sources.count("- p:") == len(kept)  # only the kept bullets' files


def test_render_formats_and_token_counter() -> None:
    plan = _plan(4)
    plain = render_prompt("q", plan, RenderConfig(format_style="plain"))
    assert "DEFINITION" in plain.text
    assert "#" not in plain.text
    as_json = json.loads(render_prompt("q", plan, RenderConfig(format_style="json")).text)
    assert as_json["sections"][0]["title"] == "Definition"
    assert as_json["sections"][0]["bullets"][0]["citation"].startswith("p:f0.md:L")
    truncated = json.loads(render_prompt("q", plan, RenderConfig(format_style="json", max_prompt_tokens=60),
                                         lambda text: len(text) // 4).text)  # fmt: skip
    assert truncated["truncated"]["dropped_by_section"]
    no_sources = render_prompt("q", plan, RenderConfig(include_sources=False)).text
    assert "[p:" not in no_sources
    assert "## Sources" not in no_sources


# ---- config --------------------------------------------------------------------------
def test_overrides_validate_sections_keys_and_values() -> None:
    config = with_overrides(DiscoverConfig(), {"broad": {"mmr_lambda": 0.5, "k_per_query": 4}})
    assert config.broad.mmr_lambda == 0.5
    assert config.broad.k_per_query == 4
    with pytest.raises(ValidationError) as unknown:
        with_overrides(DiscoverConfig(), {"broad": {"mmr": 1, "lambda": 2}, "nope": {}})
    assert {e.field for e in unknown.value.errors} == {"config.nope"}
    with pytest.raises(ValidationError) as keys:
        with_overrides(DiscoverConfig(), {"broad": {"mmr": 1, "lambda": 2}})
    assert [e.field for e in keys.value.errors] == ["config.broad.mmr", "config.broad.lambda"]
    with pytest.raises(ValidationError, match=r"config\.broad\.mmr_lambda"):
        with_overrides(DiscoverConfig(), {"broad": {"mmr_lambda": "high"}})
    with pytest.raises(ValidationError, match="mmr_lambda must be between 0 and 1"):
        with_overrides(DiscoverConfig(), {"broad": {"mmr_lambda": 2}})
    with pytest.raises(ConfigError):
        RenderConfig(format_style="html")


def test_config_file_sets_defaults_and_names_unknown_keys(tmp_path: Path) -> None:
    path = tmp_path / "lode.toml"
    env = {"LODE_CONFIG": str(path)}
    assert load_discover_config(env=env) == DiscoverConfig()  # no file: defaults
    path.write_text('[discover.broad]\nmmr_lambda = 0.5\n[discover.render]\nformat_style = "plain"\n')
    config = load_discover_config(env=env, overrides={"render": {"max_prompt_tokens": 900}})
    assert (config.broad.mmr_lambda, config.render.format_style, config.render.max_prompt_tokens) == (
        0.5,
        "plain",
        900,
    )
    path.write_text("[discover.broad]\nmmr_lamda = 0.5\nkk = 1\n")
    with pytest.raises(ConfigError, match=r"discover\.broad\.mmr_lamda, discover\.broad\.kk"):
        discover_overrides(path)
    path.write_text("[discover]\nbroad = 3\n")
    with pytest.raises(ConfigError, match=r"discover\.broad"):
        discover_overrides(path)
    path.write_text("[search]\nx = 1\n")
    with pytest.raises(ConfigError, match="unknown key"):
        load_config_file(path)
    path.write_text("[discover\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config_file(path)


def test_example_config_file_documents_every_default() -> None:
    example = ROOT / "docs" / "lode.example.toml"
    table = tomllib.loads(example.read_text())["discover"]
    config = DiscoverConfig()
    for section in fields(config):
        current = getattr(config, section.name)
        documented = set(table[section.name]) | ({"templates"} if section.name == "expansion" else set())
        assert documented == {f.name for f in fields(current)}, section.name
    assert with_overrides(DiscoverConfig(), table) == config


# ---- the pipeline on the fixture repo (fake embedder) ------------------------------------
@pytest.fixture
def shop(lode: Lode, tmp_path: Path) -> Lode:
    lode.index(make_repo(tmp_path / "repo"), name="shop")
    return lode


def test_discover_what_is_shop(shop: Lode) -> None:
    result = discover(shop, "what is Shopfront")
    definition = result.plan.sections[0]
    assert definition.title == "Definition"
    assert definition.bullets[0].citation.startswith("shop:README.md:L")
    assert "Shopfront is a tiny example shop" in definition.bullets[0].text
    assert "### Definition" in result.answer_prompt
    m = result.metrics
    assert set(STAGE_NAMES) <= set(m.stage_ms)
    assert m.queries[0] == "what is Shopfront"
    assert len(m.queries) == 8
    assert m.projects == ("shop",)
    assert m.focus_projects == ("shop",)
    assert m.chunks_found >= m.chunks_after_threshold >= m.chunks_after_dedup >= m.chunks_selected
    assert m.bullets == len(result.bullets)
    assert m.prompt_tokens > 0
    assert result.chunks[0].file_path == "README.md"  # promoted
    assert len({c.key for c in result.chunks}) == len(result.chunks)


def test_discover_with_no_matching_project(shop: Lode) -> None:
    result = discover(
        shop, "what is Shopfront", with_overrides(DiscoverConfig(), {"filter": {"include": ["nope*"]}})
    )
    assert result.bullets == ()
    assert "No evidence found." in result.answer_prompt
    assert result.warnings
    with pytest.raises(ValidationError, match="question"):
        discover(shop, "   ")


def test_stages_chain_on_json(shop: Lode) -> None:
    question = "what is Shopfront"
    projects = run_stage(shop, "filter_projects", {"question": question, "include": ["sh*"]})
    assert [p["name"] for p in projects["projects"]] == ["shop"]
    assert projects["terms"] == ["Shopfront"]
    scored = run_stage(shop, "score_projects", {"question": question})
    assert scored["projects"][0]["project"]["name"] == "shop"
    queries = run_stage(shop, "expand_queries", {"question": question})["queries"]
    broad = run_stage(shop, "broad_discovery", {"queries": queries, "projects": ["shop"]})
    focus = run_stage(shop, "semantic_focus", {"queries": queries, "question": question})
    assert broad["chunks"]
    assert focus["chunks"]
    assert all(c["citation"].startswith("shop:") for c in broad["chunks"])
    promoted = run_stage(shop, "promote_readme", {"chunks": broad["chunks"] + focus["chunks"]})["chunks"]
    assert promoted[0]["file_path"] == "README.md"
    bullets = run_stage(shop, "compress_evidence", {"question": question, "chunks": promoted})["bullets"]
    plan = run_stage(shop, "build_answer_plan", {"bullets": bullets})["plan"]
    prompt = run_stage(shop, "render_prompt", {"question": question, "plan": plan,
                                               "config": {"render": {"format_style": "plain"}}})["prompt"]  # fmt: skip
    assert prompt["text"].startswith("EVIDENCE FOR: what is Shopfront")
    assert "shop:README.md:L" in prompt["text"]


def test_stage_errors_name_the_field(shop: Lode) -> None:
    cases = [
        ("nope", {}, "stage"),
        ("expand_queries", {}, "question"),
        ("expand_queries", {"question": "x", "extra": 1}, "extra"),
        ("promote_readme", {"chunks": [{"project": "p"}]}, "chunks[0].file_path"),
        ("broad_discovery", {"queries": []}, "queries"),
        ("broad_discovery", {"queries": ["x"], "projects": ["ghost"]}, "projects"),
        (
            "expand_queries",
            {"question": "x", "config": {"expansion": {"max_expansions": 0}}},
            "config.expansion",
        ),
    ]
    for stage, payload, field in cases:
        with pytest.raises(ValidationError) as err:
            run_stage(shop, stage, payload)
        assert err.value.field == field, (stage, payload, err.value)


@pytest.mark.slow
def test_discover_with_the_real_model(
    tmp_path: Path, real_embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "db"
    api = Lode(load_config(env={}, overrides={"db": db}), embedder=real_embedder)
    try:
        api.index(make_repo(tmp_path / "repo"), name="shop")
        result = discover(api, "what is Shopfront")
    finally:
        api.close()
    definition = [s for s in result.plan.sections if s.category == "definition"]
    assert definition, result.answer_prompt
    assert definition[0].bullets[0].file_path == "README.md"
    assert definition[0].bullets[0].citation.startswith("shop:README.md:L")
    assert result.metrics.prompt_tokens == real_embedder.count_tokens(result.answer_prompt)

    monkeypatch.setenv("LODE_CONFIG", str(tmp_path / "none.toml"))
    runner = CliRunner()
    printed = runner.invoke(
        cli, ["discover", "what is Shopfront", "--db", str(db), "--local", "--max-tokens", "300"]
    )
    assert printed.exit_code == 0, printed.output
    assert printed.output.startswith("# Evidence for: what is Shopfront")
    assert "shop:README.md:L" in printed.output
    as_json = runner.invoke(cli, ["discover", "what is Shopfront", "--db", str(db), "--local", "--json"])
    assert json.loads(as_json.output)["plan"]["sections"][0]["title"] == "Definition"
    bad = runner.invoke(
        cli, ["discover", "x", "--db", str(db), "--local", "--project", "[", "--max-tokens", "1"]
    )
    assert bad.exit_code == 2
    assert "max_prompt_tokens" in bad.output
