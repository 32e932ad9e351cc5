"""``lode discover``: a question in, a cited evidence prompt out (or the whole result as JSON)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from indexer.cli._common import api_option, echo_json, lode_command, through
from indexer.search.discover._config import FORMATS, RenderConfig

if TYPE_CHECKING:
    from indexer.api import Lode
    from indexer.remote import RemoteLode

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


@lode_command("discover", "local", "db", "json")
@click.argument("question")
@api_option(
    "include", "--project", multiple=True, help="Project name or glob to search (repeatable; default: all)."
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
def discover_command(
    question: str,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    fmt: str | None,
    max_tokens: int | None,
    show_metrics: bool,
    local: bool,
    db: Path | str | None,
    as_json: bool,
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
    overrides = _overrides(include, exclude, fmt, max_tokens)

    def remote(server: RemoteLode) -> tuple[Any, str, Any]:
        found = server.post("/api/v1/discover", {"question": question, "config": overrides})
        return found, found["answer_prompt"], found["metrics"]["stage_ms"]

    def in_process(lode: Lode) -> tuple[Any, str, Any]:
        from indexer.config_file import load_discover_config
        from indexer.search.discover import discover

        found = discover(lode, question, load_discover_config(overrides=overrides))
        return found, found.answer_prompt, found.metrics.stage_ms

    result, prompt, stage_ms = through(db, local, remote, in_process)
    if as_json:
        echo_json(result)
        return
    click.echo(prompt, nl=False)
    if show_metrics:
        click.echo(json.dumps(stage_ms), err=True)
