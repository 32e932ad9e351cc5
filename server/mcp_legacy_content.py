"""The old MCP tools for agents answering questions (unlisted): ``search_content``
(retrieval), ``find_documents`` (discovery), ``get_document_data`` and
``get_document_text`` (reading by path).

They call the same ``Lode`` methods as the HTTP routes and answer with the same JSON; a
bad argument is a tool error naming the field, an expired continuation token says so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from indexer.search.content import ContentRequest, FindDocumentsRequest
from server.context import ServerContext
from server.mcp_errors import tool_answer

__all__ = ["add_content_tools"]

Strs = list[str]
Project = Annotated[str | None, Field(description="Project name or id (default: every project)")]
Token = Annotated[str | None, Field(description="continuation.next_token of the previous page")]
DocumentId = Annotated[str, Field(description="Path relative to the project root, as results give it")]


def add_content_tools(mcp: MCPServer, get_ctx: Callable[[], ServerContext]) -> None:
    """Register the retrieval, discovery and document tools on ``mcp``."""
    _add_retrieval_tool(mcp, get_ctx)
    _add_discovery_tool(mcp, get_ctx)
    _add_document_tools(mcp, get_ctx)


def _add_retrieval_tool(mcp: MCPServer, get_ctx: Callable[[], ServerContext]) -> None:
    @mcp.tool(
        description=(
            "Retrieve the exact passages that answer a question, with their full text, in one call. Give "
            "semantic_concepts (ideas matched by meaning, e.g. ['authentication', 'token refresh']) and/or "
            "exact_terms (words that must appear, e.g. ['refreshToken', 'v4.2']; identifier-like terms match "
            "case-sensitively). Score = semantic similarity × 1.5 per distinct exact term present; with "
            "exact_terms only it behaves like grep (every result contains a term). Page on with "
            "continuation_token. Use find_documents first when you do not know which files matter."
        )
    )
    def search_content(
        semantic_concepts: Annotated[Strs, Field(description="Ideas to match by meaning")] = [],  # noqa: B006
        exact_terms: Annotated[Strs, Field(description="Terms that must appear in the text")] = [],  # noqa: B006
        project: Project = None,
        min_score: Annotated[float | None, Field(description="Lowest relevance 0-1 (default 0.35)")] = None,
        limit: Annotated[int, Field(description="Results per page, 1-50")] = 10,
        continuation_token: Token = None,
    ) -> dict[str, Any]:
        request = ContentRequest(
            semantic_concepts=tuple(semantic_concepts),
            exact_terms=tuple(exact_terms),
            project=project,
            min_score=min_score,
            limit=limit,
            continuation_token=continuation_token,
        )
        return tool_answer(lambda: get_ctx().lode.search_content(request))


def _add_discovery_tool(mcp: MCPServer, get_ctx: Callable[[], ServerContext]) -> None:
    @mcp.tool(
        description=(
            "Discover which files matter for a topic: files ranked by relevance, each with a short summary, "
            "key phrases, languages and chunk count (no full text). Follow up with search_content for "
            "passages or get_document_data / get_document_text to read a file."
        )
    )
    def find_documents(
        query: Annotated[str, Field(description="What the files should be about")] = "",
        project: Project = None,
        limit: Annotated[int, Field(description="Files per page, 1-50")] = 10,
        continuation_token: Token = None,
    ) -> dict[str, Any]:
        request = FindDocumentsRequest(
            query=query, project=project, limit=limit, continuation_token=continuation_token
        )
        return tool_answer(lambda: get_ctx().lode.find_documents(request))


def _add_document_tools(mcp: MCPServer, get_ctx: Callable[[], ServerContext]) -> None:
    @mcp.tool(
        description=(
            "Read a document by project and document_id (its path relative to the project root, as "
            "search_content and find_documents return it): metadata, key phrases, summary and every chunk."
        )
    )
    def get_document_data(
        project: Annotated[str, Field(description="Project name or id")], document_id: DocumentId
    ) -> dict[str, Any]:
        return tool_answer(lambda: get_ctx().lode.document_data(project, document_id))

    @mcp.tool(
        description=(
            "Read lines of a document by project and document_id (path relative to the project root); "
            "start_line/end_line are 1-based and inclusive (default: the whole file)."
        )
    )
    def get_document_text(
        project: Annotated[str, Field(description="Project name or id")],
        document_id: DocumentId,
        start_line: Annotated[int | None, Field(description="First line (1-based)")] = None,
        end_line: Annotated[int | None, Field(description="Last line (inclusive)")] = None,
    ) -> dict[str, Any]:
        return tool_answer(lambda: get_ctx().lode.document_text(project, document_id, start_line, end_line))
