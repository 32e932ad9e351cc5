"""Every unit in every language (issue 27): small classes, nested types, namespaces and
modules, macro-defined items. Each fixture of ``tests/data/units`` is chunked so that every
function, method, constructor, type and namespace is a unit of its own whatever its size;
the outline lists it, and a ``node_types: ["method"]`` search with a
``parent_context_pattern`` finds each method."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_chunker_property import check_invariants

from indexer.api import Lode
from indexer.chunker import CHUNKER_VERSION, chunk_file
from indexer.config import ChunkerConfig, load_config
from indexer.embed import FakeEmbedder
from indexer.models import Chunk
from indexer.search import SearchOptions
from indexer.symbols import SymbolQuery

UNITS = Path(__file__).parent / "data" / "units"
CONFIGS = [ChunkerConfig(), ChunkerConfig(max_chunk_tokens=40, min_chunk_tokens=8)]

# (file, node_type, name, scope_path, parent_context) of every unit the fixtures hold.
EXPECTED: list[tuple[str, str, str, tuple[str, ...], str]] = [
    ("ledger.py", "class", "Account", ("Account",), ""),
    ("ledger.py", "method", "record", ("Account", "record"), "class Account"),
    ("ledger.py", "method", "balance", ("Account", "balance"), "class Account"),
    ("ledger.py", "class", "Auditor", ("Account", "Auditor"), "class Account"),
    ("ledger.py", "method", "audit", ("Account", "Auditor", "audit"), "class Auditor"),
    ("ledger.py", "function", "open_account", ("open_account",), ""),
    ("router.js", "class", "Router", ("Router",), ""),
    ("router.js", "constructor", "constructor", ("Router", "constructor"), "class Router"),
    ("router.js", "method", "addRoute", ("Router", "addRoute"), "class Router"),
    ("router.js", "method", "dispatch", ("Router", "dispatch"), "class Router"),
    ("router.js", "function", "makeRouter", ("makeRouter",), ""),
    ("runner.js", "function", "Runner", ("Runner",), ""),
    ("runner.js", "method", "onError", ("Runner", "onError"), "function Runner(suite, options)"),
    ("runner.js", "method", "run", ("Runner", "run"), "function Runner(suite, options)"),
    ("runner.js", "method", "abort", ("Runner", "abort"), "function Runner(suite, options)"),
    ("runner.js", "method", "create", ("Runner", "create"), "function Runner(suite, options)"),
    ("runner.js", "function", "lookupFiles", ("lookupFiles",), ""),
    ("runner.js", "function", "escape", ("escape",), ""),
    ("runner.js", "function", "Suite", ("Suite",), ""),
    ("runner.js", "method", "addTest", ("Suite", "addTest"), "function Suite(title)"),
    ("shapes.ts", "namespace", "Geometry", ("Geometry",), ""),
    ("shapes.ts", "interface", "Shape", ("Geometry", "Shape"), "namespace Geometry"),
    ("shapes.ts", "method", "area", ("Geometry", "Shape", "area"), "interface Shape"),
    ("shapes.ts", "class", "Circle", ("Geometry", "Circle"), "namespace Geometry"),
    ("shapes.ts", "constructor", "constructor", ("Geometry", "Circle", "constructor"),
     "class Circle implements Shape"),
    ("shapes.ts", "method", "area", ("Geometry", "Circle", "area"), "class Circle implements Shape"),
    ("shapes.ts", "class", "Canvas", ("Canvas",), ""),
    ("shapes.ts", "method", "add", ("Canvas", "add"), "class Canvas"),
    ("shapes.ts", "method", "total", ("Canvas", "total"), "class Canvas"),
    ("legacy.ts", "function", "Counter", ("Counter",), ""),
    ("legacy.ts", "method", "reset", ("Counter", "reset"), "function Counter(this: any, start: number)"),
    ("legacy.ts", "method", "increment", ("Counter", "increment"), "function Counter(this: any, start: number)"),
    ("legacy.ts", "method", "fromString", ("Counter", "fromString"), "function Counter(this: any, start: number)"),
    ("legacy.ts", "function", "formatCount", ("formatCount",), ""),
    ("panel.tsx", "interface", "PanelProps", ("PanelProps",), ""),
    ("panel.tsx", "class", "Panel", ("Panel",), ""),
    ("panel.tsx", "method", "toggle", ("Panel", "toggle"), "class Panel extends React.Component<PanelProps>"),
    ("panel.tsx", "method", "render", ("Panel", "render"), "class Panel extends React.Component<PanelProps>"),
    ("panel.tsx", "function", "Badge", ("Badge",), ""),
    ("stack.go", "struct", "Stack", ("Stack",), ""),
    ("stack.go", "interface", "Sized", ("Sized",), ""),
    ("stack.go", "method", "Len", ("Sized", "Len"), "type Sized interface"),
    ("stack.go", "method", "Push", ("Stack", "Push"), "type Stack struct"),
    ("stack.go", "method", "Len", ("Stack", "Len"), "type Stack struct"),
    ("stack.go", "function", "NewStack", ("NewStack",), ""),
    ("shapes.rs", "macro", "square", ("square",), ""),
    ("shapes.rs", "macro", "Triangle", ("Triangle",), ""),
    ("shapes.rs", "trait", "Shape", ("Shape",), ""),
    ("shapes.rs", "method", "area", ("Shape", "area"), "pub trait Shape"),
    ("shapes.rs", "method", "name", ("Shape", "name"), "pub trait Shape"),
    ("shapes.rs", "struct", "Circle", ("Circle",), ""),
    ("shapes.rs", "impl", "Circle", ("Circle",), ""),
    ("shapes.rs", "method", "area", ("Circle", "area"), "impl Shape for Circle"),
    ("shapes.rs", "method", "new", ("Circle", "new"), "impl Circle"),
    ("shapes.rs", "module", "units", ("units",), ""),
    ("shapes.rs", "function", "to_cm", ("units", "to_cm"), "pub mod units"),
    ("Ledger.java", "class", "Ledger", ("Ledger",), ""),
    ("Ledger.java", "constructor", "Ledger", ("Ledger", "Ledger"), "public class Ledger"),
    ("Ledger.java", "method", "record", ("Ledger", "record"), "public class Ledger"),
    ("Ledger.java", "method", "balance", ("Ledger", "balance"), "public class Ledger"),
    ("Ledger.java", "interface", "Auditor", ("Ledger", "Auditor"), "public class Ledger"),
    ("Ledger.java", "method", "audit", ("Ledger", "Auditor", "audit"), "interface Auditor"),
    ("Ledger.java", "class", "Entry", ("Ledger", "Entry"), "public class Ledger"),
    ("Ledger.java", "method", "cents", ("Ledger", "Entry", "cents"), "static class Entry"),
    ("queue.c", "macro", "QUEUE_FULL", ("QUEUE_FULL",), ""),
    ("queue.c", "struct", "queue", ("queue",), ""),
    ("queue.c", "function", "queue_push", ("queue_push",), ""),
    ("matrix.cpp", "namespace", "linalg", ("linalg",), ""),
    ("matrix.cpp", "class", "Matrix", ("linalg", "Matrix"), "namespace linalg"),
    ("matrix.cpp", "constructor", "Matrix", ("linalg", "Matrix", "Matrix"), "class Matrix"),
    ("matrix.cpp", "method", "at", ("linalg", "Matrix", "at"), "class Matrix"),
    ("matrix.cpp", "struct", "Shape", ("linalg", "Matrix", "Shape"), "class Matrix"),
    ("matrix.cpp", "method", "size", ("linalg", "Matrix", "Shape", "size"), "struct Shape"),
    ("matrix.cpp", "function", "trace", ("linalg", "trace"), "namespace linalg"),
    ("Orders.cs", "namespace", "Shop.Orders", ("Shop.Orders",), ""),
    ("Orders.cs", "class", "Order", ("Shop.Orders", "Order"), "namespace Shop.Orders"),
    ("Orders.cs", "method", "Add", ("Shop.Orders", "Order", "Add"), "public class Order"),
    ("Orders.cs", "class", "Line", ("Shop.Orders", "Order", "Line"), "public class Order"),
    ("Orders.cs", "method", "Total", ("Shop.Orders", "Order", "Line", "Total"), "public class Line"),
    ("Orders.cs", "interface", "IOrderStore", ("Shop.Orders", "IOrderStore"), "namespace Shop.Orders"),
    ("Orders.cs", "method", "Find", ("Shop.Orders", "IOrderStore", "Find"), "public interface IOrderStore"),
    ("Invoices.cs", "namespace", "Shop.Billing", ("Shop.Billing",), ""),
    ("Invoices.cs", "class", "Invoice", ("Shop.Billing", "Invoice"), "namespace Shop.Billing;"),
    ("Invoices.cs", "constructor", "Invoice", ("Shop.Billing", "Invoice", "Invoice"), "public class Invoice"),
    ("Invoices.cs", "method", "Tax", ("Shop.Billing", "Invoice", "Tax"), "public class Invoice"),
    ("stack.rb", "module", "Collections", ("Collections",), ""),
    ("stack.rb", "class", "BoundedStack", ("Collections", "BoundedStack"), "module Collections"),
    ("stack.rb", "constructor", "initialize", ("Collections", "BoundedStack", "initialize"),
     "class BoundedStack"),
    ("stack.rb", "method", "push_item", ("Collections", "BoundedStack", "push_item"), "class BoundedStack"),
    ("stack.rb", "class", "Overflow", ("Collections", "BoundedStack", "Overflow"), "class BoundedStack"),
    ("stack.rb", "method", "message", ("Collections", "BoundedStack", "Overflow", "message"),
     "class Overflow < StandardError"),
    ("Cart.php", "namespace", "Shop", ("Shop",), ""),
    ("Cart.php", "trait", "Greets", ("Shop", "Greets"), "namespace Shop;"),
    ("Cart.php", "method", "greet", ("Shop", "Greets", "greet"), "trait Greets"),
    ("Cart.php", "class", "Cart", ("Shop", "Cart"), "namespace Shop;"),
    ("Cart.php", "method", "add", ("Shop", "Cart", "add"), "class Cart"),
    ("Cart.php", "method", "count", ("Shop", "Cart", "count"), "class Cart"),
    ("Queue.kt", "class", "Queue", ("Queue",), ""),
    ("Queue.kt", "method", "enqueue", ("Queue", "enqueue"), "class Queue<T>"),
    ("Queue.kt", "method", "size", ("Queue", "size"), "class Queue<T>"),
    ("Queue.kt", "class", "Node", ("Queue", "Node"), "class Queue<T>"),
    ("Queue.kt", "method", "double", ("Queue", "Node", "double"), "class Node(val value: Int)"),
    ("Queue.kt", "class", "Companion", ("Queue", "Companion"), "class Queue<T>"),
    ("Queue.kt", "method", "empty", ("Queue", "Companion", "empty"), "companion object"),
    ("Ledger.scala", "class", "Ledger", ("Ledger",), ""),
    ("Ledger.scala", "method", "record", ("Ledger", "record"), "class Ledger(var total: Long)"),
    ("Ledger.scala", "method", "balance", ("Ledger", "balance"), "class Ledger(var total: Long)"),
    ("Ledger.scala", "method", "empty", ("Ledger", "empty"), "object Ledger"),
    ("Ledger.scala", "class", "Entry", ("Ledger", "Entry"), "object Ledger"),
    ("Ledger.scala", "method", "cents", ("Ledger", "Entry", "cents"), "class Entry(val amount: Long)"),
    ("Point.swift", "struct", "Point", ("Point",), ""),
    ("Point.swift", "method", "length", ("Point", "length"), "struct Point"),
    ("Point.swift", "impl", "Point", ("Point",), ""),
    ("Point.swift", "method", "scaled", ("Point", "scaled"), "extension Point"),
    ("Point.swift", "struct", "Polar", ("Point", "Polar"), "extension Point"),
    ("Point.swift", "method", "toPoint", ("Point", "Polar", "toPoint"), "struct Polar"),
    ("deploy.sh", "function", "log", ("log",), ""),
    ("deploy.sh", "function", "deploy_app", ("deploy_app",), ""),
]  # fmt: skip
METHODS = [e for e in EXPECTED if e[1] == "method"]
#: Items a macro defines that stay merged with their neighbours (one-line ``#define``s):
#: still definitions of their chunk, each with its own line in the symbol index.
MERGED_DEFINES = [("queue.c", "QUEUE_MAX"), ("matrix.cpp", "MATRIX_DIM")]


def _chunks(name: str, config: ChunkerConfig | None = None) -> list[Chunk]:
    result = chunk_file(f"src/{name}", (UNITS / name).read_bytes(), config or ChunkerConfig())
    assert result.warnings == ()
    return list(result.chunks)


def _unit(chunks: list[Chunk], node_type: str, name: str, scope: tuple[str, ...]) -> Chunk:
    found = [c for c in chunks if (c.node_type, c.node_name, c.scope_path) == (node_type, name, scope)]
    assert found, f"no {node_type} {'.'.join(scope)}: {[(c.node_type, c.scope_path) for c in chunks]}"
    return found[0]


def test_every_language_has_a_units_fixture() -> None:
    from test_chunker_property import EXTENSIONS

    suffixes = {p.suffix.lstrip(".") for p in UNITS.iterdir()}
    assert suffixes == set(EXTENSIONS.values()) - {"md"}


@pytest.mark.parametrize("config", CONFIGS, ids=["default", "small"])
@pytest.mark.parametrize(("name", "node_type", "unit", "scope", "parent"), EXPECTED)
def test_every_unit_is_a_chunk_of_its_own(
    name: str, node_type: str, unit: str, scope: tuple[str, ...], parent: str, config: ChunkerConfig
) -> None:
    chunk = _unit(_chunks(name, config), node_type, unit, scope)
    assert chunk.parent_context == parent
    assert chunk.node_name == unit
    assert chunk.signature
    assert chunk.unit_start_line <= chunk.start_line <= chunk.end_line


@pytest.mark.parametrize("name", sorted(p.name for p in UNITS.iterdir()))
@pytest.mark.parametrize("config", CONFIGS, ids=["default", "small"])
def test_units_fixtures_are_fully_covered(name: str, config: ChunkerConfig) -> None:
    data = (UNITS / name).read_bytes()
    check_invariants(data, chunk_file(f"src/{name}", data, config))


@pytest.mark.parametrize("name", sorted({e[0] for e in EXPECTED}))
def test_a_container_never_swallows_its_members(name: str) -> None:
    """A container's own chunks (its skeleton) hold none of its members' lines."""
    chunks = _chunks(name)
    for node_type, unit, scope, _ in [e[1:] for e in EXPECTED if e[0] == name]:
        chunk = _unit(chunks, node_type, unit, scope)
        members = [
            c for c in chunks if c.scope_path[: len(scope)] == scope and len(c.scope_path) > len(scope)
        ]
        own = [c for c in chunks if c.scope_path == scope and c.node_type == node_type]
        for piece in own:
            assert not [m for m in members if piece.start_line <= m.start_line <= piece.end_line], chunk


@pytest.mark.parametrize(("name", "define"), MERGED_DEFINES)
def test_a_define_names_what_it_defines(name: str, define: str) -> None:
    result = chunk_file(f"src/{name}", (UNITS / name).read_bytes())
    assert any(define in c.definitions for c in result.chunks)
    sites = [s for s in result.symbols if s.role == "definition" and s.name == define]
    assert [(s.kind, s.start_line) for s in sites] == [("constant", 3)]


def test_a_rust_macro_invocation_is_named_by_the_item_it_defines() -> None:
    source = b"define_rejection! {\n    #[status = BAD_REQUEST]\n    pub struct MissingJson;\n}\n"
    chunk = chunk_file("src/rejection.rs", source).chunks[0]
    assert (chunk.node_type, chunk.node_name) == ("struct", "MissingJson")
    statics = chunk_file("src/cache.rs", b"lazy_static! { static ref CACHE: Map = Map::new(); }\n")
    assert (statics.chunks[0].node_type, statics.chunks[0].node_name) == ("constant", "CACHE")


@pytest.mark.parametrize("config", CONFIGS, ids=["default", "small"])
def test_functions_assigned_are_units_only_where_es5_idioms_are_read(config: ChunkerConfig) -> None:
    """``X.prototype.m = …``, ``X.s = …``, ``exports.f = …`` at module level or in an IIFE,
    and ``this.m = …`` in a constructor are units; assignments deeper in a body are code."""
    chunks = _chunks("runner.js", config)
    named = {c.node_name for c in chunks if c.node_name}
    assert {"onexit", "ext", "Runner.run"}.isdisjoint(named)  # closures inside ``run``, ``lookupFiles``
    run = [c for c in chunks if c.node_name == "run"]
    assert "process.onexit = function" in "".join(c.content for c in run)
    assert run[0].signature == "Runner.prototype.run = function run(fn)"
    assert _unit(chunks, "method", "create", ("Runner", "create")).signature == "Runner.create = (suite) =>"
    runner = [c for c in chunks if c.scope_path == ("Runner",)]  # the constructor keeps its own text
    assert "this.options = options || {};" in "".join(c.content for c in runner)
    assert not [c for c in runner if "this.failures.push" in c.content]  # not its member's


def test_a_method_assigned_to_a_type_declared_elsewhere_names_its_path() -> None:
    source = b"Runner.prototype.stop = function () {\n  this.stopped = true;\n};\n$.fn.disable = () => 1;\n"
    chunks = chunk_file("lib/plugins.js", source).chunks
    assert [(c.node_type, c.node_name, c.parent_context, c.scope_path) for c in chunks] == [
        ("method", "stop", "Runner", ("Runner", "stop")),
        ("method", "disable", "$.fn", ("$", "fn", "disable")),
    ]


def test_a_typescript_function_assigned_is_a_unit_too() -> None:
    chunk = _unit(_chunks("legacy.ts"), "method", "increment", ("Counter", "increment"))
    assert chunk.signature == "Counter.prototype.increment = function increment(step: number): number"
    assert "increment" in chunk.definitions


# ---- through the index: search filters and the outline --------------------------------------
@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lode]:
    """The units fixtures indexed once (fake embedder) as project ``units``."""
    tmp = tmp_path_factory.mktemp("units")
    lode = Lode(load_config(env={}, overrides={"db": tmp / "db"}), embedder=FakeEmbedder())
    lode.index(UNITS, name="units")
    yield lode
    lode.close()


@pytest.mark.parametrize(("name", "node_type", "unit", "scope", "parent"), METHODS)
def test_a_method_search_with_its_parent_finds_each_method(
    indexed: Lode, name: str, node_type: str, unit: str, scope: tuple[str, ...], parent: str
) -> None:
    options = SearchOptions(
        query=unit,
        granularity="chunk",
        node_types=("method",),
        parent_context_pattern=f"{parent}*",
        limit=50,
    )
    hits = [h for g in indexed.search(options).groups for h in g.chunks]
    assert hits
    assert all(h.node_type == "method" and h.parent_context == parent for h in hits)
    assert [h for h in hits if h.file_path == name and h.node_name == unit and h.scope_path == scope]


@pytest.mark.parametrize(("name", "node_type", "unit", "scope", "parent"), EXPECTED)
def test_the_outline_lists_every_unit(
    indexed: Lode, name: str, node_type: str, unit: str, scope: tuple[str, ...], parent: str
) -> None:
    chunk = _unit(_chunks(name), node_type, unit, scope)
    found = indexed.outline("units").find(unit, node_type, name, limit=50)
    nodes = [n for n in found.nodes if n.start_line <= chunk.start_line <= n.end_line]
    assert nodes, f"{name}: {[(n.id, n.kind) for n in found.nodes]}"
    container = f"{name}#{'.'.join(scope[:-1])}" if len(scope) > 1 else name
    assert nodes[0].parent.split("~")[0] == container  # under its class, namespace… or its file


def test_files_an_older_chunker_cut_get_their_assigned_functions(tmp_path: Path) -> None:
    """Chunker 3 makes functions assigned (ES5 idioms) units: an index whose files chunker 2
    cut chunks them again on the next run, whatever their bytes, and only once."""
    from indexer.store._schema import DOCUMENTS

    root = tmp_path / "repo"
    root.mkdir()
    (root / "runner.js").write_bytes((UNITS / "runner.js").read_bytes())
    (root / "router.js").write_bytes((UNITS / "router.js").read_bytes())
    lode = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    try:
        lode.index(root, name="es5")
        store = lode.store
        project = store.projects.get("es5")
        store.db.table(DOCUMENTS).update(values={"chunker_version": CHUNKER_VERSION - 1})
        versions = {s.chunker_version for s in store.documents.states(project.id).values()}
        assert versions == {CHUNKER_VERSION - 1}
        report = lode.index(root, name="es5")
        assert (report.files_indexed, report.files_unchanged) == (2, 0)
        versions = {s.chunker_version for s in store.documents.states(project.id).values()}
        assert versions == {CHUNKER_VERSION}
        found = lode.symbols(SymbolQuery("addTest")).symbols
        assert [(s.symbol.qualified_name, s.symbol.kind) for s in found] == [("Suite.addTest", "method")]
        assert lode.index(root, name="es5").files_indexed == 0
        assert store.check().ok
    finally:
        lode.close()


def test_the_outline_nests_files_classes_methods(indexed: Lode) -> None:
    listing = indexed.outline("units").ls("stack.rb", depth=4)
    tree = [
        (c.title, [(g.title, [h.title for h in g.children]) for g in c.children]) for c in listing.children
    ]
    assert tree == [
        ("Collections", [("BoundedStack", ["initialize", "push_item", "Overflow"])]),
    ]
    found = indexed.outline("units").find("*_item")  # issue 27: it used to find nothing
    assert [n.id for n in found.nodes] == ["stack.rb#Collections.BoundedStack.push_item"]
    rust = indexed.outline("units").ls("shapes.rs", depth=2)
    assert [(c.kind, c.title, [g.title for g in c.children]) for c in rust.children] == [
        ("macro", "square", []),
        ("macro", "Triangle", []),
        ("trait", "Shape", ["area", "name"]),
        ("struct", "Circle", []),
        ("impl", "Circle", ["area"]),
        ("impl", "Circle", ["new"]),
        ("module", "units", ["to_cm"]),
    ]
    es5 = indexed.outline("units").ls("runner.js", depth=2)
    assert [(c.kind, c.title, [g.title for g in c.children]) for c in es5.children] == [
        ("function", "Runner", ["onError", "run", "abort", "create"]),
        ("function", "lookupFiles", []),
        ("function", "escape", []),
        ("function", "Suite", ["addTest"]),
    ]
    csharp = indexed.outline("units").ls("Invoices.cs", depth=3)
    assert [(c.title, [g.title for g in c.children]) for c in csharp.children] == [
        ("Shop.Billing", ["Invoice"]),
    ]
