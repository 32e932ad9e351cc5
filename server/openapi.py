"""The OpenAPI document lode serves: Litestar's, finished for client generators.

Litestar generates the paths and schemas from the routes; ``finish_document`` then adds
what it cannot say, in place and idempotently:

- each request type's exact schema (``server.conformance``: the rules the decoder applies);
- no 400 Litestar adds by itself to an operation with a parameter (its "Validation
  Exception"), where the route documents none: a path of text cannot be invalid;
- the bearer scheme on every operation that documents a 401 (``security: []`` on the
  others: ``/health``), and the ``WWW-Authenticate`` header of that 401;
- a ``discriminator`` on every ``oneOf`` of tagged shapes (search results per
  granularity, a discovery stage's answer per stage), so generators pick the shape by its
  tag rather than by trying each;
- a ``type`` on every enum of strings (msgspec states a ``Literal`` by its values alone),
  and no empty ``required`` list (a body whose fields all have defaults);
- optional query parameters that are not nullable: a parameter is left out, never sent as
  null (a URL has no null: generators that see one send the text ``null``).

The document, the docs page and ``/health`` are public: they hold no data.
"""

from __future__ import annotations

import json
import re
from typing import Any

from litestar import Litestar
from litestar._openapi.plugin import OpenAPIPlugin
from litestar.openapi.spec import Components, SecurityScheme

from server.conformance import exact_request_schemas

__all__ = ["BEARER", "finish_document", "openapi_document", "security_components"]

#: The name of the bearer scheme in ``components.securitySchemes``.
BEARER = "bearer"
_REF = "#/components/schemas/"
_WWW_AUTHENTICATE = {
    "description": 'Bearer realm="lode" (with error="invalid_token" when a wrong key was sent)',
    "schema": {"type": "string"},
}


def security_components() -> Components:
    """The components Litestar's document starts from: the bearer scheme."""
    scheme = SecurityScheme(
        type="http",
        scheme="bearer",
        description=(
            "The API key of a server started with --api-key or LODE_API_KEY, sent as "
            "Authorization: Bearer KEY. A server without a key takes every request without it."
        ),
    )
    return Components(security_schemes={BEARER: scheme})


def _operations(document: dict[str, Any]) -> list[dict[str, Any]]:
    methods = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
    return [op for item in document.get("paths", {}).values() for m, op in item.items() if m in methods]


def _drop_generated_400(operation: dict[str, Any]) -> None:
    """Litestar's own 400 of any operation with a parameter, where the route has none."""
    responses = operation.get("responses", {})
    schema = responses.get("400", {}).get("content", {}).get("application/json", {}).get("schema", {})
    if schema.get("description") == "Validation Exception":
        del responses["400"]


def _secure(operation: dict[str, Any]) -> None:
    """``security`` by whether the operation can answer 401; that 401's header."""
    unauthorized = operation.get("responses", {}).get("401")
    operation["security"] = [{BEARER: []}] if unauthorized is not None else []
    if unauthorized is not None:
        unauthorized.setdefault("headers", {})["WWW-Authenticate"] = dict(_WWW_AUTHENTICATE)


def _type_enums(node: Any) -> None:
    """``type: string`` beside every ``enum`` of strings that has no type; no empty
    ``required`` list."""
    if isinstance(node, list):
        for item in node:
            _type_enums(item)
        return
    if not isinstance(node, dict):
        return
    values = node.get("enum")
    if isinstance(values, list) and "type" not in node and all(isinstance(v, str) for v in values):
        node["type"] = "string"
    if node.get("required") == [] and "properties" in node:
        del node["required"]
    for value in node.values():
        _type_enums(value)


