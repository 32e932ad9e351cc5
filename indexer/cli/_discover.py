"""``lode discover``: a question in, a cited evidence prompt out (or the whole result as JSON)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from indexer.api import Lode
from indexer.cli._common import (
    db_option,
    echo_json,
    handle_errors,
    json_option,
    local_option,
    make_config,
    server_for,
)
from indexer.config_file import load_discover_config
from indexer.search.discover import FORMATS, discover

__all__ = ["discover_command"]


def _overrides(
    projects: tuple[str, ...], exclude: tuple[str, ...], fmt: str | None, max_tokens: int | None
) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    if projects or exclude:
        out["filter"] = {"include": list(projects), "exclude": list(exclude)}
    render = {"format_style": fmt, "max_prompt_tokens": max_tokens}
    if any(v is not None for v in render.values()):
        out["render"] = {k: v for k, v in render.items() if v is not None}
    return out


@click.command("discover")
@click.argument("question")
@click.option(
    "--project", "projects", multiple=True, help="Project name or glob to search (repeatable; default: all)."
)
@click.option("--exclude", multiple=True, help="Project name glob to skip (repeatable).")
@click.option(
    "--format", "fmt", type=click.Choice(FORMATS), default=None, help="Prompt format (default: markdown)."
)
@click.option("--max-tokens", type=int, default=None, help="Prompt token budget (default: 4000).")
@click.option("--metrics", "show_metrics", is_flag=True, help="Also print the time of every stage on stderr.")
@local_option
@db_option
@json_option
@handle_errors
def discover_command(
    question: str,
    projects: tuple[str, ...],
    exclude: tuple[str, ...],
    fmt: str | None,
    max_tokens: int | None,
    show_metrics: bool,
    db: Path | None,
    as_json: bool,
    local: bool,
) -> None:
    """Gather cited evidence for QUESTION and print an LLM prompt.

    Nine stages: filter and score projects, expand the question, broad search with MMR,
    focused search with neighbouring chunks, README first, key sentences cited as
    project:path:Lstart-Lend, an answer plan, and a prompt within a token budget. Defaults
    come from the [discover] table of the config file ($LODE_CONFIG). --json prints the
    prompt, plan, bullets, chunks and metrics.

    Example: lode discover "what is shopfront" --project shop --max-tokens 1500
    """
    result, prompt, stage_ms = _run(question, _overrides(projects, exclude, fmt, max_tokens), db, local)
    if as_json:
        echo_json(result)
        return
    click.echo(prompt, nl=False)
    if show_metrics:
        click.echo(json.dumps(stage_ms), err=True)


def _run(question: str, overrides: dict[str, Any], db: Path | None, local: bool) -> tuple[Any, str, Any]:
    """(the whole result, the prompt, the stage times), through a running server if there is one."""
    config = make_config(db=db)
    remote = server_for(config, db, local)
    if remote is not None:
        found: Any = remote.post("/api/v1/discover", {"question": question, "config": overrides})
        return found, found["answer_prompt"], found["metrics"]["stage_ms"]
    lode = Lode(config)
    try:
        result = discover(lode, question, load_discover_config(overrides=overrides))
    finally:
        lode.close()
    return result, result.answer_prompt, result.metrics.stage_ms
