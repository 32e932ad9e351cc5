"""``lode search``: every search option as a flag named as its API field; results as
highlighted snippets or JSON."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

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
from indexer.roles import ROLES
from indexer.search._options import GRANULARITIES, MODES, SearchOptions

if TYPE_CHECKING:
    from indexer.search._results import ChunkHit, SearchResponse

__all__ = ["search_command"]

_LEXERS = {"csharp": "csharp", "cpp": "cpp", "tsx": "tsx", "bash": "bash", "markdown": "markdown"}
_DEFAULTS = SearchOptions(query="")


@click.command("search", cls=LodeCommand)
@click.argument("query", required=False, default="")
@click.option(
    "--projects",
    "projects",
    cls=ApiOption,
    old=["--project"],
    multiple=True,
    help="Project name or id (repeatable; default: all).",
)
@click.option(
    "--granularity",
    type=click.Choice(GRANULARITIES),
    default=_DEFAULTS.granularity,
    show_default=True,
    help="document: files with their best chunks; chunk: chunks grouped by file.",
)
@click.option(
    "--mode",
    type=click.Choice(MODES),
    default=_DEFAULTS.mode,
    show_default=True,
    help="hybrid: vectors and full text; semantic or lexical alone.",
)
@click.option(
    "--languages",
    "languages",
    cls=ApiOption,
    old=["--lang"],
    multiple=True,
    help="Language filter, e.g. python (repeatable).",
)
@click.option(
    "--node-types",
    "node_types",
    cls=ApiOption,
    old=["--node-type"],
    multiple=True,
    help="Node type filter, e.g. function (repeatable).",
)
@click.option(
    "--node-name-pattern",
    "node_name_pattern",
    cls=ApiOption,
    old=["--name"],
    default=None,
    help="Glob on the unit's name (case-sensitive).",
)
@click.option(
    "--parent-context-pattern",
    "parent_context_pattern",
    cls=ApiOption,
    old=["--parent"],
    default=None,
    help="Glob on the enclosing declaration.",
)
@click.option("--scope-depth", nargs=2, type=int, default=None, help="MIN MAX length of the scope path.")
@click.option(
    "--has-definitions",
    "has_definitions",
    cls=ApiOption,
    old=["--defines"],
    multiple=True,
    help="Chunk defines this name (repeatable).",
)
@click.option(
    "--has-references",
    "has_references",
    cls=ApiOption,
    old=["--references"],
    multiple=True,
    help="Chunk references this name (repeatable).",
)
@click.option(
    "--path-include",
    "path_include",
    cls=ApiOption,
    old=["--path"],
    multiple=True,
    help="Path glob to include, relative to the project root, e.g. 'src/**' (repeatable).",
)
@click.option(
    "--path-exclude",
    "path_exclude",
    cls=ApiOption,
    old=["--exclude"],
    multiple=True,
    help="Path glob to exclude, relative to the project root (repeatable).",
)
@click.option(
    "--roles",
    "roles",
    type=click.Choice(ROLES),
    multiple=True,
    help="Only chunks of this role: implementation, test, docs, example, config, changelog, generated, "
    "vendored, build (repeatable).",
)
@click.option(
    "--exclude-roles",
    "exclude_roles",
    type=click.Choice(ROLES),
    multiple=True,
    help="No chunk of this role (repeatable).",
)
@click.option(
    "--file-limit",
    "file_limit",
    cls=ApiOption,
    old=["--files"],
    type=int,
    default=_DEFAULTS.file_limit,
    show_default=True,
    help="Files (document granularity).",
)
@click.option(
    "--chunks-per-file",
    "chunks_per_file",
    cls=ApiOption,
    old=["--per-file"],
    type=int,
    default=_DEFAULTS.chunks_per_file,
    show_default=True,
    help="Chunks per file.",
)
@click.option(
    "--limit", type=int, default=_DEFAULTS.limit, show_default=True, help="Chunks (chunk granularity)."
)
@click.option(
    "--offset", type=int, default=_DEFAULTS.offset, show_default=True, help="Skip this many results."
)
@local_option
@db_option
@json_option
@handle_errors
def search_command(
    db: Path | str | None, as_json: bool, local: bool, scope_depth: tuple[int, int] | None, **fields: object
) -> None:
    """Search the index for QUERY (hybrid by default), or list what --has-definitions names.

    Options are the fields of POST /api/v1/search. Goes through a running lode server when
    there is one; --local searches in-process (queries embedded by the cached ONNX graph).

    Example: lode search "parse http request" --granularity chunk --languages python --node-types function
    """  # fmt: skip
    tuples = {k: tuple(v) for k, v in fields.items() if isinstance(v, tuple)}
    options = SearchOptions(**{**fields, **tuples, "scope_depth": scope_depth})  # type: ignore[arg-type]
    config = make_config(db=db)
    remote = server_for(config, db, local)
    if remote is not None:
        response = remote.search(options)
    else:
        from indexer.api import open_for_search

        lode = open_for_search(config)
        try:
            response = lode.search(options)
        finally:
            lode.close()
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
    from rich.console import Console
    from rich.syntax import Syntax

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
            role = "" if hit.role == "implementation" else f" [magenta]{hit.role}[/]"
            lines = f"L{hit.start_line}-{hit.end_line}"
            console.print(f"  [green]{lines}[/] {name}{role}  [dim]{hit.relevance_score:.3f}[/]")
            snippet = "\n".join(hit.content.splitlines()[:12])
            lexer = _LEXERS.get(hit.language, hit.language)
            console.print(
                Syntax(snippet, lexer, line_numbers=True, start_line=hit.start_line, word_wrap=False)
            )
    more = " (more: --offset)" if response.has_more else ""
    console.print(f"[dim]{response.total} candidates, {response.took_ms:.0f} ms{more}[/]")
