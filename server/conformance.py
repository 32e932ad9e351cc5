"""Making requests and the OpenAPI document agree, both ways.

Litestar converts request bodies in lax mode (``"limit": "10"`` became 10, ``"full": 0``
became false) and its generated schemas drop constraints of list items and of optional
fields (``minLength`` of a glob, the two items of ``scope_depth``) and never say
``additionalProperties: false``. So:

- ``strict_body``, a before-request hook, decodes a body with the route's own type in
  msgspec's strict mode first: a value of the wrong type is a 400 naming its field;
- ``exact_request_schemas`` replaces the component schema of every request type with
  msgspec's own (the same rules the decoder applies); the rules between fields ("a query,
  or has_definitions") are said in the descriptions and checked by the routes (a 400 naming
  the field), not stated as ``anyOf``: generators flatten that into required fields;
- the same hook answers ``OPTIONS`` itself, with an ``Allow`` header listing every method
  of the path (Litestar's listed only those registered before its OPTIONS handler).
"""

from __future__ import annotations

import ast
import inspect
import itertools
import re
import textwrap
import typing
from collections.abc import Iterator
from typing import Any

import msgspec
from litestar import Request, Response
from litestar.status_codes import HTTP_204_NO_CONTENT

from indexer.errors import ValidationError
from indexer.limits import clip
from server.http.schemas._fields import PATTERN_WORDS

__all__ = ["exact_request_schemas", "request_types", "strict_body"]

_AT = re.compile(r" - at `\$\.?([^`]*)`$")
_FIELD = re.compile(r"field `([^`]+)`")


def _body_type(request: Request[Any, Any, Any]) -> type[msgspec.Struct] | None:
    """The Struct a route takes as its body (``data``), if any."""
    fn = getattr(request.route_handler.fn, "__wrapped__", request.route_handler.fn)
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except (NameError, TypeError):
        return None
    hint = hints.get("data")
    if typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    return hint if inspect.isclass(hint) and issubclass(hint, msgspec.Struct) else None


_ITEM = re.compile(r"^([^.\[]+)(.*)$")
_REGEX = re.compile(r"Expected `str` matching regex '(.*)'$")
_ALTERNATIVES = re.compile(r"^\^\(\?:(.*)\)\$$")


def _pattern_words(pattern: str) -> str:
    """What failing ``pattern`` means, in words."""
    choices = _ALTERNATIVES.match(pattern)
    if choices is not None:
        return "must be one of: " + ", ".join(re.sub(r"\\(.)", r"\1", c) for c in choices.group(1).split("|"))
    return PATTERN_WORDS.get(pattern, f"must match {pattern}")


def _field_and_message(message: str) -> tuple[str, str]:
    """The top-level field a msgspec error is about, and the error in words (``node_types[2]``
    → ``node_types``, "item 2: must be one of …")."""
    at = _AT.search(message)
    text = _AT.sub("", message)
    if at is None:
        named = _FIELD.search(message)
        if named is None:
            return "body", text
        field = named.group(1)  # an unknown field as sent: quoted short
        return field, text.replace(f"`{field}`", f"`{clip(field)}`")
    field, rest = _ITEM.match(at.group(1) or "body").groups()  # type: ignore[union-attr]
    regex = _REGEX.search(text)
    if regex is not None:
        text = _pattern_words(regex.group(1).replace("\\\\", "\\"))  # the message shows repr()
    where = rest.strip(".")
    return field, (f"{where}: {text}" if where else text)


def _integral_floats_as_ints(value: Any) -> Any:
    """JSON's 1.0 is the integer 1 (JSON Schema agrees); msgspec's strict mode would refuse it."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_integral_floats_as_ints(v) for v in value]
    if isinstance(value, dict):
        return {k: _integral_floats_as_ints(v) for k, v in value.items()}
    return value


def _choices(body_type: type[msgspec.Struct], field: str) -> list[str]:
    """The values a Literal field of ``body_type`` (or its list's items) admits."""
    hint: Any = typing.get_type_hints(body_type, include_extras=True).get(field)
    while typing.get_origin(hint) in (typing.Annotated, list):
        hint = typing.get_args(hint)[0]
    return [str(v) for v in typing.get_args(hint)] if typing.get_origin(hint) is typing.Literal else []


async def strict_body(request: Request[Any, Any, Any]) -> Response[None] | None:
    """Before-request hook: answer OPTIONS with the full ``Allow``; refuse a body that is not
    exactly of the route's type (no coercion) with a 400 naming the field."""
    if request.method == "OPTIONS":
        known = request.app.route_handler_method_map
        methods = {m for path in request.route_handler.paths for m in known.get(path, {})}
        if methods:
            allow = ", ".join(sorted(set(methods) | {"OPTIONS"}))
            return Response(None, status_code=HTTP_204_NO_CONTENT, headers={"Allow": allow})
        return None
    body_type = _body_type(request)
    if body_type is None:
        return None
    try:
        value = _integral_floats_as_ints(msgspec.json.decode(await request.body()))
        msgspec.convert(value, type=body_type, strict=True)
    except msgspec.ValidationError as exc:
        field, message = _field_and_message(str(exc))
        if "Invalid enum value" in message:
            message = f"{message}: must be one of: {', '.join(_choices(body_type, field))}"
        raise ValidationError(field, message) from None
    except msgspec.DecodeError:
        return None  # malformed JSON: Litestar's decoder answers it
    return None


def request_types() -> list[type[msgspec.Struct]]:
    """Every request body type of the HTTP API (Structs that forbid unknown fields)."""
    from server.http.schemas import content, discover, outline, projects, search

    found: dict[str, type[msgspec.Struct]] = {}
    for module in (content, discover, outline, projects, search):
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, msgspec.Struct) and value.__struct_config__.forbid_unknown_fields:
                found[value.__name__] = value
    return [found[name] for name in sorted(found)]


