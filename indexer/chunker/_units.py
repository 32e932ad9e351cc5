"""Which nodes of a syntax tree are units: declarations (through their wrappers) and the
comments and attributes right above them, and the statements a unit too big is cut at."""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from indexer.chunker._spec import LanguageSpec

__all__ = ["Unit", "body_statements", "classify", "find_units", "last_row", "statements"]


@dataclass(frozen=True, slots=True)
class Unit:
    """A unit among a body's nodes: its node, its declaration (inside wrappers), its
    normalised node type and its lines (0-based, with the comments and attributes above it)."""

    node: Node
    decl: Node
    node_type: str
    first_line: int
    last_line: int


def last_row(node: Node) -> int:
    """The last line holding text of ``node`` (a node ending at column 0 ends the line before)."""
    end = node.end_point
    if end.column == 0 and end.row > node.start_point.row:
        return int(end.row) - 1
    return int(end.row)


def classify(node: Node, spec: LanguageSpec) -> tuple[str, Node] | None:
    """``(node type, declaration)`` when ``node`` is a unit (through its wrappers), else None."""
    decl = node
    for _ in range(4):
        names = spec.wrappers.get(decl.type)
        if names is None:
            break
        inner = next((decl.child_by_field_name(n) for n in names if decl.child_by_field_name(n)), None)
        if inner is None:
            inner = next((c for c in decl.named_children if c.type in names), None)
        if inner is None:
            return None
        decl = inner
    node_type = spec.units.get(decl.type)
    if node_type is not None:
        return node_type, decl
    hook = spec.special.get(decl.type)
    return hook(decl) if hook is not None else None


def find_units(nodes: list[Node], prev_last: int, spec: LanguageSpec, hosting: bool = False) -> list[Unit]:
    """The units among ``nodes`` (a host's: only its members), each with the comments
    and attributes right above it."""
    member = spec.host_member if hosting else None
    units: list[Unit] = []
    pending_first, pending_last = -1, -3
    attachable = spec.comments | spec.attributes
    for node in nodes:
        first, last = int(node.start_point.row), last_row(node)
        if node.type in attachable:
            if first <= prev_last:
                continue
            if pending_first < 0 or first > pending_last + 1:
                pending_first = first
            pending_last = last
            continue
        kind = member(node) if member is not None else classify(node, spec)
        if kind is not None:
            start = pending_first if pending_first >= 0 and first <= pending_last + 1 else first
            units.append(Unit(node, kind[1], kind[0], start, last))
        pending_first, pending_last = -1, -3
        prev_last = last
    return units


def body_statements(body: Node) -> list[Node]:
    """The statements of a body (through single wrappers such as Go's ``statement_list``)."""
    nodes = body.named_children
    while len(nodes) == 1 and nodes[0].named_child_count:
        nodes = nodes[0].named_children
    return nodes


def statements(node: Node) -> list[Node]:
    """Named descendants of ``node`` that may start a statement (children and grandchildren)."""
    out: list[Node] = []
    for child in node.named_children:
        out.append(child)
        if child.end_point.row > child.start_point.row:
            out.extend(child.named_children)
    return out
