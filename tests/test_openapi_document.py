"""The served OpenAPI document is one client generators take as is (issue 41): the bearer
scheme where the key is asked, errors documented where they can happen, closed sets as
enums, one shape per search granularity and per discovery stage, no text that ends a
generated comment, defaults that leave fields optional, and examples that match their
schemas. In-process: the document is built without a server, store or model."""

from __future__ import annotations

import re
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from jsonschema import Draft202012Validator

from indexer._runs import TASK_STATUSES
from indexer.config import load_config
from indexer.embed import FakeEmbedder
from indexer.models import NODE_TYPES, SYMBOL_ROLES
from indexer.roles import ROLES
from indexer.search.discover import FORMATS, STAGES
from indexer.symbols import MATCHES, PROXIMITIES
from server.app import create_app
from server.http.schemas import _choices
from server.openapi import BEARER, finish_document, openapi_document

_METHODS = ("get", "put", "post", "delete", "patch")
#: Text that ends or opens a comment in the code generators write (JSDoc, Java, C#, Python
#: docstrings), or that Java reads as a unicode escape even inside a comment.
_HOSTILE = re.compile(r"\*/|/\*|\\u|\"\"\"|<!--|-->")


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    config = load_config(env={}, overrides={"db": tmp_path_factory.mktemp("doc") / "db"})
    return openapi_document(create_app(config))


