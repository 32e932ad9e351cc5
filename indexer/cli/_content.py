"""``lode search-content`` and ``lode find-documents``: the agent endpoints on the command line.

Both go through a running lode server when there is one (``--local`` runs in-process) and
print the same JSON either way with ``--json``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from indexer.cli._common import api_option, lode_command, through, to_jsonable
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
