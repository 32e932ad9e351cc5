"""Discovery over real HTTP (uvicorn on 127.0.0.1), the Prometheus ``/metrics`` text, and the
MCP tools through the SDK's client; real LanceDB, fake embedder."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from conftest import make_repo
from live import serve_in_thread, wait_task
from mcp import Client

from indexer.config import load_config
from indexer.embed import FakeEmbedder

API = "/api/v1"
STAGE_TOOLS = {
    "filter_projects", "score_projects", "expand_queries", "broad_discovery", "semantic_focus",
    "promote_readme", "compress_evidence", "build_answer_plan", "render_prompt",
}  # fmt: skip


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("discover")
    repo = make_repo(root / "repo")
    config = load_config(env={}, overrides={"db": root / "db", "enabled": False})
    with serve_in_thread(config, FakeEmbedder()) as url:
        created = httpx.post(f"{url}{API}/projects", json={"path": str(repo), "name": "shop"}).json()
        assert wait_task(url, created["task_id"])["status"] == "done"
        yield url


def _error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"status_code", "detail", "extra"}
    return dict(body)


def test_discover_returns_prompt_plan_bullets_chunks_metrics(base: str) -> None:
    response = httpx.post(f"{base}{API}/discover", json={"question": "what is Shopfront", "max_tokens": 3000},
                          timeout=60)  # fmt: skip
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"question", "answer_prompt", "plan", "bullets", "chunks", "metrics", "warnings"}
    assert "### Definition" in body["answer_prompt"]
    first = body["plan"]["sections"][0]
    assert first["title"] == "Definition"
    assert first["bullets"][0]["citation"].startswith("shop:README.md:L")
    assert all(re.fullmatch(r"shop:[\w/.]+:L\d+-L\d+", b["citation"]) for b in body["bullets"])
    assert body["chunks"][0]["citation"].startswith("shop:README.md:L")
    metrics = body["metrics"]
    assert {"broad_discovery", "semantic_focus", "render_prompt"} <= set(metrics["stage_ms"])
    assert metrics["projects_searched"] == 1
    assert len(metrics["queries"]) == 8
    assert 0 < metrics["prompt_tokens"] <= 3000


def test_discover_request_overrides_and_errors(base: str) -> None:
    plain = httpx.post(f"{base}{API}/discover", json={"question": "what is Shopfront", "format": "plain",
                                                     "config": {"expansion": {"max_expansions": 2}}}).json()  # fmt: skip
    assert plain["answer_prompt"].startswith("EVIDENCE FOR:")
    assert len(plain["metrics"]["queries"]) == 2
    bad_key = _error(
        httpx.post(f"{base}{API}/discover", json={"question": "x", "config": {"broad": {"nope": 1}}}), 400
    )
    assert bad_key["extra"][0]["key"] == "config.broad.nope"
    # a setting the request's own argument replaces is still checked (schemathesis found it)
    shadowed = {"question": "x", "include": ["shop*"], "config": {"filter": {"include": [{}]}}}
    assert _error(httpx.post(f"{base}{API}/discover", json=shadowed), 400)["extra"][0]["key"] == (
        "config.filter.include"
    )
    bad_format = _error(httpx.post(f"{base}{API}/discover", json={"question": "x", "format": "html"}), 400)
    assert bad_format["extra"][0]["key"] == "format"  # the field the request sent
    assert (
        _error(httpx.post(f"{base}{API}/discover", json={"question": ""}), 400)["extra"][0]["key"]
        == "question"
    )


def test_one_stage_and_a_bad_stage(base: str) -> None:
    response = httpx.post(f"{base}{API}/discover/expand_queries", json={"question": "O que é o shop"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["stage"] == "expand_queries"
    assert body["result"]["queries"][:2] == ["O que é o shop", "shop definition"]
    bad = _error(httpx.post(f"{base}{API}/discover/make_coffee", json={"question": "x"}), 400)
    assert bad["extra"][0]["key"] == "stage"
    missing = _error(httpx.post(f"{base}{API}/discover/compress_evidence", json={"chunks": [{}]}), 400)
    assert missing["extra"][0]["key"].startswith("chunks[0].")


def test_every_stage_answers_its_own_shape_and_feeds_the_next(base: str) -> None:
    """A stage's answer is typed per stage (issue 41) and keeps all the next stage takes."""

    def stage(name: str, **body: Any) -> Any:
        response = httpx.post(f"{base}{API}/discover/{name}", json=body, timeout=60)
        assert response.status_code == 200, response.text
        answer = response.json()
        assert (set(answer), answer["stage"]) == ({"stage", "took_ms", "result"}, name)
        return answer["result"]

    question = "what is shop"
    assert [p["name"] for p in stage("filter_projects", question=question)["projects"]] == ["shop"]
    scored = stage("score_projects", question=question)
    assert scored["terms"]
    assert scored["projects"][0]["project"]["name"] == "shop"
    queries = stage("expand_queries", question=question)["queries"]
    broad = stage("broad_discovery", queries=queries)
    assert broad["found"] >= broad["after_threshold"] >= broad["after_dedup"] > 0
    focus = stage("semantic_focus", queries=queries, question=question)
    assert focus["hits"] > 0
    chunks = stage("promote_readme", chunks=broad["chunks"] + focus["chunks"])["chunks"]
    bullets = stage("compress_evidence", question=question, chunks=chunks)["bullets"]
    plan = stage("build_answer_plan", bullets=bullets)["plan"]
    prompt = stage("render_prompt", question=question, plan=plan)["prompt"]
    assert prompt["text"]
    assert 0 < prompt["tokens"] <= prompt["max_tokens"]


