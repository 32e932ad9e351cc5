"""``lode search``, ``lode search-content`` and ``lode find-documents``: every request field
as an option named as the field; answers as highlighted snippets or JSON, the same JSON
in-process or through a running lode server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from indexer.cli._common import api_option, lode_command, through, to_jsonable
from indexer.roles import ROLES
from indexer.search._content_io import (
    DEFAULT_LIMIT,
    DEFAULT_MIN_SCORE,
    MAX_LIMIT,
    ContentRequest,
    FindDocumentsRequest,
)
from indexer.search._options import GRANULARITIES, MODES, SearchOptions

if TYPE_CHECKING:
    from rich.console import Console
    from rich.syntax import Syntax

    from indexer.search._results import ChunkHit, SearchResponse

__all__ = ["find_documents_command", "search_command", "search_content_command"]

F = TypeVar("F", bound=Callable[..., Any])
_DEFAULTS = SearchOptions(query="")


def _many(field: str, old: str, text: str) -> Callable[[F], F]:
    """A repeatable text option."""
    return api_option(field, old, multiple=True, help=text)


def _shown(field: str, *old: str, text: str, **attrs: Any) -> Callable[[F], F]:
    """An option with ``SearchOptions``' default, shown in ``--help``."""
    return api_option(field, *old, default=getattr(_DEFAULTS, field), show_default=True, help=text, **attrs)


def _snippet(content: str, language: str, start_line: int) -> Syntax:
    """The first lines of a hit, highlighted, with line numbers."""
    from rich.syntax import Syntax

    return Syntax("\n".join(content.splitlines()[:12]), language, line_numbers=True, start_line=start_line)


def _chunks(response: SearchResponse) -> list[tuple[str, float, list[ChunkHit]]]:
    if response.granularity == "chunk":
        return [(f"{g.project}:{g.file_path}", g.total_relevance, list(g.chunks)) for g in response.groups]
    return [(f"{d.project}:{d.file_path}", d.relevance_score, list(d.chunks)) for d in response.documents]


def render(response: SearchResponse) -> None:
    """Print results: file, lines, node, score, and a highlighted snippet."""
    from rich.console import Console

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
            console.print(_snippet(hit.content, hit.language, hit.start_line))
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


def _run(db: Path | str | None, local: bool, request: ContentRequest | FindDocumentsRequest) -> Any:
    """The answer as JSON-ready data, from a running server or in-process."""
    name = "search_content" if isinstance(request, ContentRequest) else "find_documents"
    body = {k: v for k, v in to_jsonable(request).items() if v is not None}
    return through(
        db,
        local,
        lambda remote: remote.post(f"/api/v1/{name}", body),
        lambda lode: to_jsonable(getattr(lode, name)(request)),
    )


_PROJECT = click.option("--project", default=None, help="Project name or id (default: every project).")
_TOKEN = api_option(
    "continuation_token", "--token", help="next_token of the previous page (the query comes with it)."
)


def _footer(console: Console, answer: dict[str, Any]) -> None:
    for warning in answer["status"]["warnings"]:
        console.print(f"[yellow]note:[/] {warning}")
    stats = answer["data"]["statistics"]
    console.print(f"[dim]{answer['status']['message']}, {stats['took_ms']:.0f} ms[/]")
    if answer["continuation"]["has_more"]:
        console.print(f"[dim]next page: --continuation-token {answer['continuation']['next_token']}[/]")
    related = answer["navigation_hints"]["related_queries"]
    if related:
        console.print(f"[dim]related: {', '.join(related)}[/]")


def _render_content(answer: dict[str, Any]) -> None:
    from rich.console import Console

    console = Console()
    for hit in answer["data"]["results"]:
        name = f"{hit['node_type']} {hit['node_name']}".strip()
        terms = f"  terms: {', '.join(hit['matched_terms'])}" if hit["matched_terms"] else ""
        lines = f"L{hit['start_line']}-{hit['end_line']}"
        console.print(
            f"[bold cyan]{hit['project']}:{hit['document_id']}[/] [green]{lines}[/] "
            f"{name}  [dim]{hit['relevance_score']:.3f}{terms}[/]"
        )
        console.print(_snippet(hit["content"], hit["language"], hit["start_line"]))
    _footer(console, answer)


def _render_documents(answer: dict[str, Any]) -> None:
    from rich.console import Console

    console = Console()
    for doc in answer["data"]["documents"]:
        console.print(
            f"[bold cyan]{doc['project']}:{doc['document_id']}[/]  [dim]{doc['relevance_score']:.3f} "
            f"{doc['primary_language']}, {doc['chunk_count']} chunks[/]"
        )
        if doc["summary"]:
            console.print(f"  {doc['summary']}")
        if doc["document_keywords"]:
            console.print(f"  [dim]{', '.join(doc['document_keywords'])}[/]")
    _footer(console, answer)


@lode_command("search-content", "local", "db", "json", render=_render_content)
@api_option("semantic_concepts", "--concept", multiple=True, help="Idea matched by meaning (repeatable).")
@api_option("exact_terms", "--term", multiple=True, help="Exact term that must appear (repeatable).")
@_PROJECT
@click.option(
    "--min-score",
    type=float,
    default=None,
    help=f"Lowest relevance 0-1 (default {DEFAULT_MIN_SCORE}); 0 with exact terms alone.",
)
@click.option(
    "--limit", type=int, default=DEFAULT_LIMIT, show_default=True, help=f"Results per page (max {MAX_LIMIT})."
)
@_TOKEN
def search_content_command(db: Path | str | None, local: bool, **fields: Any) -> Any:
    """Retrieve passages by meaning (--semantic-concepts) and exact terms (--exact-terms), with full text.

    Ranked as lode search ranks chunks; only chunks holding an exact term, 1.5 times less per
    term one lacks; with terms only it works like grep. Identifier-like terms (camelCase,
    snake_case, digits) match case-sensitively.

    Options are the fields of POST /api/v1/search_content.

    Example: lode search-content --semantic-concepts "token refresh" --exact-terms refreshToken --limit 5
    """
    return _run(db, local, ContentRequest(**fields))


@lode_command("find-documents", "local", "db", "json", render=_render_documents)
@click.argument("query", required=False, default="")
@_PROJECT
@click.option(
    "--limit", type=int, default=DEFAULT_LIMIT, show_default=True, help=f"Files per page (max {MAX_LIMIT})."
)
@_TOKEN
def find_documents_command(db: Path | str | None, local: bool, **fields: Any) -> Any:
    """Discover the files that matter for QUERY: summaries and key phrases, no full text.

    Example: lode find-documents "session expiry" --limit 5
    """
    return _run(db, local, FindDocumentsRequest(**fields))
