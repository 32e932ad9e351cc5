"""lode's MCP server for agents (official ``mcp`` SDK), over stdio and streamable HTTP.

Seven tools, each for one job an agent has: ``search``, ``find_symbol``,
``find_references``, ``read``, ``outline``, ``discover`` and ``projects``. Answers are
plain text (``path:start-end  kind name  (score)`` and numbered lines; JSON with
``format: "json"``), cut at whole results to an exact ``max_tokens`` counted with the
embedding model's word-piece tokenizer, and say what was left out and how to get it. A
bad argument is a tool error naming it (within ``max_tokens`` too); the session goes on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from indexer import __version__
from indexer.embed import TokenCounter
from indexer.storage_failure import describe_storage_failure, is_storage_failure
from server.context import ServerContext
from server.mcp import _discover, _outline, _projects, _read, _search, _symbols
from server.mcp._answer import fit_text
from server.mcp._forward import ServerLink, forwarding_instructions
from server.mcp._guard import (
    budget_of,
    check_arguments,
    clip_sdk_logs,
    field_errors,
    fit_answer,
    unknown_tool,
)
from server.mcp._params import Tool, add_tools, compact_schema

__all__ = ["INSTRUCTIONS", "TOOLS", "TOOL_SPECS", "ForwardingMCP", "LodeMCP", "build_mcp"]

#: The tools agents see, in the order they are listed.
#: Every tool, in the order ``tools/list`` gives them.
TOOL_SPECS: tuple[Tool, ...] = (
    _search.TOOL,
    *_symbols.TOOLS,
    _read.TOOL,
    _outline.TOOL,
    _discover.TOOL,
    _projects.TOOL,
)
TOOLS = tuple(spec.name for spec in TOOL_SPECS)

INSTRUCTIONS = """lode searches the code and docs of indexed projects.
search finds units by meaning or name (path:start-end, kind, name, score, numbered code);
find_symbol goes to a name's definitions and find_references lists its callers (names
matched as text, like ctags); read shows a file, a line range or a unit (path#Class.method);
outline lists, finds, greps or prints a project's structure; discover answers a broad
question with cited evidence; projects lists, registers and re-indexes projects. Answers
are plain text within max_tokens (format=json on request) and end with how to get what was
left out: search again with offset, read on from start_line."""


class LodeMCP(MCPServer):
    """The MCP server with lode's tools, listed with compact input schemas; an unknown tool
    or argument is an error naming it, and every answer (errors too) fits ``max_tokens``
    counted with ``counter()``'s tokenizer."""

    def __init__(
        self,
        instructions: str = INSTRUCTIONS,
        lifespan: Any = None,
        counter: Callable[[], TokenCounter] | None = None,
    ) -> None:
        super().__init__(
            name="lode",
            instructions=instructions,
            version=__version__,
            log_level="WARNING",
            lifespan=lifespan,
        )
        self._counter = counter
        clip_sdk_logs()

    def publish(self, names: tuple[str, ...]) -> None:
        """Give every tool its compact input schema (what ``tools/list`` sends); the tools
        registered must be ``names``, in that order."""
        tools = self._tool_manager.list_tools()
        if tuple(t.name for t in tools) != names:
            raise RuntimeError(f"tools {[t.name for t in tools]} registered, {list(names)} expected")
        for tool in tools:
            tool.parameters = compact_schema(tool.parameters)

    def _tool(self, name: str) -> Any:
        """The tool called ``name``, or a tool error naming it and the tools there are."""
        tool = self._tool_manager.get_tool(name)
        if tool is None:
            raise unknown_tool(name, TOOLS)
        return tool

    def counter(self) -> TokenCounter:
        """The tokenizer answers are budgeted with (the chunker's estimate before the
        service is up)."""
        try:
            return self._counter() if self._counter is not None else TokenCounter("estimate")
        except Exception:  # no context yet: the estimate, never a second error
            return TokenCounter("estimate")

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """Run a tool; bad arguments come back naming the argument, every answer within
        the call's ``max_tokens``."""
        known = self._tool(name).parameters.get("properties", {})
        budget = budget_of(known, arguments)
        try:
            check_arguments(known, arguments)
            result = await self._run(name, arguments, context)
        except ToolError as exc:
            raise ToolError(fit_text(self.counter(), str(exc), budget)) from exc.__cause__
        # counted off the event loop, as the tools run: an answer may be 100,000 tokens
        return await anyio.to_thread.run_sync(fit_answer, self.counter(), name, result, budget)

    async def _run(self, name: str, arguments: dict[str, Any], context: Any) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            from pydantic import ValidationError

            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(field_errors(exc.__cause__)) from None
            if exc.__cause__ is not None and is_storage_failure(exc.__cause__):  # as the CLI and HTTP say it
                raise ToolError(describe_storage_failure(exc.__cause__)) from exc.__cause__
            message = str(exc).removeprefix(f"Error executing tool {name}: ")
            raise ToolError(message) from exc.__cause__


class ForwardingMCP(LodeMCP):
    """The same tools, every call answered by the lode server at ``base_url`` (``lode mcp``
    beside a running server: the server stays the index's one writer)."""

    def __init__(self, base_url: str, api_key: str | None, db: str) -> None:
        self.link = ServerLink(base_url, api_key)
        super().__init__(forwarding_instructions(INSTRUCTIONS, base_url, db), lifespan=self.link.running)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """The server's answer to the call (its tool errors included)."""
        self._tool(name)
        return await self.link.call(name, arguments)


def _no_context() -> ServerContext:
    raise RuntimeError("a forwarding MCP server has no context of its own")


def build_mcp(
    get_ctx: Callable[[], ServerContext], *, forward_to: tuple[str, str | None, str] | None = None
) -> LodeMCP:
    """The MCP server with lode's tools; ``get_ctx`` returns the live service context. With
    ``forward_to`` (base URL, API key, index folder) every call goes to that lode server."""
    if forward_to is not None:
        mcp: LodeMCP = ForwardingMCP(*forward_to)
        get_ctx = _no_context
    else:
        mcp = LodeMCP(counter=lambda: get_ctx().token_counter())
    add_tools(mcp, get_ctx, TOOL_SPECS)
    mcp.publish(TOOLS)
    return mcp