def _operations(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, item in sorted(document["paths"].items()):
        for method, operation in item.items():
            if method in _METHODS:
                yield f"{method.upper()} {path}", operation


def _walk(node: Any, where: str = "") -> Iterator[tuple[str, str, Any]]:
    """Every (where, key, value) of the document's objects."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield where, key, value
            yield from _walk(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _walk(value, f"{where}/{i}")


def _schema(document: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = document["components"]["schemas"][name]
    return found


# ---- security -----------------------------------------------------------------------------
def test_every_operation_but_health_asks_for_the_bearer_key(document: dict[str, Any]) -> None:
    scheme = document["components"]["securitySchemes"][BEARER]
    assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")
    for name, operation in _operations(document):
        if name == "GET /health":
            assert operation["security"] == [], name
            assert "401" not in operation["responses"], name
            continue
        assert operation["security"] == [{BEARER: []}], name
        unauthorized = operation["responses"]["401"]
        assert "WWW-Authenticate" in unauthorized["headers"], name


def test_finishing_twice_changes_nothing(document: dict[str, Any]) -> None:
    import copy

    again = finish_document(copy.deepcopy(document))
    assert again == document


# ---- responses ----------------------------------------------------------------------------
def test_errors_are_documented_where_they_can_happen(document: dict[str, Any]) -> None:
    operations = dict(_operations(document))
    health = operations["GET /health"]["responses"]
    assert set(health) == {"200", "403", "503"}  # never a 400, 401 or 404
    for name, operation in operations.items():
        codes = set(operation["responses"])
        method = name.split()[0]
        assert "403" in codes, name  # the browser guard answers any route
        assert "422" not in codes, name  # lode never answers 422
        assert ("413" in codes) == (method in ("POST", "PATCH", "DELETE")), name  # bodies only
        if not operation.get("parameters") and "requestBody" not in operation and method == "GET":
            assert "400" not in codes, name  # nothing to get wrong
        if name != "GET /health":
            assert "503" in codes, name  # every other route reads the index
        if "{" not in name and method == "GET" and not operation.get("parameters"):
            assert "404" not in codes, name
    assert "409" in operations["POST /api/v1/projects"]["responses"]  # a name already taken
    assert "409" not in operations["GET /api/v1/projects"]["responses"]
    assert "409" in operations["POST /api/v1/search_content"]["responses"]  # an outdated token


def test_every_response_is_described(document: dict[str, Any]) -> None:
    for name, operation in _operations(document):
        for code, response in operation["responses"].items():
            assert response["description"] not in ("", "Additional response"), (name, code)
            if code.startswith(("4", "5")) and name != "GET /health":
                schema = response["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/ErrorOut"}, (name, code)


# ---- types --------------------------------------------------------------------------------
def test_the_closed_sets_are_the_indexer_constants() -> None:
    def values(literal: Any) -> set[str]:
        return set(typing.get_args(literal))

    assert values(_choices.NodeTypeName) == set(NODE_TYPES)
    assert values(_choices.SymbolKind) == set(NODE_TYPES) | {"reference"}
    assert values(_choices.RoleName) == set(ROLES)
    assert values(_choices.Match) == set(MATCHES)
    assert values(_choices.Proximity) == set(PROXIMITIES)
    assert values(_choices.SymbolRole) == set(SYMBOL_ROLES)
    assert values(_choices.TaskStatus) == set(TASK_STATUSES)
    assert values(_choices.TaskPhase) == {"queued", "chunk", "embed"} | set(TASK_STATUSES) - {"running"}
    assert typing.get_args(_choices.StageName) == STAGES
    assert typing.get_args(_choices.PromptFormat) == FORMATS


def _items_enum(prop: dict[str, Any]) -> set[str]:
    return set(prop["items"]["enum"])


def test_closed_sets_are_enums(document: dict[str, Any]) -> None:
    search = _schema(document, "SearchRequest")["properties"]
    assert _items_enum(search["node_types"]) == set(NODE_TYPES)
    assert _items_enum(search["roles"]) == _items_enum(search["exclude_roles"]) == set(ROLES)
    task = _schema(document, "TaskOut")["properties"]
    assert set(task["status"]["enum"]) == set(TASK_STATUSES)
    assert {"kind", "phase"} <= {k for k, v in task.items() if "enum" in v}
    symbol = _schema(document, "SymbolOut")["properties"]
    assert set(symbol["proximity"]["enum"]) == set(PROXIMITIES)
    assert "reference" in symbol["kind"]["enum"]
    params = {p["name"]: p for p in document["paths"]["/api/v1/symbols"]["get"]["parameters"]}
    assert set(params["match"]["schema"]["enum"]) == set(MATCHES)
    # lists as repeated parameters, as /search takes them in its body
    kinds = params["kind"]["schema"]
    assert (kinds["type"], set(kinds["items"]["enum"])) == ("array", set(NODE_TYPES))
    assert params["language"]["schema"]["type"] == "array"
    discover = _schema(document, "DiscoverRequest")["properties"]["format"]
    assert [set(kind.get("enum", ())) for kind in discover["anyOf"]] == [set(FORMATS), set()]


def test_an_optional_parameter_is_never_null(document: dict[str, Any]) -> None:
    """A URL has no null: a generator that sees a nullable parameter sends the text null."""
    nullable = [
        f"{name} {p['name']}"
        for name, operation in _operations(document)
        for p in operation.get("parameters", ())
        if "'type': 'null'" in str(p["schema"])
    ]
    assert nullable == []


def test_no_field_is_an_untyped_object(document: dict[str, Any]) -> None:
    """``watch``, ``extra`` and a stage's ``result`` have shapes of their own."""
    watch = _schema(document, "ProjectOut")["properties"]["watch"]
    assert {"$ref": "#/components/schemas/WatchOut"} in watch["oneOf"]
    extra = _schema(document, "ErrorOut")["properties"]["extra"]
    assert {"items": {"$ref": "#/components/schemas/ErrorFieldOut"}, "type": "array"} in extra["oneOf"]
    assert len(extra["oneOf"]) == 2  # or null
    loose = [
        f"{where}/{key}"
        for where, key, value in _walk(document["components"]["schemas"])
        if key == "additionalProperties" and value == {} and "/config" not in where
    ]
    assert loose == []


def _discriminated(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, str]:
    mapping: dict[str, str] = schema["discriminator"]["mapping"]
    for tag, ref in mapping.items():
        shape = _schema(document, ref.rsplit("/", 1)[1])
        assert shape["properties"][schema["discriminator"]["propertyName"]]["const"] == tag
    return mapping


def test_search_results_have_one_shape_per_granularity(document: dict[str, Any]) -> None:
    ok = document["paths"]["/api/v1/search"]["post"]["responses"]["200"]
    schema = ok["content"]["application/json"]["schema"]
    assert schema["discriminator"]["propertyName"] == "granularity"
    mapping = _discriminated(document, schema)
    assert set(mapping) == {"document", "chunk"}
    documents = _schema(document, mapping["document"].rsplit("/", 1)[1])
    groups = _schema(document, mapping["chunk"].rsplit("/", 1)[1])
    assert "documents" in documents["required"]
    assert "groups" not in documents["properties"]
    assert "groups" in groups["required"]
    assert "documents" not in groups["properties"]


def test_a_stage_answers_its_own_shape(document: dict[str, Any]) -> None:
    ok = document["paths"]["/api/v1/discover/{stage}"]["post"]["responses"]["200"]
    schema = ok["content"]["application/json"]["schema"]
    assert schema["discriminator"]["propertyName"] == "stage"
    assert set(_discriminated(document, schema)) == set(STAGES)


# ---- generators ---------------------------------------------------------------------------
def test_no_text_ends_a_generated_comment(document: dict[str, Any]) -> None:
    hostile = [
        f"{where}/{key}: {value[:80]!r}"
        for where, key, value in _walk(document)
        if key in ("description", "summary", "title") and isinstance(value, str) and _HOSTILE.search(value)
    ]
    assert hostile == []


def test_a_field_with_a_default_is_optional(document: dict[str, Any]) -> None:
    for name, schema in document["components"]["schemas"].items():
        required = set(schema.get("required", ()))
        defaulted = {p for p, prop in (schema.get("properties") or {}).items() if "default" in prop}
        assert not required & defaulted, name
        # no anyOf/allOf around a body's rules: generators flatten them into required fields
        assert "anyOf" not in schema, name
        assert "allOf" not in schema, name
        if schema.get("additionalProperties") is False:  # a request's: its defaults in words
            # openapi-typescript makes a field with a default a required one
            assert defaulted == set(), name


def _example_value(document: dict[str, Any], example: dict[str, Any]) -> Any:
    ref = example.get("$ref")
    if ref is None:
        return example["value"]
    return document["components"]["examples"][ref.removeprefix("#/components/examples/")]["value"]


def _examples(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], Any]]:
    """(where, schema, example) of every example in the document."""
    for name, schema in document["components"]["schemas"].items():
        for i, value in enumerate(schema.get("examples", ())):
            yield f"components/{name}/{i}", {"$ref": f"#/components/schemas/{name}"}, value
    for name, operation in _operations(document):
        bodies = [("request", operation.get("requestBody", {}))]
        bodies += [(code, response) for code, response in operation["responses"].items()]
        for where, holder in bodies:
            for media in holder.get("content", {}).values():
                for title, example in (media.get("examples") or {}).items():
                    yield f"{name} {where} {title}", media["schema"], _example_value(document, example)
        for parameter in operation.get("parameters", ()):
            for title, example in (parameter.get("examples") or {}).items():
                yield (
                    f"{name} {parameter['name']} {title}",
                    parameter["schema"],
                    _example_value(document, example),
                )