def test_openapi_documents_discover(base: str) -> None:
    spec = httpx.get(f"{base}/api/openapi.json").json()
    operation = spec["paths"]["/api/v1/discover"]["post"]
    assert operation["operationId"] == "discover"
    assert operation["responses"]["200"]["content"]["application/json"]["examples"]
    stage = spec["paths"]["/api/v1/discover/{stage}"]["post"]
    assert len(stage["requestBody"]["content"]["application/json"]["schema"]["examples"]) == 9
    assert "filter_projects" in stage["parameters"][0]["description"]
    assert "/metrics" not in spec["paths"]


_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_]\w*="(?:[^"\\]|\\.)*",?)*\})? (\S+)$')


def _parse(text: str) -> tuple[dict[str, str], dict[str, float]]:
    """Prometheus text format 0.0.4: HELP/TYPE comments and samples; every line must parse."""
    types: dict[str, str] = {}
    samples: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            continue
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            types[name] = kind
            continue
        match = _SAMPLE.match(line)
        assert match, f"not a sample line: {line!r}"
        samples[match.group(1) + (match.group(2) or "")] = float(match.group(3))
    return types, samples


def test_metrics_in_prometheus_text_format(base: str) -> None:
    httpx.post(f"{base}{API}/discover", json={"question": "how are discounts applied"}, timeout=60)
    response = httpx.get(f"{base}/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    types, samples = _parse(response.text)
    assert types["lode_http_requests_total"] == "counter"
    assert types["lode_http_request_duration_seconds"] == "histogram"
    assert types["lode_discover_stage_duration_seconds"] == "histogram"
    assert types["lode_index_chunks"] == "gauge"
    assert samples['lode_http_requests_total{method="POST",path="/api/v1/discover",status="200"}'] >= 1
    assert (
        samples['lode_http_requests_total{method="POST",path="/api/v1/discover/{stage}",status="400"}'] >= 1
    )
    count = samples['lode_discover_stage_duration_seconds_count{stage="broad_discovery"}']
    assert count >= 1
    assert samples['lode_discover_stage_duration_seconds_bucket{stage="broad_discovery",le="+Inf"}'] == count
    buckets = [
        v
        for k, v in samples.items()
        if k.startswith('lode_http_request_duration_seconds_bucket{method="POST",path="/api/v1/discover",')
    ]
    assert buckets == sorted(buckets)  # cumulative
    assert samples['lode_index_chunks{project="shop"}'] > 0
    assert samples['lode_index_documents{project="shop"}'] > 0
    assert (
        samples['lode_index_chunks_embedded{project="shop"}'] == samples['lode_index_chunks{project="shop"}']
    )


def _data(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return dict(result.structured_content)
    return dict(json.loads(result.content[0].text))


def test_mcp_discover_and_its_stages(base: str) -> None:
    async def main() -> None:
        async with Client(f"{base}/mcp", read_timeout_seconds=60) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            assert "discover" in tools
            assert not tools & STAGE_TOOLS  # the stages are an option of discover, not tools
            found = await client.call_tool("discover", {"question": "what is Shopfront"})
            assert "shop:README.md:L" in found.content[0].text

            async def stage(name: str, **fields: Any) -> dict[str, Any]:
                args = {"question": "what is shop", "stage": name, "input": fields, "max_tokens": 50_000}
                return _data(await client.call_tool("discover", args))

            queries = (await stage("expand_queries"))["queries"]
            assert queries[0] == "what is shop"
            chunks = (await stage("broad_discovery", queries=queries))["chunks"]
            bullets = (await stage("compress_evidence", chunks=chunks))["bullets"]
            plan = (await stage("build_answer_plan", bullets=bullets))["plan"]
            assert plan["sections"]
            assert plan["sections"][0]["bullets"]
            bad = await client.call_tool("discover", {"question": "x", "config": {"broad": {"nope": 1}}})
            assert bad.is_error
            assert "config.broad.nope" in bad.content[0].text

    anyio.run(main)