def _forbidding(components: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for name, schema in components.items():
        if schema.get("type") == "object" and "properties" in schema:
            yield name, schema


def _field_docs(cls: type[Any]) -> dict[str, str]:
    """The docstrings written under a dataclass's fields, by field name (one line each)."""
    body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0]
    docs: dict[str, str] = {}
    statements = getattr(body, "body", [])
    for field, doc in itertools.pairwise(statements):
        if (
            isinstance(field, ast.AnnAssign)
            and isinstance(field.target, ast.Name)
            and isinstance(doc, ast.Expr)
            and isinstance(doc.value, ast.Constant)
            and isinstance(doc.value.value, str)
        ):
            docs[field.target.id] = " ".join(doc.value.value.split())
    return docs


def _discover_config_schema() -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``config`` object of a discover request: each stage's section with its settings
    (names and types; the ranges are the stage settings' own checks), nothing else."""
    from dataclasses import fields

    from indexer.search.discover import DiscoverConfig

    sections = {f.name: type(getattr(DiscoverConfig(), f.name)) for f in fields(DiscoverConfig)}
    _, components = msgspec.json.schema_components(
        list(sections.values()), ref_template="#/components/schemas/{name}"
    )
    for cls in sections.values():
        schema = components[cls.__name__]
        schema["additionalProperties"] = False
        for name, doc in _field_docs(cls).items():
            schema["properties"][name].setdefault("description", doc)
    stage_docs = _field_docs(DiscoverConfig)
    components["DiscoverConfig"] = {
        "type": "object",
        "additionalProperties": False,
        "description": "Settings of discover's stages for this request, one object per stage.",
        "properties": {
            name: {
                "allOf": [{"$ref": f"#/components/schemas/{cls.__name__}"}],
                "description": f"{stage_docs.get(name, 'Settings.')[:-1]} ({name}).",
            }
            for name, cls in sections.items()
        },
    }
    # a named component: an inline object inside anyOf has no name for generators to use
    return {"$ref": "#/components/schemas/DiscoverConfig"}, components


def _defaults_in_words(schema: dict[str, Any]) -> None:
    """A request field's default said in its description, not as ``default``: some
    generators (openapi-typescript) make every field with a default a required one, and a
    field left out of a request takes its default anyway."""
    for prop in (schema.get("properties") or {}).values():
        if "default" not in prop:
            continue
        default = prop.pop("default")
        text = prop.get("description", "")
        shown = msgspec.json.encode(default).decode()
        # a glob such as docs/* would end a generated comment: such a default goes unsaid
        if default is not None and "default" not in text and "/*" not in shown and "*/" not in shown:
            prop["description"] = f"{text} (default: {shown})" if text else f"Default: {shown}"


def exact_request_schemas(document: dict[str, Any]) -> None:
    """Replace, in a generated OpenAPI ``document``, each request type's schema with the
    exact one (examples kept)."""
    types = request_types()
    strict = {t.__name__ for t in types}
    _, exact = msgspec.json.schema_components(types, ref_template="#/components/schemas/{name}")
    components = document.setdefault("components", {}).setdefault("schemas", {})
    for name, schema in _forbidding(exact):
        if name in strict:
            schema["additionalProperties"] = False
    config, sections = _discover_config_schema()
    exact.update(msgspec.json.decode(msgspec.json.encode(sections)))  # defaults as JSON: lists, not tuples
    discover = exact["DiscoverRequest"]["properties"]["config"]
    discover["anyOf"] = [config, {"type": "null"}]
    for schema in exact.values():
        _defaults_in_words(schema)
    for name, schema in exact.items():
        examples = components.get(name, {}).get("examples")
        components[name] = {**schema, **({"examples": examples} if examples else {})}
