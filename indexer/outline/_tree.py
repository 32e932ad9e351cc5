"""The project tree: the root, a node per directory, and the (cached) file subtrees.

File subtrees are shared between successive builds and never changed after they are
made; directories and the root are made fresh each time.
"""

from __future__ import annotations

from collections.abc import Sequence

from indexer.outline._model import DIR_KIND, ROOT_KIND, OutlineNode
from indexer.outline._text import pack_terms

__all__ = ["ROOT_ID", "assemble", "summary_source"]

#: The id of every project's root node.
ROOT_ID = "."

# Files whose summary describes their folder, best first.
_FOLDER_DOCS = (
    "readme.md", "readme.rst", "readme.txt", "readme", "readme.markdown", "index.md", "index.rst",
    "__init__.py", "doc.go", "mod.rs", "lib.rs", "package-info.java", "index.js", "index.ts",
)  # fmt: skip
_RANK = {name: rank for rank, name in enumerate(_FOLDER_DOCS)}


def summary_source(folder: OutlineNode) -> OutlineNode | None:
    """The file that describes a folder (its README, else a package file), if any."""
    files = [c for c in folder.children if c.kind != DIR_KIND and c.title.lower() in _RANK]
    files.sort(key=lambda c: (_RANK[c.title.lower()], c.title))
    return next((c for c in files if c.summary), None)


def _folder(path: str, title: str) -> OutlineNode:
    parent = path.rsplit("/", 1)[0] if "/" in path else ROOT_ID
    return OutlineNode(
        id=path, title=title, kind=DIR_KIND, depth=path.count("/") + 1, path=path, parent=parent, leaf_count=0
    )


def _folder_of(path: str, folders: dict[str, OutlineNode]) -> OutlineNode:
    """The node of folder ``path`` (made, with its parents, when missing)."""
    found = folders.get(path)
    if found is not None:
        return found
    parent_path, _, title = path.rpartition("/")
    node = _folder(path, title)
    folders[path] = node
    _folder_of(parent_path or ROOT_ID, folders).children.append(node)
    return node


def _order(node: OutlineNode) -> None:
    node.children.sort(key=lambda c: (c.kind != DIR_KIND, c.title.lower(), c.title))
    for child in node.children:
        if child.kind == DIR_KIND:
            _order(child)
        node.leaf_count += child.leaf_count
    source = summary_source(node)
    node.summary = source.summary if source is not None else ""
    node.terms, node.tfs, node.lengths = pack_terms(node.title, node.summary, "")


def assemble(name: str, files: Sequence[OutlineNode]) -> tuple[OutlineNode, dict[str, OutlineNode]]:
    """The root of a project's tree over its file subtrees, and every node by id."""
    root = OutlineNode(id=ROOT_ID, title=name, kind=ROOT_KIND, depth=0, path=ROOT_ID, parent="", leaf_count=0)
    folders = {ROOT_ID: root}
    for file in files:
        folder = file.path.rsplit("/", 1)[0] if "/" in file.path else ROOT_ID
        _folder_of(folder, folders).children.append(file)
    _order(root)
    nodes: dict[str, OutlineNode] = {}
    for node in root.walk():
        nodes.setdefault(node.id, node)
    return root, nodes
