"""The ``discover`` MCP tool: a question in, a cited evidence prompt out (the nine stages of
``POST /api/v1/discover``), within ``max_tokens``; with ``stage`` it runs one stage on JSON
``input`` instead (``POST /api/v1/discover/{stage}``)."""

from __future__ import annotations

import json
from typing import Any

from indexer.config_file import load_discover_config
from indexer.embed import TokenCounter
from indexer.errors import FieldError, ValidationError
from indexer.limits import MAX_GLOBS, check_items
from indexer.search.discover import discover, render_prompt, run_stage
from server.context import ServerContext
from server.convert import discover_config
from server.mcp._params import FORMAT, MAX_TOKENS, Param, Strs, Tool
from server.metrics import metrics_for

__all__ = ["DISCOVER_DESCRIPTION", "TOOL"]

PARAMS: tuple[Param, ...] = (
    Param("question", str, ..., ""),
    Param("include", Strs, [], "Project name globs"),
    Param("exclude", Strs, [], ""),
    Param("max_bullets", int | None, None, ""),
    MAX_TOKENS(2000),
    FORMAT,
    Param("stage", str | None, None, "One stage alone, on input"),
    Param("input", dict[str, Any] | None, None, "The stage's fields"),
    Param("config", dict[str, dict[str, Any]] | None, None, "Per-stage settings"),
)

DISCOVER_DESCRIPTION = (
    "Answer a broad question ('what is X', 'how does X work') with evidence from every project, "
    "READMEs first: bullets by section, each cited [project:path:Lstart-Lend]."
)

#: Stages whose input has no ``question`` field.
_NO_QUESTION = {"broad_discovery", "promote_readme", "build_answer_plan"}


def _fit_stage(counter: TokenCounter, result: dict[str, Any], budget: int) -> str:
    """A stage's JSON, its longest lists cut from the end until it fits (``left_out`` says
    how many items of each were dropped)."""
    out = dict(result)
    left: dict[str, int] = {}

    def dump() -> str:
        shown = {**out, "left_out": left} if left else out
        return json.dumps(shown, ensure_ascii=False, separators=(",", ":"), default=str)

    text = dump()
    while counter.count(text) > budget:
        lists = [(len(v), k) for k, v in out.items() if isinstance(v, list) and v]
        if not lists:
            break
        key = max(lists)[1]
        out[key] = out[key][:-1]
        left[key] = left.get(key, 0) + 1
        text = dump()
    return _within(counter, text, budget, "the stage's answer with its lists emptied")


def _within(counter: TokenCounter, text: str, budget: int, what: str) -> str:
    """``text`` when it fits ``budget``; else an error naming ``max_tokens`` (a prompt or a
    JSON answer cut anywhere else would be no answer)."""
    used = counter.count(text)
    if used > budget:
        raise ValidationError("max_tokens", f"is too small: {what} takes {used} tokens (got {budget})")
    return text


def _stage(ctx: ServerContext, args: dict[str, Any], budget: int) -> str:
    stage = args["stage"]
    payload = dict(args["input"] or {})
    if stage not in _NO_QUESTION:
        payload.setdefault("question", args["question"])
    if args["config"]:
        payload.setdefault("config", args["config"])
    try:
        result = run_stage(ctx.lode, stage, payload, load_discover_config())
    except ValidationError as exc:  # the stage's fields are the tool's input.<field>
        errors = [FieldError(e.field if e.field in ("stage", "question") else f"input.{e.field}", e.message)
                  for e in exc.errors]  # fmt: skip
        raise ValidationError(errors[0].field, errors[0].message, more=tuple(errors[1:])) from None
    return _fit_stage(ctx.token_counter(), result, budget)


def _discover(ctx: ServerContext, args: dict[str, Any], budget: int) -> str:
    for key in ("include", "exclude"):
        check_items(key, args[key], MAX_GLOBS)
    style = "json" if args["format"] == "json" else "markdown"
    config = discover_config(
        args["config"], args["include"], args["exclude"], style, budget, args["max_bullets"]
    )
    result = discover(ctx.lode, args["question"], config)
    metrics_for(ctx).record_stages(result.metrics.stage_ms)
    # rendered again with the answer's tokenizer: the budget is exact whatever model searched
    meta = {
        "projects": ", ".join(result.metrics.projects),
        "queries": len(result.metrics.queries),
        "chunks": len(result.chunks),
    }
    counter = ctx.token_counter()
    text = render_prompt(result.question, result.plan, config.render, counter.count, meta).text
    return _within(counter, text, budget, "the prompt with no evidence")


def _run(ctx: ServerContext, args: dict[str, Any], budget: int) -> str:
    return _stage(ctx, args, budget) if args["stage"] else _discover(ctx, args, budget)


TOOL = Tool("discover", DISCOVER_DESCRIPTION, PARAMS, _run)
