"""``lode outline ls|cat|find|grep|locate|plan``: a project's table of contents, read in-process
(the outline needs no model, so no server is involved)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from indexer.cli._common import (
    ApiOption,
    LodeGroup,
    db_option,
    echo_json,
    handle_errors,
    json_option,
    make_config,
)
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

F = TypeVar("F", bound=Callable[..., Any])
#: What a command's body returns: the operation's answer and how to print it.
Command = tuple[Any, Callable[[Any], None]]


def _options(func: F) -> F:
    """``--project``, ``--db`` and ``--json``, shared by every outline command."""
    wrapped = click.option(
        "--project", default=None, help="Project name or id (default: the only registered project)."
    )(func)
    return json_option(db_option(wrapped))


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


def _run(func: Callable[..., Any]) -> Callable[..., Any]:
    """Open the outline, call the command's operation, print JSON or the text rendering."""

    @functools.wraps(func)
    def wrapper(db: Path | str | None, project: str | None, as_json: bool, **kwargs: Any) -> None:
        result, render = func(_open(db, project), **kwargs)
        if as_json:
            echo_json(result)
        else:
            render(result)

    return wrapper


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


def _print_text(result: NodeText) -> None:
    click.echo(result.text)


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


def _print_plan(result: PlanPrompt) -> None:
    click.echo(f"intent: {result.intent}\n\n{result.system}\n\n{result.user}")


@click.group("outline", cls=LodeGroup)
def outline_group() -> None:
    """Navigate a project's outline: folders → files → classes → methods, docs → sections.

    Example: lode outline ls --project shop
    """


@outline_group.command("ls")
@click.argument("node", required=False)
@click.option("--depth", type=int, default=1, show_default=True, help="Levels listed below NODE.")
@click.option("--limit", type=int, default=100, show_default=True, help="Children listed per node.")
@_options
@handle_errors
@_run
def ls_command(outline: Outline, node: str | None, depth: int, limit: int) -> Command:
    """List NODE (default: the root) and its children with summaries.

    Example: lode outline ls src/shop --depth 2 --project shop
    """
    return outline.ls(node, depth, limit), _print_listing


@outline_group.command("cat")
@click.argument("node", required=False)
@click.option("--max-chars", type=int, default=20_000, show_default=True, help="Cut the text here.")
@_options
@handle_errors
@_run
def cat_command(outline: Outline, node: str | None, max_chars: int) -> Command:
    """Print the text of NODE (a section, a function, a file) with line numbers.

    Example: lode outline cat "src/shop/cart.py#Cart.add_item" --project shop
    """
    return outline.cat(node, max_chars), _print_text


@outline_group.command("find")
@click.argument("title")
@click.option("--kind", default=None, help="Only nodes of this kind (class, function, section…).")
@click.option("--node", default=None, help="Only under this node.")
@click.option("--limit", type=int, default=50, show_default=True, help="Nodes returned.")
@_options
@handle_errors
@_run
def find_command(outline: Outline, title: str, kind: str | None, node: str | None, limit: int) -> Command:
    """Find nodes whose title matches the glob TITLE (case-insensitive).

    Example: lode outline find "*session*" --kind section --project shop
    """
    return outline.find(title, kind, node, limit), _print_found


@outline_group.command("grep")
@click.argument("pattern")
@click.option("--node", default=None, help="Only under this node (default: the whole project).")
@click.option("--limit", type=int, default=50, show_default=True, help="Matches returned.")
@click.option("-i", "--ignore-case", is_flag=True, help="Match case-insensitively.")
@_options
@handle_errors
@_run
def grep_command(outline: Outline, pattern: str, node: str | None, limit: int, ignore_case: bool) -> Command:
    """Print lines matching the regular expression PATTERN, with the node holding each.

    Example: lode outline grep "def (add|remove)_item" --node src/shop --project shop
    """
    return outline.grep(pattern, node, limit, ignore_case), _print_matches


@outline_group.command("locate")
@click.argument("question")
@click.option(
    "--max-branches",
    "max_branches",
    cls=ApiOption,
    old=["--branches"],
    type=int,
    default=3,
    show_default=True,
    help="Cues returned, one per branch.",
)
@_options
@handle_errors
@_run
def locate_command(outline: Outline, question: str, max_branches: int) -> Command:
    """Print where to start reading for QUESTION, with a confidence per cue.

    Example: lode outline locate "when do session tokens expire" --project shop
    """
    return outline.locate(question, max_branches), _print_cues


@outline_group.command("plan")
@click.argument("question")
@click.option("--node", default=None, help="The current node (default: the root).")
@click.option("--visited", multiple=True, help="A node already read (repeatable).")
@click.option("--evidence", multiple=True, help="Something found so far (repeatable).")
@click.option("--missing", default=None, help="What is still missing.")
@_options
@handle_errors
@_run
def plan_command(
    outline: Outline,
    question: str,
    node: str | None,
    visited: tuple[str, ...],
    evidence: tuple[str, ...],
    missing: str | None,
) -> Command:
    """Print a navigation-planning prompt for QUESTION (for your own LLM).

    Example: lode outline plan "where are tokens refreshed" --visited docs/guide.md --project shop
    """
    return outline.plan(question, node, visited, evidence, missing), _print_plan
