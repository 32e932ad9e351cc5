"""The old MCP tools over a project's outline (unlisted): ``outline_ls``, ``outline_cat``,
``outline_find``, ``outline_grep``, ``outline_locate`` and ``outline_plan``.

They call the same ``Lode.outline`` operations as the HTTP routes and answer with the
same JSON; a bad argument is a tool error whose message names the field, as the HTTP
API's 400 does, and an unknown node id says so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from server.context import ServerContext
from server.mcp_errors import tool_answer

__all__ = ["add_outline_tools"]

Node = Annotated[str | None, Field(description="Node id from an earlier answer; default: the project root")]
Project = Annotated[str, Field(description="Project name or id")]


def add_outline_tools(mcp: MCPServer, get_ctx: Callable[[], ServerContext]) -> None:
    """Register the outline tools on ``mcp``."""
    _add_reading_tools(mcp, get_ctx)
    _add_finding_tools(mcp, get_ctx)
    _add_guiding_tools(mcp, get_ctx)


def _add_reading_tools(mcp: MCPServer, get_ctx: Callable[[], ServerContext]) -> None:
    @mcp.tool(
        description=(
            "List a node of a project's outline and its children, each with kind, summary, leaf count and "
            "whether it has children. Start at the root (no node), then go down with child ids. depth > 1 "
            "lists grandchildren too."
        )
    )
    def outline_ls(
        project: Project,
        node: Node = None,
        depth: Annotated[int, Field(description="Levels below the node, 1-5")] = 1,
        limit: Annotated[int, Field(description="Children per node, 1-1000")] = 100,
    ) -> dict[str, Any]:
        return tool_answer(lambda: get_ctx().lode.outline(project).ls(node, depth, limit))

    @mcp.tool(
        description=(
            "Read a node's full text with line numbers: a section, a function, a class or a whole file "
            "(a folder gives its outline). Long text is cut at max_chars and says so (truncated)."
        )
    )
    def outline_cat(
        project: Project,
        node: Node = None,
        max_chars: Annotated[
            int, Field(description="Cut at about this many characters, 100-200000")
        ] = 20_000,
    ) -> dict[str, Any]:
        return tool_answer(lambda: get_ctx().lode.outline(project).cat(node, max_chars))


def _add_finding_tools(mcp: MCPServer, get_ctx: Callable[[], ServerContext]) -> None:
    @mcp.tool(
        description=(
            "Find outline nodes by title with a case-insensitive glob ('*session*', 'parse_*', 'Install*'), "
            "optionally of one kind (class, function, method, section, file…) under a node."
        )
    )
    def outline_find(
        project: Project,
        title: Annotated[str, Field(description="Glob on node titles")],
        kind: Annotated[str | None, Field(description="Only nodes of this kind")] = None,
        node: Node = None,
        limit: Annotated[int, Field(description="Nodes returned, 1-500")] = 50,
    ) -> dict[str, Any]:
        return tool_answer(lambda: get_ctx().lode.outline(project).find(title, kind, node, limit))

    @mcp.tool(
        description=(
            "grep under an outline node: lines matching a Python regular expression, each with its line "
            "number, a preview and the id of the innermost node (function, section…) holding it."
        )
    )
    def outline_grep(
        project: Project,
        pattern: Annotated[str, Field(description="Python regular expression")],
        node: Node = None,
        limit: Annotated[int, Field(description="Matches returned, 1-500")] = 50,
        ignore_case: Annotated[bool, Field(description="Match case-insensitively")] = False,
    ) -> dict[str, Any]:
        return tool_answer(lambda: get_ctx().lode.outline(project).grep(pattern, node, limit, ignore_case))


def _add_guiding_tools(mcp: MCPServer, get_ctx: Callable[[], ServerContext]) -> None:
    @mcp.tool(
        description=(
            "Where to start reading for a question: up to max_branches cues (node id, title, confidence "
            "0-1), one per branch, by BM25 over node titles, summaries and text. Overview questions ('what "
            "is this project about') point at the README."
        )
    )
    def outline_locate(
        project: Project,
        question: Annotated[str, Field(description="The question, in natural language")],
        max_branches: Annotated[int, Field(description="Cues returned, 1-10")] = 3,
    ) -> dict[str, Any]:
        return tool_answer(lambda: get_ctx().lode.outline(project).locate(question, max_branches))

    @mcp.tool(
        description=(
            "A navigation-planning prompt (system + user) for your own reasoning: the question's intent, the "
            "structure at a node, keyword matches with their paths and BM25 hints. After reading some nodes, "
            "call it again with visited, evidence and missing to get the unvisited branches."
        )
    )
    def outline_plan(
        project: Project,
        question: Annotated[str, Field(description="The question to answer")],
        node: Node = None,
        visited: Annotated[list[str] | None, Field(description="Node ids already read")] = None,
        evidence: Annotated[list[str] | None, Field(description="What was found so far")] = None,
        missing: Annotated[str | None, Field(description="What is still missing")] = None,
    ) -> dict[str, Any]:
        return tool_answer(
            lambda: (
                get_ctx().lode.outline(project).plan(question, node, visited or (), evidence or (), missing)
            )
        )
