"""``lode outline ls|cat|find|grep|locate|plan``: a project's table of contents, read in-process
(the outline needs no model, so no server is involved)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from indexer.cli._common import api_option, cli, lode_command, make_config
from indexer.errors import ValidationError

if TYPE_CHECKING:
    from indexer.outline import (
        FindResult,
        GrepResult,
        Listing,
        LocateResult,
        NodeInfo,
        NodeText,
        Outline,
        PlanPrompt,
    )

__all__ = ["outline_group"]


def _open(db: Path | str | None, project: str | None) -> Outline:
    """The outline of ``project`` (or of the only project when none is named)."""
    from indexer.api import Lode

    lode = Lode(make_config(db=db))
    if project is None:
        projects = lode.list_projects()
        if len(projects) != 1:
            raise ValidationError(
                "project", f"name one with --project ({len(projects)} projects are registered)"
            )
        project = projects[0].id
    return lode.outline(project)


_PROJECT_HELP = "Project name or id (default: the only registered project)."


def _command(name: str, render: Callable[[Any], None]) -> Callable[[Callable[..., Any]], click.Command]:
    """An outline command: its callback takes the outline of ``--project`` and returns the
    operation's answer, printed as JSON or by ``render``."""

    def decorate(func: Callable[..., Any]) -> click.Command:
        @functools.wraps(func)
        def run(db: Path | str | None, project: str | None, **kwargs: Any) -> Any:
            return func(_open(db, project), **kwargs)

        command = lode_command(name, "json", "db", render=render, group=outline_group)(run)
        command.params.append(click.Option(["--project"], default=None, help=_PROJECT_HELP))
        return command

    return decorate


def _line(info: NodeInfo) -> str:
    lines = f" L{info.start_line}-{info.end_line}" if info.start_line else ""
    note = f" — {info.summary}" if info.summary else ""
    return f"{info.id} [{info.kind}{lines}]{note}"


def _print_listing(listing: Listing) -> None:
    click.echo(f"{listing.node.breadcrumb}  [{listing.node.kind}] {listing.node.id}")
    stack = [(child, 1) for child in reversed(listing.children)]
    while stack:
        child, level = stack.pop()
        more = "/" if child.kind == "directory" else ""
        note = f" — {child.summary}" if child.summary else ""
        click.echo(f"{'  ' * level}{child.title}{more} [{child.kind}, {child.leaf_count}] {child.id}{note}")
        stack.extend((grandchild, level + 1) for grandchild in reversed(child.children))
    if listing.truncated:
        click.echo(f"  … {listing.total_children} children in all (raise --limit)")


def _print_cues(result: LocateResult) -> None:
    for cue in result.cues:
        click.echo(f"{cue.confidence:.2f}  {cue.node}  ({cue.breadcrumb}) — {cue.reason}")


def _print_found(result: FindResult) -> None:
    for info in result.nodes:
        click.echo(_line(info))
    if result.truncated:
        click.echo(f"… {result.total} matches in all (raise --limit)")


def _print_matches(result: GrepResult) -> None:
    for match in result.matches:
        click.echo(f"{match.path}:{match.line}: {match.preview}  ({match.node})")
    if result.truncated:
        click.echo("… more matches (raise --limit or narrow --node)")


@cli.group("outline")
def outline_group() -> None:
    """Navigate a project's outline: folders → files → classes → methods, docs → sections.

    Example: lode outline ls --project shop
    """


@_command("ls", _print_listing)
@click.argument("node", required=False)
@click.option("--depth", type=int, default=1, show_default=True, help="Levels listed below NODE.")
@click.option("--limit", type=int, default=100, show_default=True, help="Children listed per node.")
def ls_command(outline: Outline, node: str | None, depth: int, limit: int) -> Listing:
    """List NODE (default: the root) and its children with summaries.

    Example: lode outline ls src/shop --depth 2 --project shop
    """
    return outline.ls(node, depth, limit)


@_command("cat", lambda result: click.echo(result.text))
@click.argument("node", required=False)
@click.option("--max-chars", type=int, default=20_000, show_default=True, help="Cut the text here.")
def cat_command(outline: Outline, node: str | None, max_chars: int) -> NodeText:
    """Print the text of NODE (a section, a function, a file) with line numbers.

    Example: lode outline cat "src/shop/cart.py#Cart.add_item" --project shop
    """
    return outline.cat(node, max_chars)


@_command("find", _print_found)
@click.argument("title")
@click.option("--kind", default=None, help="Only nodes of this kind (class, function, section…).")
@click.option("--node", default=None, help="Only under this node.")
@click.option("--limit", type=int, default=50, show_default=True, help="Nodes returned.")
def find_command(outline: Outline, title: str, kind: str | None, node: str | None, limit: int) -> FindResult:
    """Find nodes whose title matches the glob TITLE (case-insensitive).

    Example: lode outline find "*session*" --kind section --project shop
    """
    return outline.find(title, kind, node, limit)


@_command("grep", _print_matches)
@click.argument("pattern")
@click.option("--node", default=None, help="Only under this node (default: the whole project).")
@click.option("--limit", type=int, default=50, show_default=True, help="Matches returned.")
@click.option("-i", "--ignore-case", is_flag=True, help="Match case-insensitively.")
def grep_command(
    outline: Outline, pattern: str, node: str | None, limit: int, ignore_case: bool
) -> GrepResult:
    """Print lines matching the regular expression PATTERN, with the node holding each.

    Example: lode outline grep "def (add|remove)_item" --node src/shop --project shop
    """
    return outline.grep(pattern, node, limit, ignore_case)


@_command("locate", _print_cues)
@click.argument("question")
@api_option(
    "max_branches",
    "--branches",
    type=int,
    default=3,
    show_default=True,
    help="Cues returned, one per branch.",
)
def locate_command(outline: Outline, question: str, max_branches: int) -> LocateResult:
    """Print where to start reading for QUESTION, with a confidence per cue.

    Example: lode outline locate "when do session tokens expire" --project shop
    """
    return outline.locate(question, max_branches)


@_command("plan", lambda r: click.echo(f"intent: {r.intent}\n\n{r.system}\n\n{r.user}"))
@click.argument("question")
@click.option("--node", default=None, help="The current node (default: the root).")
@click.option("--visited", multiple=True, help="A node already read (repeatable).")
@click.option("--evidence", multiple=True, help="Something found so far (repeatable).")
@click.option("--missing", default=None, help="What is still missing.")
def plan_command(
    outline: Outline,
    question: str,
    node: str | None,
    visited: tuple[str, ...],
    evidence: tuple[str, ...],
    missing: str | None,
) -> PlanPrompt:
    """Print a navigation-planning prompt for QUESTION (for your own LLM).

    Example: lode outline plan "where are tokens refreshed" --visited docs/guide.md --project shop
    """
    return outline.plan(question, node, visited, evidence, missing)
