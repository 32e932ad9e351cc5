"""The old MCP tools of discovery (unlisted): ``discover`` (the nine stages) and one tool per stage.

They call the same functions as ``POST /api/v1/discover`` and ``/api/v1/discover/{stage}``;
a bad argument is a tool error naming the field. Each stage tool's output can be passed to
the next one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from indexer.config_file import load_discover_config
from indexer.errors import LodeError
from indexer.search.discover import run_stage
from server.context import ServerContext
from server.mcp_errors import tool_error
from server.routes.discover import run_discover
from server.schemas_discover import DiscoverRequest

__all__ = ["add_discover_tools"]

Format = Literal["markdown", "plain", "json"]
Strs = list[str]
Config = Annotated[
    dict[str, dict[str, Any]] | None,
    Field(description="Overrides per stage, e.g. {'broad': {'mmr_lambda': 0.5}} (see [discover.*] settings)"),
]


def add_discover_tools(
    mcp: MCPServer, get_ctx: Callable[[], ServerContext], *, with_discover: bool = False
) -> None:
    """Register the nine stage tools on ``mcp`` (and the old ``discover`` with ``with_discover``)."""
    if with_discover:
        _add_discover(mcp, get_ctx)
    _add_project_stages(mcp, get_ctx)
    _add_search_stages(mcp, get_ctx)
    _add_text_stages(mcp, get_ctx)


def _stage(get_ctx: Callable[[], ServerContext], stage: str, args: dict[str, Any]) -> dict[str, Any]:
    payload = {k: v for k, v in args.items() if v is not None}
    try:
        return run_stage(get_ctx().lode, stage, payload, load_discover_config())
    except LodeError as exc:
        raise tool_error(exc) from None


def _add_discover(mcp: MCPServer, get_ctx: Callable[[], ServerContext]) -> None:
    @mcp.tool(
        description=(
            "Answer a question about the indexed code with cited evidence: searches every project (or those "
            "matching include globs) with expanded queries, picks diverse relevant chunks, puts READMEs "
            "first, and returns answer_prompt: evidence bullets grouped by section (definition, features, "
            "architecture, …), each cited project:path:Lstart-Lend, within max_tokens. Start here for "
            "'what is X' / 'how does X work' questions; read cited lines with get_document."
        )
    )
    def discover(
        question: Annotated[str, Field(description="The question, e.g. 'what is shop'")],
        include: Annotated[Strs | None, Field(description="Globs on project names (default: all)")] = None,
        exclude: Annotated[Strs | None, Field(description="Globs on project names to skip")] = None,
        format: Annotated[Format, Field(description="Prompt format")] = "markdown",
        max_tokens: Annotated[int | None, Field(description="Prompt token budget (default 4000)")] = None,
        max_bullets: Annotated[int | None, Field(description="Most evidence bullets (default 20)")] = None,
        include_chunks: Annotated[bool, Field(description="Also return the evidence chunks")] = False,
        config: Config = None,
    ) -> dict[str, Any]:
        import msgspec

        request = DiscoverRequest(
            question=question,
            include=include or [],
            exclude=exclude or [],
            format=format,
            max_tokens=max_tokens,
            max_bullets=max_bullets,
            config=config,
        )
        try:
            out = msgspec.to_builtins(run_discover(get_ctx(), request))
        except LodeError as exc:
            raise tool_error(exc) from None
        if not include_chunks:
            out.pop("chunks")
        return dict(out)


def _add_project_stages(mcp: MCPServer, get_ctx: Callable[[], ServerContext]) -> None:
    @mcp.tool(
        description="Discovery stage 1: the projects to search (include/exclude globs on names) "
        "and the question's terms (stop words removed)."
    )
    def filter_projects(
        question: str,
        include: Strs | None = None,
        exclude: Strs | None = None,
        config: Config = None,
    ) -> dict[str, Any]:
        return _stage(
            get_ctx,
            "filter_projects",
            {"question": question, "include": include, "exclude": exclude, "config": config},
        )

    @mcp.tool(
        description="Discovery stage 2: score projects by name match, boost terms and signals "
        "(size, recency, tags), best first."
    )
    def score_projects(question: str, projects: Strs | None = None, config: Config = None) -> dict[str, Any]:
        return _stage(
            get_ctx, "score_projects", {"question": question, "projects": projects, "config": config}
        )

    @mcp.tool(
        description="Discovery stage 3: the question plus template expansions (definition, features, "
        "architecture, API, performance, use cases)."
    )
    def expand_queries(question: str, config: Config = None) -> dict[str, Any]:
        return _stage(get_ctx, "expand_queries", {"question": question, "config": config})


def _add_search_stages(mcp: MCPServer, get_ctx: Callable[[], ServerContext]) -> None:
    @mcp.tool(
        description="Discovery stage 4: hybrid search of every query across projects, similarity "
        "threshold, near-duplicate removal, MMR on embeddings. Returns chunks."
    )
    def broad_discovery(queries: Strs, projects: Strs | None = None, config: Config = None) -> dict[str, Any]:
        return _stage(
            get_ctx, "broad_discovery", {"queries": queries, "projects": projects, "config": config}
        )

    @mcp.tool(
        description="Discovery stage 5: deeper search in the top projects, reranked, with neighbouring "
        "chunks (same file, chunk_index ± context_window). Returns chunks."
    )
    def semantic_focus(
        queries: Strs,
        question: str = "",
        projects: Strs | None = None,
        config: Config = None,
    ) -> dict[str, Any]:
        args = {"queries": queries, "question": question, "projects": projects, "config": config}
        return _stage(get_ctx, "semantic_focus", args)


def _add_text_stages(mcp: MCPServer, get_ctx: Callable[[], ServerContext]) -> None:
    @mcp.tool(description="Discovery stage 6: README chunks (and top-level docs) boosted and placed first.")
    def promote_readme(chunks: list[dict[str, Any]], config: Config = None) -> dict[str, Any]:
        return _stage(get_ctx, "promote_readme", {"chunks": chunks, "config": config})

    @mcp.tool(
        description="Discovery stage 7: evidence bullets (key sentences, code signatures) from chunks, "
        "categorised and cited project:path:Lstart-Lend."
    )
    def compress_evidence(
        chunks: list[dict[str, Any]], question: str = "", config: Config = None
    ) -> dict[str, Any]:
        return _stage(
            get_ctx, "compress_evidence", {"chunks": chunks, "question": question, "config": config}
        )

    @mcp.tool(
        description="Discovery stage 8: an answer plan: bullets grouped into sections in priority order."
    )
    def build_answer_plan(bullets: list[dict[str, Any]], config: Config = None) -> dict[str, Any]:
        return _stage(get_ctx, "build_answer_plan", {"bullets": bullets, "config": config})

    @mcp.tool(
        description="Discovery stage 9: the LLM prompt of a plan (markdown, plain or json) within a token "
        "budget, cut only at bullet boundaries."
    )
    def render_prompt(question: str, plan: dict[str, Any], config: Config = None) -> dict[str, Any]:
        return _stage(get_ctx, "render_prompt", {"question": question, "plan": plan, "config": config})
