"""lode's MCP server for agents (official ``mcp`` SDK), over stdio and streamable HTTP.

Seven tools, one module each (``_search``, ``_symbols``: find_symbol and find_references,
``_read``, ``_outline``, ``_discover``, ``_projects``), each a thin adapter over the same
``indexer`` operations as the HTTP routes and the CLI; what they share: answers cut to
``max_tokens`` (``_answer``), argument declarations (``_params``), input checks and the
budget guard (``_guard``), errors (``_errors``), forwarding to a running server
(``_forward``), and the server itself (``_server``).
"""

from server.mcp._server import INSTRUCTIONS, TOOL_SPECS, TOOLS, ForwardingMCP, LodeMCP, build_mcp

__all__ = ["INSTRUCTIONS", "TOOLS", "TOOL_SPECS", "ForwardingMCP", "LodeMCP", "build_mcp"]
