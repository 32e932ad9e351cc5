"""The symbol index (issue 27): a row per definition and per reference site, written with
the file's chunks; go to definition, find references grouped by caller, ambiguous names
ranked by proximity; the HTTP routes and the CLI commands."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from live import serve_in_thread, wait_task
from test_units import EXPECTED, UNITS

from indexer.api import Lode
from indexer.chunker import chunk_file
from indexer.cli import cli
from indexer.config import load_config
from indexer.embed import FakeEmbedder
from indexer.errors import NotFoundError, ValidationError
from indexer.models import Symbol, SymbolSite
from indexer.store import Store
from indexer.symbols import ReferenceQuery, SymbolQuery

# (file, name, line, enclosing unit's scope, its kind): one reference site per language.
REFERENCES = [
    ("ledger.py", "balance", 23, ("Account", "Auditor", "audit"), "method"),
    ("ledger.py", "Account", 27, ("open_account",), "function"),
    ("router.js", "push", 10, ("Router", "addRoute"), "method"),
    ("router.js", "Router", 20, ("makeRouter",), "function"),
    ("runner.js", "abort", 22, ("Runner", "run"), "method"),
    ("runner.js", "Runner", 32, ("Runner", "create"), "method"),
    ("shapes.ts", "area", 25, ("Canvas", "total"), "method"),
    ("shapes.ts", "Geometry", 18, ("Canvas",), "class"),
    ("panel.tsx", "toggle", 13, ("Panel", "render"), "method"),
    ("panel.tsx", "PanelProps", 17, ("Badge",), "function"),
    ("stack.go", "append", 15, ("Stack", "Push"), "method"),
    ("stack.go", "Stack", 25, ("NewStack",), "function"),
    ("shapes.rs", "square", 24, ("Circle", "area"), "method"),
    ("shapes.rs", "Circle", 30, ("Circle", "new"), "method"),
    ("Ledger.java", "total", 12, ("Ledger", "record"), "method"),
    ("Ledger.java", "amount", 27, ("Ledger", "Entry", "cents"), "method"),
    ("queue.c", "QUEUE_FULL", 12, ("queue_push",), "function"),
    ("queue.c", "QUEUE_MAX", 7, ("queue",), "struct"),
    ("matrix.cpp", "cells_", 12, ("linalg", "Matrix", "at"), "method"),
    ("matrix.cpp", "at", 26, ("linalg", "trace"), "function"),
    ("Orders.cs", "Console", 11, ("Shop.Orders", "Order", "Add"), "method"),
    ("Orders.cs", "Quantity", 18, ("Shop.Orders", "Order", "Line", "Total"), "method"),
    ("Invoices.cs", "amount", 12, ("Shop.Billing", "Invoice", "Tax"), "method"),
    ("stack.rb", "@items", 13, ("Collections", "BoundedStack", "push_item"), "method"),
    ("stack.rb", "StandardError", 16, ("Collections", "BoundedStack", "Overflow"), "class"),
    ("Cart.php", "items", 21, ("Shop", "Cart", "add"), "method"),
    ("Queue.kt", "items", 7, ("Queue", "enqueue"), "method"),
    ("Queue.kt", "Queue", 17, ("Queue", "Companion", "empty"), "method"),
    ("Ledger.scala", "total", 5, ("Ledger", "record"), "method"),
    ("Ledger.scala", "Ledger", 12, ("Ledger", "empty"), "method"),
    ("Point.swift", "Point", 14, ("Point", "scaled"), "method"),
    ("Point.swift", "squareRoot", 8, ("Point", "length"), "method"),
    ("deploy.sh", "log", 9, ("deploy_app",), "function"),
    ("deploy.sh", "rsync", 10, ("deploy_app",), "function"),
]  # fmt: skip


def _sites(name: str) -> list[SymbolSite]:
    return list(chunk_file(f"src/{name}", (UNITS / name).read_bytes()).symbols)


# ---- the chunker's sites ------------------------------------------------------------------
@pytest.mark.parametrize(("name", "node_type", "unit", "scope", "parent"), EXPECTED)
def test_every_unit_is_a_definition(
    name: str, node_type: str, unit: str, scope: tuple[str, ...], parent: str
) -> None:
    result = chunk_file(f"src/{name}", (UNITS / name).read_bytes())
    found = [
        s for s in result.symbols if s.role == "definition" and s.scope_path == scope and s.kind == node_type
    ]
    assert found, [(s.kind, s.scope_path) for s in result.symbols if s.role == "definition"]
    site = found[0]
    assert site.name == unit
    assert site.container == ".".join(scope[:-1])
    chunk = result.chunks[site.chunk_index]
    assert chunk.start_line <= site.start_line <= chunk.end_line  # its chunk holds its first line
    assert site.signature


@pytest.mark.parametrize(("name", "used", "line", "scope", "kind"), REFERENCES)
def test_reference_sites_know_their_enclosing_unit(
    name: str, used: str, line: int, scope: tuple[str, ...], kind: str
) -> None:
    sites = [s for s in _sites(name) if s.role == "reference" and s.name == used and s.start_line == line]
    assert sites, sorted({(s.name, s.start_line) for s in _sites(name) if s.role == "reference"})
    assert (sites[0].scope_path, sites[0].container_kind) == (scope, kind)
    assert sites[0].container == ".".join(scope)
    assert used in sites[0].text


def test_parameters_locals_and_declared_names_are_not_references() -> None:
    sites = _sites("ledger.py")
    references = {(s.name, s.start_line) for s in sites if s.role == "reference"}
    assert ("amount", 16) not in references  # a parameter used in its own function
    assert ("record", 15) not in references  # the name a definition declares
    assert ("account", 23) not in references  # a parameter of audit
    assert len(references) == len([s for s in sites if s.role == "reference"])  # once per line


# ---- the index ----------------------------------------------------------------------------
@pytest.fixture
def lode(tmp_path: Path) -> Iterator[Lode]:
    api = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    yield api
    api.close()


def _copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(UNITS, tmp_path / "units"))


def _rows(store: Store, path: str) -> list[Symbol]:
    project = store.projects.all()[0]
    document = store.documents.find(project.id, path)
    return store.symbols.of_file(document.id) if document else []


def test_symbol_rows_follow_the_files_edits_renames_and_deletes(lode: Lode, tmp_path: Path) -> None:
    root = _copy(tmp_path)
    lode.index(root, name="units")
    store = lode.store
    assert lode.check().ok
    document = store.documents.find(store.projects.all()[0].id, "ledger.py")
    assert document is not None
    chunks = {c.id: c for c in store.chunks.of_files([document.id])}
    rows = _rows(store, "ledger.py")
    assert {s.chunk_id for s in rows} <= set(chunks)
    definition = next(s for s in rows if s.qualified_name == "Account.balance")
    assert chunks[definition.chunk_id].chunk.node_name == "balance"

    source = root / "ledger.py"
    source.write_text(source.read_text().replace("def balance", "def current_balance").replace(
        "account.balance()", "account.current_balance()"))  # fmt: skip
    lode.index(root, name="units")
    names = {(s.role, s.name) for s in _rows(store, "ledger.py")}
    assert ("definition", "current_balance") in names
    assert ("definition", "balance") not in names
    assert ("reference", "current_balance") in names
    assert not lode.symbols(SymbolQuery("balance", languages=("python",))).symbols

    source.rename(root / "accounts.py")
    (root / "queue.c").unlink()
    lode.index(root, name="units")
    assert _rows(store, "ledger.py") == []
    assert _rows(store, "queue.c") == []
    assert {s.symbol.file_path for s in lode.symbols(SymbolQuery("open_account")).symbols} == {"accounts.py"}
    assert not lode.symbols(SymbolQuery("queue_push")).symbols
    assert lode.check().ok


def test_repair_rewrites_stale_or_interrupted_symbol_rows(lode: Lode, tmp_path: Path) -> None:
    """Symbol rows of another version of their file, or of a write that stopped between its
    commits (an intent left behind), make the file be indexed again whole."""
    import pyarrow as pa

    root = _copy(tmp_path)
    lode.index(root, name="units")
    store = lode.store
    project = store.projects.all()[0]
    document = store.documents.find(project.id, "stack.go")
    assert document is not None
    before = {(s.role, s.name, s.start_line) for s in _rows(store, "stack.go")}
    store.db.table("code_symbols").update(where=f"file_id = '{document.id}'", values={"file_hash": "old"})
    problems = {(p.kind, p.table) for p in store.check().problems}
    assert ("stale", "code_symbols") in problems
    assert store.files.repair(project.id) == {"stack.go"}
    lode.index(root, name="units")
    assert {(s.role, s.name, s.start_line) for s in _rows(store, "stack.go")} == before
    assert store.check().ok

    other = store.documents.find(project.id, "queue.c")
    assert other is not None
    store.db.table("write_intents").add(
        pa.table({"file_id": [other.id], "project_id": [project.id], "at": [None]})
    )
    assert ("interrupted", "write_intents") in {(p.kind, p.table) for p in store.check().problems}
    assert store.files.repair(project.id) == {"queue.c"}
    lode.index(root, name="units")
    assert store.check().ok
    assert [s.symbol.name for s in lode.symbols(SymbolQuery("queue_push")).symbols] == ["queue_push"]


# ---- go to definition and find references ----------------------------------------------
@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lode]:
    """The units fixtures plus a small Python package whose modules import each other."""
    tmp = tmp_path_factory.mktemp("symbols")
    root = Path(shutil.copytree(UNITS, tmp / "repo"))
    (root / "shop").mkdir()
    (root / "shop" / "pricing.py").write_text("def total(items):\n    return sum(items)\n")
    (root / "shop" / "tax.py").write_text("def total(amount):\n    return amount * 1.2\n")
    (root / "app").mkdir()
    (root / "app" / "checkout.py").write_text(
        "from shop.tax import total as taxed\n\n\ndef checkout(items):\n    return taxed(total(items))\n\n\n"
        "def total(items):\n    return len(items)\n"
    )
    (root / "app" / "report.py").write_text("from shop.pricing import total\n\n\ndef report(items):\n"
                                            "    return total(items)\n")  # fmt: skip
    api = Lode(load_config(env={}, overrides={"db": tmp / "db"}), embedder=FakeEmbedder())
    api.index(root, name="units")
    yield api
    api.close()


def test_an_ambiguous_name_lists_every_candidate_nearest_first(indexed: Lode) -> None:
    anywhere = indexed.symbols(SymbolQuery("total"))
    files = {"shop/pricing.py", "shop/tax.py", "app/checkout.py", "shapes.ts"}
    assert {s.symbol.file_path for s in anywhere.symbols} == files
    assert {s.proximity for s in anywhere.symbols} == {"elsewhere"}
    near = indexed.symbols(SymbolQuery("total", from_path="app/checkout.py"))
    ranked = [(s.symbol.file_path, s.proximity) for s in near.symbols]
    assert ranked[:2] == [("app/checkout.py", "same_file"), ("shop/tax.py", "imported")]
    assert ranked[2:] == [("shop/pricing.py", "elsewhere"), ("shapes.ts", "elsewhere")]  # functions first
    report = indexed.symbols(SymbolQuery("total", from_path="app/report.py"))
    assert [(s.symbol.file_path, s.proximity) for s in report.symbols[:2]] == [
        ("app/checkout.py", "same_module"),
        ("shop/pricing.py", "imported"),
    ]


def test_match_modes_and_filters(indexed: Lode) -> None:
    def names(**kw: object) -> list[str]:
        return [s.symbol.qualified_name for s in indexed.symbols(SymbolQuery(**kw)).symbols]  # type: ignore[arg-type]

    assert names(name="Circle.area") == ["Circle.area", "Geometry.Circle.area"]
    assert names(name="Shop.Orders") == ["Shop.Orders"]  # a C# namespace's whole name
    assert set(names(name="push", match="prefix")) == {"Collections.BoundedStack.push_item"}
    assert set(names(name="*_item", match="glob")) == {"Collections.BoundedStack.push_item"}
    assert names(name="pshitm", match="fuzzy") == ["Collections.BoundedStack.push_item"]
    assert names(name="area", kinds=("method",), languages=("rust",)) == ["Shape.area", "Circle.area"]
    assert set(names(name="Ledger")) == {"Ledger", "Ledger.Ledger"}
    limited = indexed.symbols(SymbolQuery("area", limit=1))
    assert (len(limited.symbols), limited.total, limited.truncated) == (1, 4, True)


def test_bad_queries_name_their_field(indexed: Lode) -> None:
    with pytest.raises(ValidationError, match="match"):
        indexed.symbols(SymbolQuery("x", match="regex"))
    with pytest.raises(ValidationError) as bad_glob:
        indexed.symbols(SymbolQuery("[z-a]", match="glob"))
    assert bad_glob.value.field == "name"
    with pytest.raises(ValidationError) as empty:
        indexed.symbols(SymbolQuery("  "))
    assert empty.value.field == "name"
    with pytest.raises(NotFoundError) as unknown:
        indexed.references(ReferenceQuery("x", projects=("nope",)))
    assert unknown.value.field == "project"
    with pytest.raises(NotFoundError):
        indexed.symbol("no-such-id")
    with pytest.raises(ValidationError) as kind:
        indexed.symbols(SymbolQuery("x", kinds=("methods",)))
    assert kind.value.field == "kind"


def test_references_are_grouped_by_caller(indexed: Lode) -> None:
    found = indexed.references(ReferenceQuery("total", from_path="app/report.py"))
    callers = [(c.file_path, c.container, c.container_kind, [s.line for s in c.sites]) for c in found.callers]
    assert callers[0] == ("app/report.py", "report", "function", [5])  # same file first
    assert ("app/checkout.py", "checkout", "function", [5]) in callers
    assert found.total_sites == sum(len(c.sites) for c in found.callers)
    assert {d.symbol.file_path for d in found.definitions} >= {"shop/pricing.py", "shop/tax.py"}
    site = found.callers[0].sites[0]
    detail = indexed.symbol(site.id)
    assert (detail.symbol.role, detail.symbol.text, detail.code) == (
        "reference",
        site.text,
        "    return total(items)",
    )


def test_definitions_and_uses_read_together_match_each_read_alone(indexed: Lode) -> None:
    """``find_uses`` reads both roles in one scan; cut by its limits, it reads each alone."""
    store = indexed.store
    key = lambda s: s.id  # noqa: E731
    for name in ("total", "area", "push_item", "Ledger", "no_such_name"):
        defined, used = store.symbols.uses([name])
        assert sorted(defined, key=key) == sorted(store.symbols.definitions([name]), key=key)
        assert sorted(used, key=key) == sorted(store.symbols.references([name]), key=key)
    defined, used = store.symbols.uses(["total"], definitions=1, references=1)
    assert (len(defined), len(used)) == (1, 1)
    assert defined[0].role == "definition"
    assert used[0].role == "reference"
    assert defined[0].name == used[0].name == "total"
    only_ts = store.symbols.uses(["total"], languages=["typescript"])[0]
    assert {s.file_path for s in only_ts} == {"shapes.ts"}


def test_es5_methods_assigned_are_definitions_with_callers(indexed: Lode) -> None:
    found = [s.symbol for s in indexed.symbols(SymbolQuery("addTest")).symbols]
    assert [(s.qualified_name, s.kind, s.container, s.container_kind) for s in found] == [
        ("Suite.addTest", "method", "Suite", "function")
    ]
    assert indexed.symbol(found[0].id).code.splitlines()[0] == "  Suite.prototype.addTest = function (test) {"
    statics = indexed.symbols(SymbolQuery("create", kinds=("method",), languages=("javascript",))).symbols
    assert [s.symbol.qualified_name for s in statics] == ["Runner.create"]
    callers = indexed.references(ReferenceQuery("abort")).callers
    assert [(c.file_path, c.container, c.container_kind) for c in callers] == [
        ("runner.js", "Runner.run", "method")
    ]


def test_a_definition_comes_with_its_code(indexed: Lode) -> None:
    found = indexed.symbols(SymbolQuery("Overflow")).symbols[0].symbol
    detail = indexed.symbol(found.id)
    assert detail.code.splitlines()[0].strip() == "class Overflow < StandardError"
    assert detail.code.splitlines()[-1].strip() == "end"
    assert detail.project == "units"


def test_search_can_read_the_symbol_index_without_a_query(indexed: Lode) -> None:
    store = indexed.store
    defining = list(dict.fromkeys(s.chunk_id for s in store.symbols.definitions(["push_item"])))
    using = list(dict.fromkeys(s.chunk_id for s in store.symbols.references(["@items"])))
    chunks = {c.id: c.chunk for c in store.chunks.get([*defining, *using])}
    assert [chunks[i].node_name for i in defining] == ["push_item"]
    assert {chunks[i].node_name for i in using} == {"push_item"}  # initialize assigns it: a definition


# ---- HTTP and CLI -----------------------------------------------------------------------------
def test_http_routes_and_cli(tmp_path: Path) -> None:
    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False})
    with serve_in_thread(config, FakeEmbedder()) as base:
        created = httpx.post(f"{base}/api/v1/projects", json={"path": str(UNITS), "name": "units"}).json()
        wait_task(base, created["task_id"])
        listed = httpx.get(
            f"{base}/api/v1/symbols", params={"name": "area", "kind": ["method", "trait"], "language": "rust"}
        )
        assert listed.status_code == 200
        body = listed.json()
        assert [s["qualified_name"] for s in body["symbols"]] == ["Shape.area", "Circle.area"]
        detail = httpx.get(f"{base}/api/v1/symbols/{body['symbols'][1]['id']}").json()
        assert detail["code"].lstrip().startswith("fn area(&self) -> f64 {")
        refs = httpx.get(f"{base}/api/v1/symbols/references", params={"name": "Point"}).json()
        assert {c["container"] for c in refs["callers"]} == {"Point.scaled", "Point.Polar.toPoint"}
        for params, field, status in [
            ({"name": "x", "match": "regex"}, "match", 400),
            ({"name": "[z-a]", "match": "glob"}, "name", 400),
            ({"name": "x", "project": "nope"}, "project", 404),
            ({"name": "x", "limit": 0}, "limit", 400),
            ({"name": "x", "from_path": "../etc"}, "from_path", 400),
            ({"name": "x", "kind": ["method", "nope"]}, "kind", 400),
            ({"name": "x", "kind": "method,trait"}, "kind", 400),  # a list is a repeated parameter
            ({"name": "x", "language": "klingon"}, "language", 400),
        ]:
            answer = httpx.get(f"{base}/api/v1/symbols", params=params)
            assert answer.status_code == status, answer.text
            assert [e["key"] for e in answer.json()["extra"]] == [field]
        assert httpx.get(f"{base}/api/v1/symbols/nope").status_code == 404

        env = {"LODE_DB": str(tmp_path / "db"), "LODE_PORT": base.rsplit(":", 1)[1]}
        runner = CliRunner()
        args = ["symbols", "area", "--kind", "method", "--kind", "trait", "--language", "rust", "--json"]
        via_server = runner.invoke(cli, args, env=env)
        assert via_server.exit_code == 0, via_server.output
        assert json.loads(via_server.output) == body
        args = ["symbols", "area", "--kind", "method,trait", "--language", "rust", "--json", "--local"]
        local = runner.invoke(cli, args, env=env)
        assert json.loads(local.output) == body  # the same answer in-process
        refs_cli = runner.invoke(cli, ["refs", "Point"], env=env)
        assert refs_cli.exit_code == 0, refs_cli.output
        assert "Point.swift  Point.scaled (method)" in refs_cli.output
        assert "3 uses in 2 callers" in refs_cli.output
        text = runner.invoke(cli, ["symbols", "push_item"], env=env)
        assert text.output.startswith(
            "stack.rb:12-14  method  Collections.BoundedStack.push_item  def push_item(item)"
        )
        bad = runner.invoke(cli, ["symbols", "x", "--project", "nope"], env=env)
        assert bad.exit_code == 2
        assert "--project" in bad.output
