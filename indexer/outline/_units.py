"""One file's outline subtree from its chunks: code units by scope path, Markdown sections
by heading path, reStructuredText sections from its underlined titles.

The chunks of one unit (a large function or section cut in pieces, a class's skeleton
and the fields between its methods) become one node: a chunk that starts after its
unit's first line (``unit_start_line``) joins the node of that unit; chunks of an index
older than unit lines join when they look like the continuation of the chunk before.
A unit nests under the closest unit of its file whose scope path is a prefix of its own
(a Go method under its struct, a method under its class, a class under its namespace);
top-level statements (``block``) and line windows (``text``) are the file's own text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from indexer.models import Chunk
from indexer.outline._members import CONTAINER_KINDS, find_members
from indexer.outline._model import FILE_KIND, OutlineNode
from indexer.outline._rst import rst_sections
from indexer.outline._summary import code_summary, prose_summary
from indexer.outline._text import pack_terms

__all__ = ["build_file", "set_text"]

_PROSE = frozenset({"markdown", "rst", "text"})
_OWN_TEXT = frozenset({"block", "text"})
_NAMESPACES = frozenset({"module", "namespace"})


@dataclass(slots=True)
class _Unit:
    """A run of chunks of one unit, merged."""

    node_type: str
    name: str
    scope: tuple[str, ...]
    start: int
    end: int
    texts: list[str] = field(default_factory=list)
    definitions: tuple[str, ...] = ()
    legacy: bool = False
    """Chunked before units were recorded: a small class's members are found in its text."""


def set_text(node: OutlineNode, text: str) -> None:
    """Record the index terms of a node's title, summary and own text."""
    node.terms, node.tfs, node.lengths = pack_terms(node.title, node.summary, text)


def _continues(previous: _Unit, chunk: Chunk) -> bool:
    """True when ``chunk`` is the next piece of ``previous`` rather than a new unit."""
    if chunk.node_type != previous.node_type or chunk.scope_path != previous.scope or not previous.scope:
        return False
    if chunk.start_line > previous.end + 1:
        return False
    first = chunk.content.lstrip("\n").split("\n", 1)[0]
    if chunk.node_type == "section":
        return not first.lstrip().startswith("#")
    head = previous.texts[0].lstrip("\n").split("\n", 1)[0]
    return len(first) - len(first.lstrip()) > len(head) - len(head.lstrip()) or first.strip()[:1] in "})]"


def _merge(chunks: Sequence[Chunk]) -> tuple[list[_Unit], list[str]]:
    """Units (merged pieces) and the file's own texts (blocks, windows, nameless chunks)."""
    units: list[_Unit] = []
    own: list[str] = []
    by_start: dict[tuple[str, tuple[str, ...], int], _Unit] = {}
    for chunk in chunks:
        scope = chunk.scope_path or ((chunk.node_name,) if chunk.node_name else ())
        if chunk.node_type in _OWN_TEXT or not scope:
            own.append(chunk.content)
            continue
        head = by_start.get((chunk.node_type, scope, chunk.unit_start_line))
        legacy = not chunk.signature and chunk.unit_start_line == chunk.start_line
        if head is not None and chunk.unit_start_line < chunk.start_line:
            previous: _Unit | None = head
        elif legacy and units and _continues(units[-1], chunk):
            previous = units[-1]
        else:
            previous = None
        if previous is not None:
            previous.end = max(previous.end, chunk.end_line)
            previous.texts.append(chunk.content)
            continue
        unit = _Unit(chunk.node_type, chunk.node_name, scope, chunk.start_line, chunk.end_line, legacy=legacy)
        unit.texts.append(chunk.content)
        unit.definitions = chunk.definitions
        units.append(unit)
        by_start[(chunk.node_type, scope, chunk.start_line)] = unit
    return units, own


class _Ids:
    """Unique ids within one file: a repeated id gets ``~2``, ``~3``…"""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    def take(self, base: str) -> str:
        """``base``, or ``base~N`` when ``base`` was taken before."""
        count = self.seen.get(base, 0) + 1
        self.seen[base] = count
        return base if count == 1 else f"{base}~{count}"


def _parent_of(
    unit: _Unit, scopes: dict[tuple[str, ...], list[OutlineNode]]
) -> tuple[OutlineNode | None, int]:
    """The closest enclosing unit node by scope prefix (and line range), and the prefix length."""
    for size in range(len(unit.scope) - 1, 0, -1):
        candidates = scopes.get(unit.scope[:size])
        if candidates:
            inside = [c for c in candidates if c.start_line <= unit.start <= c.end_line]
            return (inside or candidates)[-1], size
    return None, 0


