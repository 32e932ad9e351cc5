"""``POST /api/v1/discover`` (the nine stages) and ``POST /api/v1/discover/{stage}`` (one)."""

from __future__ import annotations

import time
from typing import Annotated, Any

import msgspec
from litestar import post
from litestar.di import Provide
from litestar.openapi.spec import Example
from litestar.params import Body, Parameter

from indexer.config_file import load_discover_config
from indexer.search.discover import STAGES, DiscoverConfig, DiscoverResult, discover, run_stage
from server.context import ServerContext
from server.metrics import metrics_for
from server.routes._common import Ctx, blocking, example, get_ctx, ok
from server.schemas_discover import (
    DISCOVER_EXAMPLE,
    DISCOVER_REQUEST_EXAMPLE,
    STAGE_EXAMPLES,
    STAGE_RESPONSE_EXAMPLE,
    DiscoverRequest,
    DiscoverResponseOut,
    StageResponseOut,
)

__all__ = ["discover_config", "discover_routes", "to_discover_response"]

_deps = {"ctx": Provide(get_ctx, sync_to_thread=False)}


def discover_config(data: DiscoverRequest) -> DiscoverConfig:
    """Defaults, the config file's ``[discover]`` table, then the request's overrides."""
    overrides: dict[str, dict[str, Any]] = {k: dict(v) for k, v in (data.config or {}).items()}

    def put(section: str, key: str, value: Any) -> None:
        if value is not None and value != []:
            overrides.setdefault(section, {})[key] = value

    put("filter", "include", data.include)
    put("filter", "exclude", data.exclude)
    put("render", "format_style", data.format)
    put("render", "max_prompt_tokens", data.max_tokens)
    put("compression", "max_bullets", data.max_bullets)
    return load_discover_config(overrides=overrides)


def to_discover_response(result: DiscoverResult) -> DiscoverResponseOut:
    """The HTTP shape of a discovery (field for field)."""
    return msgspec.convert(result, DiscoverResponseOut, from_attributes=True)


def run_discover(ctx: ServerContext, data: DiscoverRequest) -> DiscoverResponseOut:
    """Run a discovery and record its stage durations."""
    result = discover(ctx.lode, data.question, discover_config(data))
    metrics_for(ctx).record_stages(result.metrics.stage_ms)
    return to_discover_response(result)


@post(
    "/api/v1/discover",
    dependencies=_deps,
    tags=["discover"],
    status_code=200,
    summary="From a question to a cited evidence prompt (nine stages)",
    operation_id="discover",
    responses=ok(DiscoverResponseOut, "A definition question", DISCOVER_EXAMPLE),
)
@blocking
def discover_route(
    ctx: Ctx,
    data: Annotated[DiscoverRequest, Body(examples=example("What is a project", DISCOVER_REQUEST_EXAMPLE))],
) -> DiscoverResponseOut:
    """Filter and score projects, expand the question, search broadly (MMR) and in depth,
    promote READMEs, compress the evidence into cited bullets, plan sections and render an
    LLM prompt within a token budget. ``metrics`` has the time of every stage."""
    return run_discover(ctx, data)


_STAGE_DOC = "One of: " + ", ".join(STAGES) + ". The body holds the stage's fields and optional `config`."


@post(
    "/api/v1/discover/{stage:str}",
    dependencies=_deps,
    tags=["discover"],
    status_code=200,
    summary="Run one discovery stage on JSON input",
    operation_id="discover_stage",
    responses=ok(StageResponseOut, "Expanded queries", STAGE_RESPONSE_EXAMPLE),
)
@blocking
def discover_stage(
    ctx: Ctx,
    stage: Annotated[str, Parameter(description=_STAGE_DOC)],
    data: Annotated[
        dict[str, Any],
        Body(
            description=_STAGE_DOC,
            examples=[Example(summary=name, value=value) for name, value in STAGE_EXAMPLES.items()],
        ),
    ],
) -> StageResponseOut:
    """Run one stage (an unknown stage is a 400 naming ``stage``); feed each output to the next
    stage: filter_projects → score_projects → expand_queries → broad_discovery → semantic_focus
    → promote_readme → compress_evidence → build_answer_plan → render_prompt."""
    started = time.perf_counter()
    result = run_stage(ctx.lode, stage, data, load_discover_config())
    took = round((time.perf_counter() - started) * 1000, 3)
    return StageResponseOut(stage=stage, took_ms=took, result=result)


discover_routes = [discover_route, discover_stage]
