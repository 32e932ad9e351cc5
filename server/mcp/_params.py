"""How lode's MCP tools declare their arguments: one ``Param`` per argument, a tool's
signature built from a tuple of them (so adding a search filter is one line), published
schemas kept compact (no titles, ``null`` left implicit), and the arguments every tool
shares (``max_tokens``, ``format``)."""

from __future__ import annotations

import functools
import inspect
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import Field, StrictBool, StrictInt

from indexer.errors import LodeError, ValidationError
from server.context import ServerContext
from server.mcp._errors import tool_error

__all__ = [
    "FORMAT",
    "MAX_TOKENS",
    "Param",
    "Strs",
    "Tool",
    "add_tools",
    "call",
    "check_budget",
    "compact_schema",
    "strict",
    "with_params",
]

Strs = list[str]

#: The budget range every tool accepts.
MIN_TOKENS, MAX_TOKENS_LIMIT = 100, 100_000


@dataclass(frozen=True, slots=True)
class Param:
    """One tool argument: its name (the HTTP field's), type, default and a short description."""

    name: str
    type: Any
    default: Any
    doc: str

    def parameter(self) -> inspect.Parameter:
        """The argument as a keyword-only parameter of the tool's signature, validated
        strictly (``"100"`` is not a number, ``1.0`` not an integer, ``"true"`` not a
        boolean: an argument of the wrong type is an error naming it)."""
        annotation = Annotated[strict(self.type), Field(description=self.doc or None)]  # type: ignore[valid-type]
        default = inspect.Parameter.empty if self.default is ... else self.default
        return inspect.Parameter(
            self.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
        )


def strict(tp: Any) -> Any:
    """``tp`` with its integers and booleans strict, in lists, dicts and unions too (pydantic's
    lax mode reads ``"100"`` as 100 and ``"yes"`` as True); the JSON schema stays the same."""
    if tp is int:
        return StrictInt
    if tp is bool:
        return StrictBool
    origin, args = get_origin(tp), get_args(tp)
    if origin in (Union, UnionType):
        return functools.reduce(operator.or_, [strict(a) for a in args])
    if origin is list:
        return list[strict(args[0])]  # type: ignore[misc]
    if origin is dict:
        return dict[args[0], strict(args[1])]  # type: ignore[misc,valid-type]
    return tp


def max_tokens_param(default: int) -> Param:
    """``max_tokens``: the answer's exact budget."""
    return Param("max_tokens", int, default, "")


MAX_TOKENS = max_tokens_param
FORMAT = Param("format", Literal["text", "json"], "text", "")


def with_params(params: Sequence[Param]) -> Callable[[Callable[..., str]], Callable[..., str]]:
    """Give a ``def tool(**args) -> str`` the signature of ``params`` (what the SDK reads)."""

    def wrap(fn: Callable[..., str]) -> Callable[..., str]:
        signature = inspect.Signature([p.parameter() for p in params], return_annotation=str)
        fn.__signature__ = signature  # type: ignore[attr-defined]
        return fn

    return wrap


def check_budget(max_tokens: int) -> int:
    """``max_tokens`` when in range, else a ValidationError naming it."""
    if not MIN_TOKENS <= max_tokens <= MAX_TOKENS_LIMIT:
        raise ValidationError(
            "max_tokens", f"must be between {MIN_TOKENS} and {MAX_TOKENS_LIMIT} (got {max_tokens})"
        )
    return max_tokens


def call(run: Callable[[], str]) -> str:
    """Run a tool body: lode's errors become tool errors naming the field."""
    try:
        return run()
    except LodeError as exc:
        raise tool_error(exc) from None


@dataclass(frozen=True, slots=True)
class Tool:
    """One MCP tool: its name, description, arguments, and what answers a call within a
    checked ``max_tokens`` budget."""

    name: str
    description: str
    params: tuple[Param, ...]
    run: Callable[[ServerContext, dict[str, Any], int], str]


def _handler(spec: Tool, get_ctx: Callable[[], ServerContext]) -> Callable[..., str]:
    @with_params(spec.params)
    def tool(**args: Any) -> str:
        def run() -> str:
            budget = check_budget(args["max_tokens"])
            return spec.run(get_ctx(), args, budget)

        return call(run)

    return tool


def add_tools(mcp: Any, get_ctx: Callable[[], ServerContext], tools: Sequence[Tool]) -> None:
    """Register ``tools`` on ``mcp``, in order: a call's budget is checked first, then it
    runs, lode's errors becoming tool errors naming the field."""
    for spec in tools:
        tool = _handler(spec, get_ctx)
        mcp.add_tool(tool, name=spec.name, description=spec.description, structured_output=False)


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's input schema without what costs an agent characters and tells it nothing:
    titles, ``anyOf [T, null]`` (an optional argument is simply left out), null, empty and false
    defaults;
    unknown arguments are refused (``additionalProperties: false``)."""
    properties = {}
    for name, given in schema.get("properties", {}).items():
        prop = {k: v for k, v in given.items() if k != "title"}
        options = prop.get("anyOf")
        if options and len(options) == 2 and {"type": "null"} in options:
            prop.pop("anyOf")
            prop = {**next(o for o in options if o != {"type": "null"}), **prop}
        if prop.get("default", 0) in (None, []) or prop.get("default", 0) is False:  # absent: none, off
            prop.pop("default")
        if not prop.get("description"):
            prop.pop("description", None)
        properties[name] = prop
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if schema.get("required"):
        out["required"] = schema["required"]
    out["additionalProperties"] = False
    return out
