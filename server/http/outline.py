"""The outline of a project: ``ls``, ``cat`` (``/text``), ``find``, ``grep``, ``locate``, ``plan``."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, get, post
from litestar.params import Body, FromPath, QueryParameter

from indexer.limits import MAX_REGEX_CHARS, MAX_TEXT_CHARS, MAX_TITLE_CHARS
from server.convert import to_wire
from server.http._common import Ctx, blocking, example, ok
from server.http.examples.navigation import OUTLINE as EXAMPLES
from server.http.schemas.outline import (
    OutlineCatOut,
    OutlineFindOut,
    OutlineGrepOut,
    OutlineListingOut,
    OutlineLocateOut,
    OutlineLocateRequest,
    OutlinePlanOut,
    OutlinePlanRequest,
)

__all__ = ["OutlineController"]

_NODE_HELP = "Node id: '.' (the root, default), a path, path#Scope.Name or path#Heading/Sub"

NodeParam = Annotated[str | None, QueryParameter(description=_NODE_HELP, max_length=MAX_TEXT_CHARS)]
#: The errors of a read (a bad parameter, an unknown project or node) and of a question (a body).
_READ = (400, 404, 503)
_ASK = (400, 404, 413, 503)


class OutlineController(Controller):
    """A project's outline: folders, files, units, sections."""

    path = "/api/v1/projects/{project_id:str}/outline"
    tags = ("outline",)
    # Litestar registers handlers by name, and a component shared by two responses takes
    # the description of the first: ``children`` (ls) comes before ``text`` (cat)

    @get(
        summary="List a node's children (ls)",
        operation_id="outline_ls",
        responses=ok(OutlineListingOut, "The root's children", EXAMPLES["ls"], errors=_READ),
    )
    @blocking
    def children(
        self,
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
        "/text",
        summary="A node's text (cat)",
        operation_id="outline_cat",
        responses=ok(OutlineCatOut, "A section", EXAMPLES["cat"], errors=_READ),
    )
    @blocking
    def text(
        self,
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
        "/find",
        summary="Nodes by title glob (find)",
        operation_id="outline_find",
        responses=ok(OutlineFindOut, "Matching nodes", EXAMPLES["find"], errors=_READ),
    )
    @blocking
    def find(
        self,
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
        "/grep",
        summary="Lines matching a regex (grep)",
        operation_id="outline_grep",
        responses=ok(OutlineGrepOut, "Matching lines", EXAMPLES["grep"], errors=_READ),
    )
    @blocking
    def grep(
        self,
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
        "/locate",
        status_code=200,
        summary="Where to start reading for a question (locate)",
        operation_id="outline_locate",
        responses=ok(OutlineLocateOut, "Cues", EXAMPLES["locate"], errors=_ASK),
    )
    @blocking
    def locate(
        self,
        ctx: Ctx,
        project_id: FromPath[str],
        data: Annotated[
            OutlineLocateRequest,
            Body(examples=example("A fact question", EXAMPLES["locate_request"])),
        ],
    ) -> OutlineLocateOut:
        """BM25 over node titles, summaries and text (title weighted highest); an overview
        question, or one no node matches, starts at the README, else at the root."""
        return to_wire(
            ctx.lode.outline(project_id).locate(data.question, data.max_branches), OutlineLocateOut
        )

    @post(
        "/plan",
        status_code=200,
        summary="A navigation-planning prompt for your own LLM (plan)",
        operation_id="outline_plan",
        responses=ok(OutlinePlanOut, "A prompt", EXAMPLES["plan"], errors=_ASK),
    )
    @blocking
    def plan(
        self,
        ctx: Ctx,
        project_id: FromPath[str],
        data: Annotated[
            OutlinePlanRequest,
            Body(examples=example("A re-plan", EXAMPLES["plan_request"])),
        ],
    ) -> OutlinePlanOut:
        """The question's intent and a budgeted prompt (structure, keyword matches, BM25 hints,
        and for a re-plan the evidence, what is missing and the unvisited branches)."""
        outline = ctx.lode.outline(project_id)
        prompt = outline.plan(data.question, data.node, data.visited, data.evidence, data.missing)
        return to_wire(prompt, OutlinePlanOut)
