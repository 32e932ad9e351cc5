"""What every MCP tool call goes through before and after its tool: arguments checked
(unknown names, NUL characters anywhere in them) before any tool runs, and the answer,
an error's too, kept within the call's ``max_tokens``. Messages quote at most a short
prefix of what was sent, and so do the SDK's log lines that repeat them."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError

from indexer.embed import TokenCounter
from indexer.limits import MAX_MESSAGE_CHARS, QUOTE_ITEMS, clip, quote
from server.mcp._answer import fit_text
from server.mcp._params import MAX_TOKENS_LIMIT, MIN_TOKENS

__all__ = [
    "budget_of",
    "check_arguments",
    "clip_sdk_logs",
    "field_errors",
    "fit_answer",
    "unknown_tool",
]

log = logging.getLogger(__name__)

#: The SDK's logger of tool calls (``Tool 'x' failed: '...'``).
_SDK_LOGGER = "mcp.server.mcpserver.server"


def field_errors(exc: Any) -> str:
    """A pydantic validation error as ``invalid argument (name): message``, one per field
    (the first few; a count of the others)."""
    errors = exc.errors()
    parts = []
    for error in errors[:QUOTE_ITEMS]:
        field = clip(".".join(str(p) for p in error["loc"])) or "arguments"
        parts.append(f"invalid argument ({field}): {clip(str(error['msg']), MAX_MESSAGE_CHARS)}")
    if len(errors) > QUOTE_ITEMS:
        parts.append(f"… {len(errors) - QUOTE_ITEMS} more invalid arguments")
    return "; ".join(parts)


def _nul_at(value: Any) -> str | None:
    """The path (``input.chunks.0.text``) of the first text holding a NUL character in a
    JSON value, or None (walked without recursion: a value may nest deep)."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return path
        elif isinstance(item, Mapping):
            for key, sub in reversed(list(item.items())):
                where = f"{path}.{key}" if path else str(key)
                if "\x00" in str(key):
                    return where
                stack.append((where, sub))
        elif isinstance(item, list | tuple):
            stack.extend((f"{path}.{i}", sub) for i, sub in reversed(list(enumerate(item))))
    return None


def check_arguments(known: Mapping[str, Any], arguments: Mapping[str, Any]) -> None:
    """A tool error naming an argument the tool does not take, or holding a NUL character
    (which no name, path, pattern or question has)."""
    unknown = sorted(set(arguments) - set(known))
    if unknown:
        names = ", ".join(clip(n) for n in unknown[:QUOTE_ITEMS])
        more = f" and {len(unknown) - QUOTE_ITEMS} more" if len(unknown) > QUOTE_ITEMS else ""
        raise ToolError(f"invalid argument ({names}{more}): unknown; known: {', '.join(known)}")
    where = _nul_at(dict(arguments))
    if where is not None:
        raise ToolError(f"invalid argument ({clip(where)}): must not contain NUL characters")


def budget_of(known: Mapping[str, Any], arguments: Mapping[str, Any]) -> int:
    """The call's token budget: its ``max_tokens`` when valid, else the tool's default
    (at least the smallest budget a tool takes)."""
    given = arguments.get("max_tokens")
    if isinstance(given, int) and not isinstance(given, bool) and MIN_TOKENS <= given <= MAX_TOKENS_LIMIT:
        return given
    if given is not None:  # an invalid budget: its error fits the smallest one
        return MIN_TOKENS
    default = known.get("max_tokens", {}).get("default", MIN_TOKENS)
    return max(MIN_TOKENS, int(default))


def fit_answer(counter: TokenCounter, name: str, result: Any, budget: int) -> Any:
    """``result`` (a CallToolResult) with its text within ``budget`` tokens; an answer that
    had to be cut here is a tool's bug, logged."""
    texts = [block.text for block in getattr(result, "content", []) if getattr(block, "text", None)]
    text = "".join(texts)
    if len(texts) != 1 or counter.count(text) <= budget:
        return result
    log.warning("the answer of tool %s was over max_tokens=%d: cut", name, budget)
    result.content[0].text = fit_text(counter, text, budget)
    return result


class _ClipArgs(logging.Filter):
    """Cuts the text arguments of a log record short (the SDK logs a tool's name and its
    error as sent)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(clip(a, MAX_MESSAGE_CHARS) if isinstance(a, str) else a for a in record.args)
        return True


def clip_sdk_logs() -> None:
    """Cut the SDK's log lines about tool calls short (once per process)."""
    logger = logging.getLogger(_SDK_LOGGER)
    if not any(isinstance(f, _ClipArgs) for f in logger.filters):
        logger.addFilter(_ClipArgs())


def unknown_tool(name: str, tools: tuple[str, ...]) -> ToolError:
    """The error of a call to a tool lode does not have."""
    return ToolError(f"unknown tool {quote(name)}; tools: {', '.join(tools)}")
