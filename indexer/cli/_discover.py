"""``lode discover``: a question in, a cited evidence prompt out (or the whole result as JSON)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from indexer.cli._common import (
    ApiOption,
    LodeCommand,
    db_option,
    echo_json,
    handle_errors,
    json_option,
    local_option,
    make_config,
    server_for,
)
from indexer.search.discover._config import FORMATS, RenderConfig

__all__ = ["discover_command"]


_RENDER = RenderConfig()


def _overrides(
    include: tuple[str, ...], exclude: tuple[str, ...], fmt: str | None, max_tokens: int | None
) -> dict[str, dict[str, Any]]:
    from indexer.limits import MAX_GLOBS, check_items

    out: dict[str, dict[str, Any]] = {}
    for field, globs in (("include", include), ("exclude", exclude)):
        check_items(field, globs, MAX_GLOBS)  # named as given, not as config.filter
    if include or exclude:
        out["filter"] = {"include": list(include), "exclude": list(exclude)}
    render = {"format_style": fmt, "max_prompt_tokens": max_tokens}
    if any(v is not None for v in render.values()):
        out["render"] = {k: v for k, v in render.items() if v is not None}
    return out


@click.command("discover", cls=LodeCommand)
@click.argument("question")
@click.option(
    "--include",
    "include",
    cls=ApiOption,
    old=["--project"],
    multiple=True,
    help="Project name or glob to search (repeatable; default: all).",
)
@click.option("--exclude", multiple=True, help="Project name glob to skip (repeatable).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default=None,
    help=f"Prompt format (default: {_RENDER.format_style}).",
)
@click.option(
    "--max-tokens",
    type=int,
    default=None,
    help=f"Prompt token budget (default: {_RENDER.max_prompt_tokens}).",
)
@click.option("--metrics", "show_metrics", is_flag=True, help="Also print the time of every stage on stderr.")
@local_option
@db_option
@json_option
@handle_errors
def discover_command(
    question: str,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    fmt: str | None,
    max_tokens: int | None,
    show_metrics: bool,
    db: Path | str | None,
    as_json: bool,
    local: bool,
) -> None:
    """Gather cited evidence for QUESTION and print an LLM prompt.

    Nine stages: filter and score projects, expand the question, broad search with MMR,
    focused search with neighbouring chunks, README first, key sentences cited as
    project:path:Lstart-Lend, an answer plan, and a prompt within a token budget. Defaults
    come from the [discover] table of the config file ($LODE_CONFIG). --json prints the
    prompt, plan, bullets, chunks and metrics.

    Options are the fields of POST /api/v1/discover.

    Example: lode discover "what is shopfront" --include shop --max-tokens 1500
    """
    result, prompt, stage_ms = _run(question, _overrides(include, exclude, fmt, max_tokens), db, local)
    if as_json:
        echo_json(result)
        return
    click.echo(prompt, nl=False)
    if show_metrics:
        click.echo(json.dumps(stage_ms), err=True)


def _run(
    question: str, overrides: dict[str, Any], db: Path | str | None, local: bool
) -> tuple[Any, str, Any]:
    """(the whole result, the prompt, the stage times), through a running server if there is one."""
    config = make_config(db=db)
    remote = server_for(config, db, local)
    if remote is not None:
        found: Any = remote.post("/api/v1/discover", {"question": question, "config": overrides})
        return found, found["answer_prompt"], found["metrics"]["stage_ms"]
    from indexer.api import open_for_search
    from indexer.config_file import load_discover_config
    from indexer.search.discover import discover

    lode = open_for_search(config)
    try:
        result = discover(lode, question, load_discover_config(overrides=overrides))
    finally:
        lode.close()
    return result, result.answer_prompt, result.metrics.stage_ms