def test_named_examples_are_components(document: dict[str, Any]) -> None:
    """openapi-generator (7.26) warns "Failed to get the schema name: null" for every named
    example written in place (it reads the example's $ref before checking there is one):
    each is a component, shared by the operations that show it, and referenced."""
    inline = [
        f"{name} {title}"
        for name, operation in _operations(document)
        for holder in [
            operation.get("requestBody", {}),
            *operation["responses"].values(),
            *operation.get("parameters", ()),
        ]
        for media in [holder, *holder.get("content", {}).values()]
        for title, example in (media.get("examples") or {}).items()
        if isinstance(media.get("examples"), dict) and "$ref" not in example
    ]
    assert inline == []
    kept = document["components"]["examples"]
    values = [msgspec.json.encode(e) for e in kept.values()]
    assert len(set(values)) == len(values)  # one component per example, however many show it
    assert all(e.get("summary") and "value" in e for e in kept.values())


def test_every_example_matches_its_schema(document: dict[str, Any]) -> None:
    seen = 0
    wrong = []
    for where, schema, value in _examples(document):
        seen += 1
        validator = Draft202012Validator({**schema, "components": document["components"]})
        errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
        wrong += [f"{where}: {'/'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in errors[:3]]
    assert seen > 60
    assert wrong == []


def test_the_served_document_is_the_finished_one(tmp_path: Path) -> None:
    """The app serves what ``openapi_document`` gives (the contract test pins that)."""
    from litestar.testing import TestClient

    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False, "api_key": "k"})
    app = create_app(config, embedder=FakeEmbedder())
    with TestClient(app, base_url="http://127.0.0.1:7370") as client:
        served = client.get("/api/openapi.json")  # no key: the document holds no data
        assert served.status_code == 200, served.text
        assert served.json()["paths"] == openapi_document(app)["paths"]
        # Litestar's own 400s take the shape of ErrorFieldOut too
        auth = {"Authorization": "Bearer k"}
        bad = client.get("/api/v1/tasks?limit=0", headers=auth)
        assert bad.status_code == 400, bad.text
        assert [set(e) for e in bad.json()["extra"]] == [{"key", "message", "source"}]
        assert bad.json()["extra"][0]["source"] == "query"
        # a value not in an enum is quoted short (the old comma-separated kind list, say)
        kinds = client.get(
            "/api/v1/symbols", params={"name": "Cart", "kind": ",".join(["class"] * 800)}, headers=auth
        )
        assert kinds.status_code == 400, kinds.text
        assert len(kinds.json()["extra"][0]["message"]) < 120, kinds.json()["extra"]