def _not_nullable(parameter: dict[str, Any]) -> None:
    """An optional parameter's ``oneOf [T, null]`` as ``T`` (its constraints kept)."""
    schema = parameter.get("schema") or {}
    choices = schema.get("oneOf")
    if parameter.get("required") or not isinstance(choices, list):
        return
    kept = [c for c in choices if c != {"type": "null"}]
    if len(kept) == 1 and len(choices) == 2:
        rest = {k: v for k, v in schema.items() if k != "oneOf"}
        parameter["schema"] = {**kept[0], **rest}


def _tag_of(schema: dict[str, Any]) -> tuple[str, str] | None:
    """The (property, value) of a tagged shape: a required property with a ``const``
    (described here: Litestar adds the tag of a tagged Struct without a description)."""
    for name, prop in (schema.get("properties") or {}).items():
        if isinstance(prop, dict) and "const" in prop and name in schema.get("required", ()):
            prop.setdefault("description", f"Always {prop['const']}: tells this shape from the others")
            return name, str(prop["const"])
    return None


def _discriminate(node: Any, schemas: dict[str, Any]) -> None:
    """Give every ``oneOf`` of ``$ref``s to tagged shapes (one tag property) its discriminator."""
    if isinstance(node, list):
        for item in node:
            _discriminate(item, schemas)
        return
    if not isinstance(node, dict):
        return
    choices = node.get("oneOf")
    if isinstance(choices, list) and len(choices) > 1 and all("$ref" in c for c in choices):
        names = [c["$ref"].removeprefix(_REF) for c in choices]
        tags = [_tag_of(schemas.get(n, {})) for n in names]
        if all(tags) and len({t[0] for t in tags if t}) == 1:
            node["discriminator"] = {
                "propertyName": tags[0][0] if tags[0] else "",
                "mapping": {t[1]: f"{_REF}{n}" for t, n in zip(tags, names, strict=True) if t},
            }
    for value in node.values():
        _discriminate(value, schemas)


def _examples_by_reference(document: dict[str, Any]) -> None:
    """Each named example of an operation (request, response, parameter) moved to
    ``components/examples`` and referenced: openapi-generator warns for every example written
    in place (it reads an example's ``$ref`` before checking it has one), and an example shown
    by many operations (an error's) is then written once."""
    kept: dict[str, dict[str, Any]] = document.setdefault("components", {}).setdefault("examples", {})
    names = {json.dumps(e, sort_keys=True): name for name, e in kept.items()}
    for operation in _operations(document):
        holders = [operation.get("requestBody", {}), *operation.get("responses", {}).values()]
        media = [m for h in holders for m in h.get("content", {}).values()]
        for holder in [*media, *operation.get("parameters", ())]:
            for title, example in (holder.get("examples") or {}).items():
                if "$ref" in example:
                    continue
                key = json.dumps(example, sort_keys=True)
                if key not in names:
                    names[key] = _free_name(kept, example.get("summary") or title)
                    kept[names[key]] = example
                holder["examples"][title] = {"$ref": f"#/components/examples/{names[key]}"}
    if not kept:
        del document["components"]["examples"]


def _free_name(taken: dict[str, Any], summary: str) -> str:
    """A component name from an example's summary, not yet in ``taken``."""
    base = re.sub(r"[^a-z0-9]+", "-", summary.lower()).strip("-")[:60].rstrip("-") or "example"
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    return name


def finish_document(document: dict[str, Any]) -> dict[str, Any]:
    """Finish Litestar's ``document`` for generators (in place; finishing twice changes nothing)."""
    exact_request_schemas(document)
    for operation in _operations(document):
        _drop_generated_400(operation)
        _secure(operation)
        for parameter in operation.get("parameters", ()):
            _not_nullable(parameter)
    _discriminate(document, document.get("components", {}).get("schemas", {}))
    _type_enums(document)
    _examples_by_reference(document)
    return document


def openapi_document(app: Litestar) -> dict[str, Any]:
    """The document ``app`` serves at ``/api/openapi.json``, finished (Litestar caches it)."""
    return finish_document(app.plugins.get(OpenAPIPlugin).provide_openapi_schema())
