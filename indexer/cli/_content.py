"""``lode search-content`` and ``lode find-documents``: the agent endpoints on the command line.

Both go through a running lode server when there is one (``--local`` runs in-process) and
print the same JSON either way with ``--json``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
    to_jsonable,
)
from indexer.search.content import DEFAULT_LIMIT, ContentRequest, FindDocumentsRequest

__all__ = ["find_documents_command", "search_content_command"]


def _run(local: bool, db: Path | None, path: str, request: Any, call: str) -> dict[str, Any]:
    """The answer as JSON-ready data, from a running server or in-process."""
    config = make_config(db=db)
    remote = server_for(config, db, local)
    if remote is not None:
        body = {k: v for k, v in to_jsonable(request).items() if v is not None}
        return dict(remote.post(path, body))
    lode = Lode(config)
    try:
        return dict(to_jsonable(getattr(lode, call)(request)))
    finally:
        lode.close()


@click.command("search-content")
@click.option("--concept", "concepts", multiple=True, help="Idea matched by meaning (repeatable).")
@click.option("--term", "terms", multiple=True, help="Exact term that must appear (repeatable).")
@click.option("--project", default=None, help="Project name or id (default: every project).")
@click.option("--min-score", type=float, default=None, help="Lowest relevance 0-1 (default 0.35).")
@click.option(
    "--limit", type=int, default=DEFAULT_LIMIT, show_default=True, help="Results per page (max 50)."
)
@click.option("--token", default=None, help="continuation token of the previous page.")
@local_option
@db_option
@json_option
@handle_errors
def search_content_command(
    concepts: tuple[str, ...],
    terms: tuple[str, ...],
    project: str | None,
    min_score: float | None,
    limit: int,
    token: str | None,
    local: bool,
    db: Path | None,
    as_json: bool,
) -> None:
    """Retrieve passages by meaning (--concept) and exact terms (--term), with full text.

    Score = similarity x 1.5 per distinct exact term present; with terms only it works like
    grep. Identifier-like terms (camelCase, snake_case, digits) match case-sensitively.

    Example: lode search-content --concept "token refresh" --term refreshToken --limit 5
    """
    request = ContentRequest(concepts, terms, project, min_score, limit, token)
    answer = _run(local, db, "/api/v1/search_content", request, "search_content")
    if as_json:
        echo_json(answer)
    else:
        _render_content(answer)


@click.command("find-documents")
@click.argument("query", required=False, default="")
@click.option("--project", default=None, help="Project name or id (default: every project).")
@click.option("--limit", type=int, default=DEFAULT_LIMIT, show_default=True, help="Files per page (max 50).")
@click.option("--token", default=None, help="continuation token of the previous page.")
@local_option
@db_option
@json_option
@handle_errors
def find_documents_command(
    query: str,
    project: str | None,
    limit: int,
    token: str | None,
    local: bool,
    db: Path | None,
    as_json: bool,
) -> None:
    """Discover the files that matter for QUERY: summaries and key phrases, no full text.

    Example: lode find-documents "session expiry" --limit 5
    """
    request = FindDocumentsRequest(query, project, limit, token)
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
        console.print(f"[dim]next page: --token {answer['continuation']['next_token']}[/]")
    related = answer["navigation_hints"]["related_queries"]
    if related:
        console.print(f"[dim]related: {', '.join(related)}[/]")


def _render_content(answer: dict[str, Any]) -> None:
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
