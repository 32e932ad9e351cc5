"""``lode search-content`` and ``lode find-documents``: the agent endpoints on the command line.

Both go through a running lode server when there is one (``--local`` runs in-process) and
print the same JSON either way with ``--json``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

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
    to_jsonable,
)
from indexer.search._content_io import (
    DEFAULT_LIMIT,
    DEFAULT_MIN_SCORE,
    MAX_LIMIT,
    ContentRequest,
    FindDocumentsRequest,
)

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["find_documents_command", "search_content_command"]


def _run(local: bool, db: Path | str | None, path: str, request: Any, call: str) -> dict[str, Any]:
    """The answer as JSON-ready data, from a running server or in-process."""
    config = make_config(db=db)
    remote = server_for(config, db, local)
    if remote is not None:
        body = {k: v for k, v in to_jsonable(request).items() if v is not None}
        return dict(remote.post(path, body))
    from indexer.api import open_for_search

    lode = open_for_search(config)
    try:
        return dict(to_jsonable(getattr(lode, call)(request)))
    finally:
        lode.close()


_TOKEN_HELP = "next_token of the previous page (the query comes with it)."


@click.command("search-content", cls=LodeCommand)
@click.option(
    "--semantic-concepts",
    "semantic_concepts",
    cls=ApiOption,
    old=["--concept"],
    multiple=True,
    help="Idea matched by meaning (repeatable).",
)
@click.option(
    "--exact-terms",
    "exact_terms",
    cls=ApiOption,
    old=["--term"],
    multiple=True,
    help="Exact term that must appear (repeatable).",
)
@click.option("--project", default=None, help="Project name or id (default: every project).")
@click.option(
    "--min-score",
    type=float,
    default=None,
    help=f"Lowest relevance 0-1 (default {DEFAULT_MIN_SCORE}); 0 with exact terms alone.",
)
@click.option(
    "--limit", type=int, default=DEFAULT_LIMIT, show_default=True, help=f"Results per page (max {MAX_LIMIT})."
)
@click.option(
    "--continuation-token",
    "continuation_token",
    cls=ApiOption,
    old=["--token"],
    default=None,
    help=_TOKEN_HELP,
)
@local_option
@db_option
@json_option
@handle_errors
def search_content_command(
    semantic_concepts: tuple[str, ...],
    exact_terms: tuple[str, ...],
    project: str | None,
    min_score: float | None,
    limit: int,
    continuation_token: str | None,
    local: bool,
    db: Path | str | None,
    as_json: bool,
) -> None:
    """Retrieve passages by meaning (--semantic-concepts) and exact terms (--exact-terms), with full text.

    Ranked as lode search ranks chunks; only chunks holding an exact term, 1.5 times less per
    term one lacks; with terms only it works like grep. Identifier-like terms (camelCase,
    snake_case, digits) match case-sensitively.

    Options are the fields of POST /api/v1/search_content.

    Example: lode search-content --semantic-concepts "token refresh" --exact-terms refreshToken --limit 5
    """
    request = ContentRequest(semantic_concepts, exact_terms, project, min_score, limit, continuation_token)
    answer = _run(local, db, "/api/v1/search_content", request, "search_content")
    if as_json:
        echo_json(answer)
    else:
        _render_content(answer)


@click.command("find-documents", cls=LodeCommand)
@click.argument("query", required=False, default="")
@click.option("--project", default=None, help="Project name or id (default: every project).")
@click.option(
    "--limit", type=int, default=DEFAULT_LIMIT, show_default=True, help=f"Files per page (max {MAX_LIMIT})."
)
@click.option(
    "--continuation-token",
    "continuation_token",
    cls=ApiOption,
    old=["--token"],
    default=None,
    help=_TOKEN_HELP,
)
@local_option
@db_option
@json_option
@handle_errors
def find_documents_command(
    query: str,
    project: str | None,
    limit: int,
    continuation_token: str | None,
    local: bool,
    db: Path | str | None,
    as_json: bool,
) -> None:
    """Discover the files that matter for QUERY: summaries and key phrases, no full text.

    Example: lode find-documents "session expiry" --limit 5
    """
    request = FindDocumentsRequest(query, project, limit, continuation_token)
    answer = _run(local, db, "/api/v1/find_documents", request, "find_documents")
    if as_json:
        echo_json(answer)
    else:
        _render_documents(answer)


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
    from rich.syntax import Syntax

    console = Console()
    for hit in answer["data"]["results"]:
        name = f"{hit['node_type']} {hit['node_name']}".strip()
        terms = f"  terms: {', '.join(hit['matched_terms'])}" if hit["matched_terms"] else ""
        lines = f"L{hit['start_line']}-{hit['end_line']}"
        console.print(
            f"[bold cyan]{hit['project']}:{hit['document_id']}[/] [green]{lines}[/] "
            f"{name}  [dim]{hit['relevance_score']:.3f}{terms}[/]"
        )
        snippet = "\n".join(hit["content"].splitlines()[:12])
        console.print(Syntax(snippet, hit["language"], line_numbers=True, start_line=hit["start_line"]))
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
