"""What every MCP tool module shares: lode's errors as tool errors naming the field."""

from __future__ import annotations

from mcp.server.mcpserver.exceptions import ToolError

from indexer.errors import LodeError, ValidationError
from indexer.limits import QUOTE_ITEMS

__all__ = ["tool_error"]


def tool_error(exc: LodeError) -> ToolError:
    """The HTTP API's message for this error, as a tool error (the first few fields of a
    ValidationError, and how many more)."""
    if isinstance(exc, ValidationError):
        parts = [f"invalid argument ({e.field}): {e.message}" for e in exc.errors[:QUOTE_ITEMS]]
        if len(exc.errors) > QUOTE_ITEMS:
            parts.append(f"… {len(exc.errors) - QUOTE_ITEMS} more invalid arguments")
        return ToolError("; ".join(parts))
    field = getattr(exc, "field", None)
    return ToolError(f"{field}: {exc}" if field else str(exc))
