"""``POST /api/v1/discover`` (the nine stages) and ``POST /api/v1/discover/{stage}`` (one)."""

from __future__ import annotations

import time
from typing import Annotated, Any, cast

from litestar import Controller, post
from litestar.openapi.spec import Example
from litestar.params import Body, Parameter

from indexer.config_file import load_discover_config
from indexer.search.discover import STAGES, discover, run_stage
from server.convert import discover_config, to_wire
from server.http._common import Ctx, blocking, example, ok
from server.http.examples import discover as examples
from server.http.schemas._choices import StageName
from server.http.schemas.discover import (
    STAGE_RESPONSES,
    DiscoverRequest,
    DiscoverResponseOut,
    StageResponseOut,
)
from server.metrics import metrics_for

__all__ = ["DiscoverController"]

_STAGE_DOC = "One of: " + ", ".join(STAGES) + ". The body holds the stage's fields and optional `config`."


class DiscoverController(Controller):
    """Discovery: a question in, a cited evidence prompt out."""

    path = "/api/v1/discover"
    tags = ("discover",)

    @post(
        status_code=200,
        summary="From a question to a cited evidence prompt (nine stages)",
        operation_id="discover",
        responses=ok(DiscoverResponseOut, "A definition question", examples.DISCOVER, errors=(400, 413, 503)),
    )
    @blocking
    def discover_route(
        self,
        ctx: Ctx,
        data: Annotated[
            DiscoverRequest, Body(examples=example("What is a project", examples.DISCOVER_REQUEST))
        ],
    ) -> DiscoverResponseOut:
        """Filter and score projects, expand the question, search broadly (MMR) and in depth,
        promote READMEs, compress the evidence into cited bullets, plan sections and render an
        LLM prompt within a token budget. ``metrics`` has the time of every stage."""
        config = discover_config(
            data.config, data.include, data.exclude, data.format, data.max_tokens, data.max_bullets
        )
        result = discover(ctx.lode, data.question, config)
        metrics_for(ctx).record_stages(result.metrics.stage_ms)
        return to_wire(result, DiscoverResponseOut)

    @post(
        "/{stage:str}",
        status_code=200,
        summary="Run one discovery stage on JSON input",
        operation_id="discover_stage",
        responses=ok(
            StageResponseOut,
            "Expanded queries",
            examples.STAGE_RESPONSE,
            errors=(400, 413, 503),
            description="The stage's output, typed by stage (feed its result to the next stage)",
        ),
    )
    @blocking
    def discover_stage(
        self,
        ctx: Ctx,
        stage: Annotated[StageName, Parameter(description=_STAGE_DOC)],
        data: Annotated[
            dict[str, Any],
            Body(
                description=_STAGE_DOC,
                examples=[
                    Example(summary=name, value=value) for name, value in examples.STAGE_INPUTS.items()
                ],
            ),
        ],
    ) -> StageResponseOut:
        """Run one stage (an unknown stage is a 400 naming ``stage``); feed each output to the next
        stage: filter_projects → score_projects → expand_queries → broad_discovery → semantic_focus
        → promote_readme → compress_evidence → build_answer_plan → render_prompt."""
        started = time.perf_counter()
        result = run_stage(ctx.lode, stage, data, load_discover_config())
        took = round((time.perf_counter() - started) * 1000, 3)
        answer = to_wire({"stage": stage, "took_ms": took, "result": result}, STAGE_RESPONSES[stage])
        return cast("StageResponseOut", answer)