def _unit_node(unit: _Unit, path: str, parent: OutlineNode, prefix: int, ids: _Ids) -> OutlineNode:
    section = unit.node_type == "section"
    joiner = "/" if section else "."
    title = unit.name if section else ".".join(unit.scope[prefix:]) or unit.name
    node = OutlineNode(
        id=ids.take(f"{path}#{joiner.join(unit.scope)}"),
        title=title,
        kind=unit.node_type,
        depth=parent.depth + 1,
        path=path,
        parent=parent.id,
        start_line=unit.start,
        end_line=unit.end,
    )
    head = unit.texts[0]
    if section:
        lines = head.split("\n")
        node.summary = prose_summary(lines[1:])
        set_text(node, "\n".join(["\n".join(lines[1:]), *unit.texts[1:]]))
    else:
        node.summary = code_summary(head)
        set_text(node, "\n".join(unit.texts))
    return node


def _add_members(node: OutlineNode, unit: _Unit, ids: _Ids) -> None:
    """Children of a single-chunk class, found in its text."""
    text = unit.texts[0]
    members = find_members(text, unit.definitions, unit.name)
    if not members:
        return
    lines = text.split("\n")
    covered: set[int] = set()
    for member in members:
        child = OutlineNode(
            id=ids.take(f"{node.path}#{'.'.join((*unit.scope, member.name))}"),
            title=member.name,
            kind="function" if member.kind == "method" and unit.node_type in _NAMESPACES else member.kind,
            depth=node.depth + 1,
            path=node.path,
            parent=node.id,
            start_line=unit.start + member.first,
            end_line=unit.start + member.last,
        )
        body = lines[member.first : member.last + 1]
        child.summary = code_summary("\n".join(body))
        set_text(child, "\n".join(body))
        node.children.append(child)
        covered.update(range(member.first, member.last + 1))
    set_text(node, "\n".join(line for i, line in enumerate(lines) if i not in covered))


def _file_node(path: str, language: str) -> OutlineNode:
    return OutlineNode(
        id=path,
        title=path.rsplit("/", 1)[-1],
        kind=FILE_KIND,
        depth=path.count("/") + 1,
        path=path,
        parent=path.rsplit("/", 1)[0] if "/" in path else ".",
        start_line=1,
        language=language,
    )


def _attach_units(root: OutlineNode, units: list[_Unit], path: str) -> None:
    ids = _Ids()
    scopes: dict[tuple[str, ...], list[OutlineNode]] = {}
    made: list[tuple[OutlineNode, _Unit]] = []
    for unit in units:
        parent, prefix = _parent_of(unit, scopes)
        node = _unit_node(unit, path, parent or root, prefix, ids)
        (parent or root).children.append(node)
        scopes.setdefault(unit.scope, []).append(node)
        made.append((node, unit))
    for node, unit in made:
        if unit.legacy and not node.children and len(unit.texts) == 1 and unit.node_type in CONTAINER_KINDS:
            _add_members(node, unit, ids)


def _finish(node: OutlineNode) -> None:
    """Leaf counts and line ranges that cover the children (post-order)."""
    if not node.children:
        node.leaf_count = 1
        return
    node.leaf_count = 0
    for child in node.children:
        _finish(child)
        node.leaf_count += child.leaf_count
        node.end_line = max(node.end_line, child.end_line)
        if node.kind != FILE_KIND:
            node.start_line = min(node.start_line, child.start_line)


def _file_summary(root: OutlineNode, chunks: Sequence[Chunk], own: list[str]) -> str:
    if root.language in _PROSE:
        preamble = prose_summary("\n".join(own).split("\n")) if own else ""
        return preamble or next((c.summary for c in root.walk()[1:] if c.summary), "")
    if chunks and chunks[0].node_type in _OWN_TEXT:
        found = code_summary(chunks[0].content, module=True)
        if found:
            return found
    top = [c for c in root.children if c.summary]
    return top[0].summary if len(root.children) == 1 and top else ""


def build_file(path: str, chunks: Sequence[Chunk]) -> OutlineNode:
    """The outline subtree of one file (its node, with units or sections below it)."""
    language = chunks[0].language if chunks else ""
    root = _file_node(path, language)
    ordered = sorted(chunks, key=lambda c: c.chunk_index)
    units, own = _merge(ordered)
    if language == "rst":
        sections, preamble = rst_sections(ordered)
        units = [_Unit("section", t, scope, a, b, [text]) for t, scope, a, b, text in sections]
        own = [preamble]
    _attach_units(root, units, path)
    root.end_line = max((c.end_line for c in ordered), default=1)
    _finish(root)
    root.summary = _file_summary(root, ordered, own)
    set_text(root, "\n".join(own))
    return root
