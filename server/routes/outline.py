"""The outline of a project: ``ls``, ``cat`` (``/text``), ``find``, ``grep``, ``locate``, ``plan``."""

from __future__ import annotations

from typing import Annotated

from litestar import get, post
from litestar.di import Provide
from litestar.params import Body, FromPath, QueryParameter

from indexer.limits import MAX_REGEX_CHARS, MAX_TEXT_CHARS, MAX_TITLE_CHARS
from server.convert import to_wire
from server.routes._common import Ctx, blocking, example, get_ctx, ok
from server.schemas_outline import (
    EXAMPLES,
    OutlineCatOut,
    OutlineFindOut,
    OutlineGrepOut,
    OutlineListingOut,
    OutlineLocateOut,
    OutlineLocateRequest,
    OutlinePlanOut,
    OutlinePlanRequest,
)

__all__ = ["outline_routes"]

_deps = {"ctx": Provide(get_ctx, sync_to_thread=False)}
_TAGS = ["outline"]
_BASE = "/api/v1/projects/{project_id:str}/outline"
_NODE_HELP = "Node id: '.' (the root, default), a path, path#Scope.Name or path#Heading/Sub"

NodeParam = Annotated[str | None, QueryParameter(description=_NODE_HELP, max_length=MAX_TEXT_CHARS)]


@get(
    _BASE,
    dependencies=_deps,
    tags=_TAGS,
    summary="List a node's children (ls)",
    operation_id="outline_ls",
    responses=ok(OutlineListingOut, "The root's children", EXAMPLES["ls"]),
)
@blocking
def outline_ls(
    ctx: Ctx,
    project_id: FromPath[str],
    node: NodeParam = None,
    depth: Annotated[int, QueryParameter(ge=1, le=5, description="Levels listed below the node")] = 1,
    limit: Annotated[int, QueryParameter(ge=1, le=1000, description="Children listed per node")] = 100,
) -> OutlineListingOut:
    """A node of the project's outline and its children with summaries and leaf counts;
    an unknown node id is a 404."""
    return to_wire(ctx.lode.outline(project_id).ls(node, depth, limit), OutlineListingOut)


@get(
    f"{_BASE}/text",
    dependencies=_deps,
    tags=_TAGS,
    summary="A node's text (cat)",
    operation_id="outline_cat",
    responses=ok(OutlineCatOut, "A section", EXAMPLES["cat"]),
)
@blocking
def outline_cat(
    ctx: Ctx,
    project_id: FromPath[str],
    node: NodeParam = None,
    max_chars: Annotated[
        int, QueryParameter(ge=100, le=200_000, description="Cut the text at about this many characters")
    ] = 20_000,
) -> OutlineCatOut:
    """The full text of a section, unit or file, line-numbered (a folder's: its outline),
    cut at ``max_chars`` with ``truncated`` set."""
    return to_wire(ctx.lode.outline(project_id).cat(node, max_chars), OutlineCatOut)


@get(
    f"{_BASE}/find",
    dependencies=_deps,
    tags=_TAGS,
    summary="Nodes by title glob (find)",
    operation_id="outline_find",
    responses=ok(OutlineFindOut, "Matching nodes", EXAMPLES["find"]),
)
@blocking
def outline_find(
    ctx: Ctx,
    project_id: FromPath[str],
    title: Annotated[
        str,
        QueryParameter(
            description="Glob on titles, case-insensitive: *session*",
            min_length=1,
            max_length=MAX_TITLE_CHARS,
        ),
    ],
    kind: Annotated[
        str | None, QueryParameter(description="Only this kind (class, section…)", max_length=50)
    ] = None,
    node: NodeParam = None,
    limit: Annotated[int, QueryParameter(ge=1, le=500, description="Nodes returned")] = 50,
) -> OutlineFindOut:
    """Nodes under ``node`` whose title matches the glob, in document order."""
    return to_wire(ctx.lode.outline(project_id).find(title, kind, node, limit), OutlineFindOut)


@get(
    f"{_BASE}/grep",
    dependencies=_deps,
    tags=_TAGS,
    summary="Lines matching a regex (grep)",
    operation_id="outline_grep",
    responses=ok(OutlineGrepOut, "Matching lines", EXAMPLES["grep"]),
)
@blocking
def outline_grep(
    ctx: Ctx,
    project_id: FromPath[str],
    pattern: Annotated[
        str, QueryParameter(description="Python regular expression", max_length=MAX_REGEX_CHARS)
    ],
    node: NodeParam = None,
    limit: Annotated[int, QueryParameter(ge=1, le=500, description="Matches returned")] = 50,
    ignore_case: Annotated[bool, QueryParameter(description="Match case-insensitively")] = False,
) -> OutlineGrepOut:
    """Lines under ``node`` matching the pattern, each with the innermost node holding it;
    an invalid pattern is a 400 naming it."""
    return to_wire(ctx.lode.outline(project_id).grep(pattern, node, limit, ignore_case), OutlineGrepOut)


@post(
    f"{_BASE}/locate",
    dependencies=_deps,
    tags=_TAGS,
    status_code=200,
    summary="Where to start reading for a question (locate)",
    operation_id="outline_locate",
    responses=ok(OutlineLocateOut, "Cues", EXAMPLES["locate"]),
)
@blocking
def outline_locate(
    ctx: Ctx,
    project_id: FromPath[str],
    data: Annotated[
        OutlineLocateRequest,
        Body(examples=example("A fact question", {"question": "when do session tokens expire"})),
    ],
) -> OutlineLocateOut:
    """BM25 over node titles, summaries and text (title weighted highest); an overview
    question, or one no node matches, starts at the README, else at the root."""
    return to_wire(ctx.lode.outline(project_id).locate(data.question, data.max_branches), OutlineLocateOut)


@post(
    f"{_BASE}/plan",
    dependencies=_deps,
    tags=_TAGS,
    status_code=200,
    summary="A navigation-planning prompt for your own LLM (plan)",
    operation_id="outline_plan",
    responses=ok(OutlinePlanOut, "A prompt", EXAMPLES["plan"]),
)
@blocking
def outline_plan(
    ctx: Ctx,
    project_id: FromPath[str],
    data: Annotated[
        OutlinePlanRequest,
        Body(
            examples=example(
                "A re-plan",
                {
                    "question": "where are session tokens refreshed",
                    "visited": ["docs/guide.md"],
                    "evidence": ["tokens expire one hour after a refresh"],
                    "missing": "the refresh code",
                },
            )
        ),
    ],
) -> OutlinePlanOut:
    """The question's intent and a budgeted prompt (structure, keyword matches, BM25 hints,
    and for a re-plan the evidence, what is missing and the unvisited branches)."""
    outline = ctx.lode.outline(project_id)
    prompt = outline.plan(data.question, data.node, data.visited, data.evidence, data.missing)
    return to_wire(prompt, OutlinePlanOut)


outline_routes = [outline_ls, outline_cat, outline_find, outline_grep, outline_locate, outline_plan]
