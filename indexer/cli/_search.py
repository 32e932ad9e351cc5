"""``lode search``: every search option as a flag; results as highlighted snippets or JSON."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.syntax import Syntax

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
from indexer.search import GRANULARITIES, MODES, ChunkHit, SearchOptions, SearchResponse

__all__ = ["search_command"]

_LEXERS = {"csharp": "csharp", "cpp": "cpp", "tsx": "tsx", "bash": "bash", "markdown": "markdown"}


@click.command("search")
@click.argument("query")
@click.option("--project", "projects", multiple=True, help="Project name or id (repeatable; default: all).")
@click.option("--granularity", type=click.Choice(GRANULARITIES), default="document", show_default=True)
@click.option("--mode", type=click.Choice(MODES), default="hybrid", show_default=True)
@click.option("--lang", "languages", multiple=True, help="Language filter (repeatable).")
@click.option(
    "--node-type", "node_types", multiple=True, help="Node type filter, e.g. function (repeatable)."
)
@click.option("--name", "node_name_pattern", default=None, help="Glob on the unit's name (case-sensitive).")
@click.option("--parent", "parent_context_pattern", default=None, help="Glob on the enclosing declaration.")
@click.option("--scope-depth", nargs=2, type=int, default=None, help="MIN MAX length of the scope path.")
@click.option("--defines", "has_definitions", multiple=True, help="Chunk defines this name (repeatable).")
@click.option(
    "--references", "has_references", multiple=True, help="Chunk references this name (repeatable)."
)
@click.option("--path", "path_include", multiple=True, help="Path glob to include (repeatable).")
@click.option("--exclude", "path_exclude", multiple=True, help="Path glob to exclude (repeatable).")
@click.option(
    "--files", "file_limit", type=int, default=5, show_default=True, help="Files (document granularity)."
)
@click.option(
    "--per-file", "chunks_per_file", type=int, default=3, show_default=True, help="Chunks per file."
)
@click.option("--limit", type=int, default=10, show_default=True, help="Chunks (chunk granularity).")
@click.option("--offset", type=int, default=0, show_default=True, help="Skip this many results.")
@local_option
@db_option
@json_option
@handle_errors
def search_command(
    db: Path | None, as_json: bool, local: bool, scope_depth: tuple[int, int] | None, **fields: object
) -> None:
    """Search the index for QUERY (hybrid by default).

    Goes through a running lode server when there is one (its model is already loaded);
    --local searches in-process.

    Example: lode search "parse http request" --granularity chunk --lang python --node-type function
    """
    tuples = {k: tuple(v) for k, v in fields.items() if isinstance(v, tuple)}
    options = SearchOptions(**{**fields, **tuples, "scope_depth": scope_depth})  # type: ignore[arg-type]
    config = make_config(db=db)
    remote = server_for(config, db, local)
    response = remote.search(options) if remote is not None else Lode(config).search(options)
    if as_json:
        echo_json(response)
    else:
        render(response)


def _chunks(response: SearchResponse) -> list[tuple[str, float, list[ChunkHit]]]:
    if response.granularity == "chunk":
        return [(f"{g.project}:{g.file_path}", g.total_relevance, list(g.chunks)) for g in response.groups]
    return [(f"{d.project}:{d.file_path}", d.relevance_score, list(d.chunks)) for d in response.documents]


def render(response: SearchResponse) -> None:
    """Print results: file, lines, node, score, and a highlighted snippet."""
    console = Console()
    for warning in response.warnings:
        console.print(f"[yellow]note:[/] {warning}")
    files = _chunks(response)
    if not files:
        console.print("no results")
        return
    for title, score, chunks in files:
        console.print(f"[bold cyan]{title}[/]  [dim]score {score:.3f}[/]")
        for hit in chunks:
            name = f"{hit.node_type} {hit.node_name}".strip()
            console.print(
                f"  [green]L{hit.start_line}-{hit.end_line}[/] {name}  [dim]{hit.relevance_score:.3f}[/]"
            )
            snippet = "\n".join(hit.content.splitlines()[:12])
            lexer = _LEXERS.get(hit.language, hit.language)
            console.print(
                Syntax(snippet, lexer, line_numbers=True, start_line=hit.start_line, word_wrap=False)
            )
    more = " (more: --offset)" if response.has_more else ""
    console.print(f"[dim]{response.total} candidates, {response.took_ms:.0f} ms{more}[/]")
