"""Per-language fixtures: names, node types, parent context, scope, symbols, coverage."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_chunker_property import check_invariants

from indexer.chunker import chunk_file, embedding_text, supported_languages
from indexer.chunker._grammar import compile_query, get_language, has_node_kind
from indexer.chunker._languages import spec_for
from indexer.config import ChunkerConfig
from indexer.models import Chunk, ChunkedFile

FIXTURES = Path(__file__).parent / "data" / "chunker"
SMALL = ChunkerConfig(max_chunk_tokens=60, min_chunk_tokens=10)

# (file, node_type, name, scope_path, parent_context prefix) that must be chunks with a small limit.
EXPECTED = [
    ("sample.py", "function", "retry", ("retry",), ""),
    ("sample.py", "class", "HttpParser", ("HttpParser",), ""),
    ("sample.py", "constructor", "__init__", ("HttpParser", "__init__"), "class HttpParser"),
    ("sample.py", "method", "parseHTTPRequest", ("HttpParser", "parseHTTPRequest"), "class HttpParser"),
    ("sample.py", "class", "Options", ("HttpParser", "Options"), "class HttpParser"),
    ("sample.py", "function", "test_parse_request", ("test_parse_request",), ""),
    ("sample.js", "function", "greet", ("greet",), ""),
    ("sample.js", "constructor", "constructor", ("Emitter", "constructor"), "class Emitter extends Base"),
    ("sample.js", "method", "on", ("Emitter", "on"), "class Emitter extends Base"),
    ("sample.js", "function", "fetchUser", ("fetchUser",), ""),
    ("sample.js", "function", "makeCounter", ("makeCounter",), ""),
    ("sample.ts", "interface", "User", ("User",), ""),
    ("sample.ts", "type", "UserId", ("UserId",), ""),
    ("sample.ts", "enum", "Color", ("Color",), ""),
    (
        "sample.ts",
        "method",
        "find",
        ("Repository", "find"),
        "class Repository<T extends User> extends EventEmitter",
    ),
    ("sample.ts", "namespace", "Utils", ("Utils",), ""),
    ("sample.ts", "function", "double", ("double",), ""),
    ("sample.tsx", "function", "Button", ("Button",), ""),
    ("sample.tsx", "function", "Counter", ("Counter",), ""),
    ("sample.tsx", "class", "Panel", ("Panel",), ""),
    ("sample.go", "struct", "Stack", ("Stack",), ""),
    ("sample.go", "interface", "Shape", ("Shape",), ""),
    ("sample.go", "type", "ID", ("ID",), ""),
    ("sample.go", "method", "Push", ("Stack", "Push"), "type Stack[T any] struct"),
    ("sample.go", "function", "Join", ("Join",), ""),
    ("sample.rs", "struct", "Point", ("Point",), ""),
    ("sample.rs", "trait", "Area", ("Area",), ""),
    ("sample.rs", "impl", "Point", ("Point",), ""),
    ("sample.rs", "method", "fmt", ("Point", "fmt"), "impl<T: fmt::Display> fmt::Display for Point<T>"),
    ("sample.rs", "method", "scale", ("Point", "scale"), "impl Point<f64>"),
    ("sample.rs", "macro", "square", ("square",), ""),
    ("sample.rs", "test", "scales_points", ("tests", "scales_points"), "mod tests"),
    ("sample.java", "constructor", "Repository", ("Repository", "Repository"), "public class Repository<T"),
    ("sample.java", "method", "find", ("Repository", "find"), "public class Repository<T extends Entity>"),
    ("sample.java", "class", "Builder", ("Repository", "Builder"), "public class Repository"),
    ("sample.java", "interface", "Store", ("Store",), ""),
    ("sample.java", "enum", "Level", ("Level",), ""),
    ("sample.c", "struct", "point", ("point",), ""),
    ("sample.c", "struct", "node_t", ("node_t",), ""),
    ("sample.c", "enum", "color", ("color",), ""),
    ("sample.c", "macro", "SQUARE", ("SQUARE",), ""),
    ("sample.c", "function", "sum_list", ("sum_list",), ""),
    (
        "sample.cpp",
        "constructor",
        "Container",
        ("geometry", "Container", "Container"),
        "class Container : public Base",
    ),
    ("sample.cpp", "method", "add", ("geometry", "Container", "add"), "class Container : public Base"),
    ("sample.cpp", "function", "area", ("geometry", "area"), "namespace geometry"),
    ("sample.cpp", "method", "reset", ("geometry", "Container", "reset"), "class Container : public Base"),
    ("sample.cpp", "enum", "Mode", ("Mode",), ""),
    (
        "sample.cs",
        "constructor",
        "Repository",
        ("Sample.Chunker", "Repository", "Repository"),
        "public class Repository<T>",
    ),
    ("sample.cs", "method", "Get", ("Sample.Chunker", "Repository", "Get"), "public class Repository<T>"),
    ("sample.cs", "struct", "Point", ("Sample.Chunker", "Point"), "namespace Sample.Chunker"),
    ("sample.cs", "interface", "IRepository", ("Sample.Chunker", "IRepository"), "namespace Sample.Chunker"),
    ("sample.rb", "constructor", "initialize", ("Util", "Stack", "initialize"), "class Stack < Base"),
    ("sample.rb", "method", "push", ("Util", "Stack", "push"), "class Stack < Base"),
    ("sample.rb", "method", "double", ("Util", "double"), "module Util"),
    ("sample.rb", "function", "greet", ("greet",), ""),
    (
        "sample.php",
        "constructor",
        "__construct",
        ("App\\Models", "UserRepository", "__construct"),
        "class UserRepository extends",
    ),
    ("sample.php", "interface", "Store", ("App\\Models", "Store"), "namespace App\\Models;"),
    ("sample.php", "trait", "Greets", ("App\\Models", "Greets"), "namespace App\\Models;"),
    ("sample.php", "function", "helper", ("App\\Models", "helper"), "namespace App\\Models;"),
    ("sample.kt", "constructor", "init", ("Repository", "init"), "class Repository<T : Entity>"),
    ("sample.kt", "method", "find", ("Repository", "find"), "class Repository<T : Entity>"),
    ("sample.kt", "class", "Companion", ("Repository", "Companion"), "class Repository"),
    ("sample.kt", "interface", "Store", ("Store",), ""),
    ("sample.kt", "enum", "Level", ("Level",), ""),
    ("sample.kt", "type", "Names", ("Names",), ""),
    ("sample.kt", "function", "clamp", ("clamp",), ""),
    (
        "sample.scala",
        "constructor",
        "this",
        ("Repository", "this"),
        "class Repository[T <: Entity](name: String)",
    ),
    ("sample.scala", "method", "find", ("Repository", "find"), "class Repository"),
    ("sample.scala", "trait", "Store", ("Store",), ""),
    ("sample.scala", "type", "Names", ("Names",), ""),
    ("sample.swift", "constructor", "init", ("Repository", "init"), "public class Repository<T: Entity>"),
    ("sample.swift", "interface", "Store", ("Store",), ""),
    ("sample.swift", "struct", "Point", ("Point",), ""),
    ("sample.swift", "impl", "Point", ("Point",), ""),
    ("sample.swift", "function", "clamp", ("clamp",), ""),
    ("sample.sh", "function", "log", ("log",), ""),
    ("sample.sh", "function", "build_all", ("build_all",), ""),
    ("sample.md", "section", "Install", ("Lode", "Install"), "# Lode"),
    ("sample.md", "section", "From source", ("Lode", "Install", "From source"), "## Install"),
    ("sample.md", "section", "Appendix", ("Appendix",), ""),
]

# (file, unit name, names it must define, names it must reference) with the small limit.
SYMBOLS = [
    ("sample.py", "__init__", {"__init__", "limit", "headers"}, {"int", "dict"}),
    (
        "sample.py",
        "retry",
        {"retry", "decorator", "wrapper", "func", "args"},
        {"functools", "wraps", "ValueError"},
    ),
    ("sample.js", "on", {"on", "event", "handler", "list"}, {"listeners", "push"}),
    ("sample.go", "Join", {"Join", "parts", "upper", "out", "p"}, {"strings", "ToUpper", "append"}),
    ("sample.rs", "scale", {"scale", "factor", "mul", "v"}, {"Point"}),
    ("sample.java", "find", {"find", "id", "item"}, {"items", "stream", "filter", "getId"}),
    ("sample.c", "main", {"main", "argc", "argv", "head"}, {"malloc", "node_t", "print_point"}),
    ("sample.cpp", "area", {"area", "w", "h", "mul"}, {"mul"} - {"mul"}),
    ("sample.cs", "Get", {"Get", "id", "match"}, {"Func", "items", "Find"}),
    ("sample.rb", "initialize", {"initialize", "limit", "@items"}, set()),
    ("sample.php", "helper", {"helper", "values"}, {"count"}),
    ("sample.kt", "clamp", {"clamp", "value", "low", "pick"}, {"max", "Int"}),
    ("sample.scala", "clamp", {"clamp", "value", "low", "pick"}, {"math", "max"}),
    ("sample.swift", "clamp", {"clamp", "value", "low", "pick"}, {"max", "Int"}),
    ("sample.sh", "log", {"log", "level"}, {"echo"}),
    ("sample.ts", "find", {"find", "id"}, {"items", "get"}),
    ("sample.ts", "clamp", {"clamp", "value", "low", "high"}, {"Math", "min", "max"}),
    ("sample.tsx", "Counter", {"Counter", "count", "setCount", "increment"}, {"useState", "Button"}),
    ("sample.tsx", "Button", {"Button", "label", "onClick"}, {"ButtonProps"}),
    ("sample.cpp", "main", {"main", "c"}, {"geometry", "Container", "area"}),
    ("sample.rb", "push", {"push", "item"}, {"ArgumentError", "@items", "@limit"}),
]


def _chunk(name: str, config: ChunkerConfig = SMALL) -> ChunkedFile:
    return chunk_file(f"src/{name}", (FIXTURES / name).read_bytes(), config)


def _find(result: ChunkedFile, node_type: str, name: str) -> Chunk:
    matches = [c for c in result.chunks if c.node_type == node_type and c.node_name == name]
    assert matches, f"no {node_type} {name!r} in {[(c.node_type, c.node_name) for c in result.chunks]}"
    return matches[0]


def test_every_supported_language_has_a_fixture() -> None:
    extensions = {p.suffix for p in FIXTURES.iterdir()}
    assert len(extensions) == len(supported_languages()) == 17


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.iterdir()))
@pytest.mark.parametrize("config", [ChunkerConfig(), SMALL], ids=["default", "small"])
def test_fixture_is_fully_covered(name: str, config: ChunkerConfig) -> None:
    data = (FIXTURES / name).read_bytes()
    result = chunk_file(f"src/{name}", data, config)
    assert result.skipped_reason is None
    assert not result.used_fallback
    assert result.warnings == ()
    assert result.language in supported_languages()
    check_invariants(data, result)


@pytest.mark.parametrize(("name", "node_type", "unit", "scope", "parent"), EXPECTED)
def test_units(name: str, node_type: str, unit: str, scope: tuple[str, ...], parent: str) -> None:
    chunk = _find(_chunk(name), node_type, unit)
    assert chunk.scope_path == scope
    assert chunk.parent_context.startswith(parent)
    assert bool(parent) == bool(chunk.parent_context)


@pytest.mark.parametrize(("name", "unit", "defines", "references"), SYMBOLS)
def test_symbols(name: str, unit: str, defines: set[str], references: set[str]) -> None:
    chunks = [c for c in _chunk(name).chunks if c.node_name == unit]
    assert chunks
    assert chunks[0].definitions[0] == unit
    assert defines <= {d for c in chunks for d in c.definitions}
    assert references <= {r for c in chunks for r in c.references}
    for chunk in chunks:
        assert not set(chunk.references) & set(chunk.definitions)


def test_decorators_and_doc_comments_stay_with_their_unit() -> None:
    assert _find(_chunk("sample.py"), "method", "parseHTTPRequest").content.lstrip().startswith("@retry")
    assert _find(_chunk("sample.rs"), "struct", "Point").content.startswith("/// A point")
    assert "#[derive(Debug, Clone)]" in _find(_chunk("sample.rs"), "struct", "Point").content
    assert _find(_chunk("sample.js"), "function", "greet").content.startswith("/**")
    assert _find(_chunk("sample.go"), "struct", "Stack").content.startswith("// Stack is")
    assert "@Override" in _find(_chunk("sample.java"), "method", "find").content
    assert _find(_chunk("sample.c"), "function", "sum_list").content.startswith("/**")


def test_split_class_keeps_skeleton_first_with_member_names() -> None:
    result = _chunk("sample.py")
    parts = [c for c in result.chunks if c.node_name == "HttpParser"]
    skeleton = parts[0]
    assert skeleton.node_type == "class"
    assert skeleton.content.startswith("@dataclass\nclass HttpParser:")
    assert {"HttpParser", "__init__", "parseHTTPRequest", "Options", "buffer"} <= set(skeleton.definitions)
    method = _find(result, "constructor", "__init__")
    assert skeleton.chunk_index < method.chunk_index


def test_long_function_parts_share_metadata() -> None:
    parts = [c for c in _chunk("sample.go").chunks if c.node_name == "Push"]
    assert len(parts) >= 2
    assert {(c.node_type, c.scope_path, c.parent_context) for c in parts} == {
        ("method", ("Stack", "Push"), "type Stack[T any] struct")
    }
    assert [c.end_line + 1 for c in parts[:-1]] == [c.start_line for c in parts[1:]]
    # every piece knows its unit: where it starts and ends, and its signature
    assert {(c.unit_start_line, c.unit_end_line, c.signature) for c in parts} == {
        (parts[0].start_line, parts[-1].end_line, "func (s *Stack[T]) Push(item T) error")
    }
    later = parts[1]
    assert not later.content.lstrip().startswith("func")
    caption = embedding_text("src/sample.go", later).split("\n")
    assert caption[1] == "func (s *Stack[T]) Push(item T) error"  # the signature before a mid-body piece
    assert embedding_text("src/sample.go", parts[0]).split("\n")[1] == parts[0].content.split("\n")[0]


def test_small_classes_are_split_into_their_members() -> None:
    """Whatever its size, a class keeps its own chunk (the skeleton: header and fields)
    and each method is a unit of its own."""
    result = _chunk("sample.kt", ChunkerConfig())
    repository = _find(result, "class", "Repository")
    assert "fun find" not in repository.content
    assert "private val items" in repository.content
    assert {"find", "Cursor", "items"} <= set(repository.definitions)
    assert _find(result, "method", "find").scope_path == ("Repository", "find")


def test_tiny_top_level_pieces_merge() -> None:
    block = _chunk("sample.py").chunks[0]
    assert block.node_type == "block"
    assert block.scope_path == ()
    assert "MAX_RETRIES" in block.definitions
    assert block.content.startswith("#!/usr/bin/env python3")


def test_test_detection_by_attribute_and_path() -> None:
    assert _find(_chunk("sample.rs"), "test", "scales_points")
    go = chunk_file("pkg/stack_test.go", (FIXTURES / "sample.go").read_bytes(), SMALL)
    assert _find(go, "test", "TestPush")
    assert _find(_chunk("sample.go"), "function", "TestPush")
    python = chunk_file("tests/test_parser.py", (FIXTURES / "sample.py").read_bytes(), SMALL)
    assert _find(python, "test", "test_parse_request")


@pytest.mark.parametrize("language", [lang for lang in supported_languages() if lang != "markdown"])
def test_spec_matches_grammar(language: str) -> None:
    spec = spec_for(language)
    grammar = get_language(language)
    assert spec is not None
    assert grammar is not None
    kinds = {*spec.units, *spec.special, *spec.wrappers, *spec.containers, *spec.transparent}
    assert {k for k in kinds if not has_node_kind(grammar, k)} == set()
    assert compile_query(language, spec.def_patterns) is not None
