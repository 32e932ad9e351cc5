"""``lode mcp`` beside a running server: every tool call goes to the server's ``/mcp``, so
the server stays the index's one writer (and its loaded model answers at once).

Each call opens a short MCP session over streamable HTTP on loopback (a few milliseconds)
rather than keeping one open: a server restarted meanwhile is simply reached again."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult

__all__ = ["forward_call", "forwarding_instructions"]

#: Seconds a forwarded call may take (a discover over a large index takes a few).
_READ_SECONDS = 300.0


def forwarding_instructions(instructions: str, url: str, db: str) -> str:
    """The server's instructions, saying where the calls go."""
    return (
        f"{instructions}\nThis lode mcp forwards every tool call to the lode server at {url}, "
        f"which writes the index {db}: answers are the server's."
    )


async def forward_call(
    base_url: str, api_key: str | None, name: str, arguments: dict[str, Any]
) -> CallToolResult:
    """Call tool ``name`` on the lode server at ``base_url``; its answer (or tool error) as is."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    url = base_url.rstrip("/") + "/mcp"
    try:
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=_READ_SECONDS)) as http,
            Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
        ):
            return await client.call_tool(name, arguments)
    except Exception as exc:  # the server stopped or refused: say so, the session goes on
        raise ToolError(
            f"the lode server at {base_url} did not answer ({exc.__class__.__name__}: {exc})"
        ) from None
