"""No import cycle among lode's modules (``indexer/`` and ``server/``), counting the imports
inside functions too: a cycle hidden by a local import is still a cycle (issue 40 found
``pipeline`` ↔ ``vectorizer`` that way). An import under ``if TYPE_CHECKING:`` does not
count (it never runs). ``from pkg import Name`` counts as an import of the submodule that
``pkg``'s lazy ``_EXPORTS`` table names for ``Name`` (``indexer._lazy``), since that is what
it runs."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("indexer", "server")


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _lazy_exports(tree: ast.Module) -> dict[str, str]:
    """A package's ``_EXPORTS = {"Name": "module", ...}`` table (empty when it has none)."""
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in node.targets)
            and isinstance(node.value, ast.Dict)
        ):
            return {
                k.value: v.value
                for k, v in zip(node.value.keys, node.value.values, strict=True)
                if isinstance(k, ast.Constant) and isinstance(v, ast.Constant)
            }
    return {}


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement under ``node``, at any depth, but for ``if TYPE_CHECKING:`` bodies."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _type_checking(child.test):
            for other in child.orelse:
                yield from _imports_in(other)
        else:
            yield from _imports_in(child)


def _imports_in(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
    yield from _imports(node)


def import_graph(root: Path, packages: tuple[str, ...] = PACKAGES) -> dict[str, dict[str, int]]:
    """Each module of ``packages`` under ``root`` → the modules of theirs it imports (with the
    line of the first such import)."""
    paths = {_module_name(root, p): p for pkg in packages for p in sorted((root / pkg).rglob("*.py"))}
    trees = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in paths.items()}
    exports = {name: _lazy_exports(tree) for name, tree in trees.items() if paths[name].name == "__init__.py"}

    def resolve(name: str) -> str | None:
        while name and name not in paths:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, dict[str, int]] = {}
    for name, tree in trees.items():
        here = name.split(".") if paths[name].name == "__init__.py" else name.split(".")[:-1]
        edges: dict[str, int] = {}
        for node in _imports(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    prefix = here[: len(here) - (node.level - 1)]
                    base = ".".join([*prefix, base] if base else prefix)
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    lazy = exports.get(base, {}).get(alias.name)
                    targets.append(sub if sub in paths else lazy or base)
            for target in targets:
                found = resolve(target)
                if found is not None and found != name:
                    edges.setdefault(found, node.lineno)
        graph[name] = edges
    return graph


def import_cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    iterative), each sorted, in name order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return sorted(cycles)


def _describe(graph: dict[str, dict[str, int]], cycle: list[str]) -> str:
    members = set(cycle)
    return "; ".join(
        f"{name} imports {target} (line {line})"
        for name in cycle
        for target, line in sorted(graph[name].items())
        if target in members
    )


def test_no_module_of_indexer_or_server_is_part_of_an_import_cycle() -> None:
    graph = import_graph(ROOT)
    assert len(graph) > 100  # the walk found the packages
    cycles = import_cycles(graph)
    assert not cycles, "\n".join(_describe(graph, cycle) for cycle in cycles)


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_a_cycle_hidden_in_a_function_is_found_and_a_type_checking_one_is_not(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from pkg.b import thing\n",
            "pkg/b.py": "def thing():\n    from pkg import a\n    return a\n",
            "pkg/c.py": "from typing import TYPE_CHECKING\nfrom pkg.d import D\n",
            "pkg/d.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.c import C\nD = 1\n",
            "pkg/sub/__init__.py": "from .e import E\n",
            "pkg/sub/e.py": "E = 1\n\ndef f():\n    from ..sub import E\n",
        },
    )
    graph = import_graph(tmp_path, ("pkg",))
    assert graph["pkg.d"] == {}
    assert graph["pkg.sub"] == {"pkg.sub.e": 1}
    assert import_cycles(graph) == [["pkg.a", "pkg.b"], ["pkg.sub", "pkg.sub.e"]]


def test_a_lazy_export_counts_as_an_import_of_the_module_that_holds_it(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/lazy/__init__.py": '_EXPORTS = {"Engine": "pkg.lazy._engine"}\n',
            "pkg/lazy/_engine.py": "from pkg.user import use\nEngine = 1\n",
            "pkg/user.py": "def use():\n    from pkg.lazy import Engine\n    return Engine\n",
        },
    )
    assert import_cycles(import_graph(tmp_path, ("pkg",))) == [["pkg.lazy._engine", "pkg.user"]]
