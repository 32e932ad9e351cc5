"""``lode mcp`` beside a running server: every tool call goes to the server's ``/mcp``, so
the server stays the index's one writer (and its loaded model answers at once).

``ServerLink`` keeps one MCP session with the server open (opened as ``lode mcp`` starts,
so the first call does not pay for it); when it breaks (the
server restarted), calls go through a session of their own while it is opened again.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult

__all__ = ["ServerLink", "forward_call", "forwarding_instructions"]

log = logging.getLogger(__name__)

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
    try:
        async with _session(base_url, api_key) as client:
            result: CallToolResult = await client.call_tool(name, arguments)
            return result
    except Exception as exc:  # the server stopped or refused: say so, the session goes on
        raise ToolError(
            f"the lode server at {base_url} did not answer ({exc.__class__.__name__}: {exc})"
        ) from None


@asynccontextmanager
async def _session(base_url: str, api_key: str | None) -> AsyncIterator[Any]:
    """An MCP client session with the lode server at ``base_url``."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    url = base_url.rstrip("/") + "/mcp"
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=_READ_SECONDS)) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
    ):
        yield client


class ServerLink:
    """One MCP session with a lode server, kept open while ``running`` and opened again
    (a second later) whenever it breaks."""

    def __init__(self, base_url: str, api_key: str | None) -> None:
        self.base_url = base_url
        self.api_key = api_key
        self._client: Any = None
        self._broken = anyio.Event()

    @asynccontextmanager
    async def running(self, _server: object = None) -> AsyncIterator[dict[str, Any]]:
        """Keep the session open for as long as this context lasts (an MCP server's lifespan)."""
        async with anyio.create_task_group() as group:
            group.start_soon(self._keep)
            try:
                yield {}
            finally:
                group.cancel_scope.cancel()

    async def _keep(self) -> None:
        while True:
            self._broken = anyio.Event()
            try:
                async with _session(self.base_url, self.api_key) as client:
                    self._client = client
                    await self._broken.wait()
            except Exception as exc:  # the server went away: try again in a moment
                log.debug("the session with %s broke: %r", self.base_url, exc)
            self._client = None
            await anyio.sleep(1.0)

    async def call(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        """The server's answer to one tool call (through the open session when there is one)."""
        client = self._client
        if client is not None:
            try:
                result: CallToolResult = await client.call_tool(name, arguments)
                return result
            except Exception:
                self._client = None
                self._broken.set()
        return await forward_call(self.base_url, self.api_key, name, arguments)
