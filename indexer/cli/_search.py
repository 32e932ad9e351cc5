"""``lode search``: every search option as a flag named as its API field; results as
highlighted snippets or JSON."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from indexer.cli._common import api_option, lode_command, through
from indexer.roles import ROLES
from indexer.search._options import GRANULARITIES, MODES, SearchOptions

if TYPE_CHECKING:
    from indexer.search._results import ChunkHit, SearchResponse

__all__ = ["search_command"]

F = TypeVar("F", bound=Callable[..., Any])
_LEXERS = {"csharp": "csharp", "cpp": "cpp", "tsx": "tsx", "bash": "bash", "markdown": "markdown"}
_DEFAULTS = SearchOptions(query="")


def _many(field: str, old: str, text: str) -> Callable[[F], F]:
    """A repeatable text option."""
    return api_option(field, old, multiple=True, help=text)


def _shown(field: str, *old: str, text: str, **attrs: Any) -> Callable[[F], F]:
    """An option with ``SearchOptions``' default, shown in ``--help``."""
    return api_option(field, *old, default=getattr(_DEFAULTS, field), show_default=True, help=text, **attrs)


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


@lode_command("search", "local", "db", "json", render=render)
@click.argument("query", required=False, default="")
@_many("projects", "--project", "Project name or id (repeatable; default: all).")
@_shown(
    "granularity",
    type=click.Choice(GRANULARITIES),
    text="document: files with their best chunks; chunk: chunks grouped by file.",
)
@_shown("mode", type=click.Choice(MODES), text="hybrid: vectors and full text; semantic or lexical alone.")
@_many("languages", "--lang", "Language filter, e.g. python (repeatable).")
@_many("node_types", "--node-type", "Node type filter, e.g. function (repeatable).")
@api_option("node_name_pattern", "--name", help="Glob on the unit's name (case-sensitive).")
@api_option("parent_context_pattern", "--parent", help="Glob on the enclosing declaration.")
@api_option("scope_depth", nargs=2, type=int, help="MIN MAX length of the scope path.")
@_many("has_definitions", "--defines", "Chunk defines this name (repeatable).")
@_many("has_references", "--references", "Chunk references this name (repeatable).")
@_many(
    "path_include",
    "--path",
    "Path glob to include, relative to the project root, e.g. 'src/**' (repeatable).",
)
@_many("path_exclude", "--exclude", "Path glob to exclude, relative to the project root (repeatable).")
@api_option(
    "roles",
    type=click.Choice(ROLES),
    multiple=True,
    help="Only chunks of this role: implementation, test, docs, example, config, changelog, "
    "generated, vendored, build (repeatable).",
)
@api_option(
    "exclude_roles", type=click.Choice(ROLES), multiple=True, help="No chunk of this role (repeatable)."
)
@_shown("file_limit", "--files", type=int, text="Files (document granularity).")
@_shown("chunks_per_file", "--per-file", type=int, text="Chunks per file.")
@_shown("limit", type=int, text="Chunks (chunk granularity).")
@_shown("offset", type=int, text="Skip this many results.")
def search_command(db: Path | str | None, local: bool, **fields: Any) -> SearchResponse:
    """Search the index for QUERY (hybrid by default), or list what --has-definitions names.

    Options are the fields of POST /api/v1/search. Goes through a running lode server when
    there is one; --local searches in-process (queries embedded by the cached ONNX graph).

    Example: lode search "parse http request" --granularity chunk --languages python --node-types function
    """  # fmt: skip
    options = SearchOptions(**fields)
    return through(db, local, lambda remote: remote.search(options), lambda lode: lode.search(options))
