"""Classifier hooks for grammar kinds whose normalised node type depends on the node.

Each returns ``(node_type, declaration)`` or ``None`` for a plain statement.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from indexer.chunker._assignments import FUNCTIONS
from indexer.chunker._spec import Classifier, node_text

__all__ = [
    "c_declaration",
    "c_specifier",
    "c_typedef",
    "first_spec",
    "go_type",
    "js_declaration",
    "kotlin_class",
    "kotlin_property",
    "php_const",
    "php_namespace",
    "py_assignment",
    "ruby_assignment",
    "rust_macro",
    "rust_macro_name",
    "swift_class",
]

_CONSTANT_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
_C_RECORDS = {"struct_specifier": "struct", "union_specifier": "struct", "class_specifier": "class"}
#: Keywords of an item spelled inside a Rust macro invocation → the node type of the item.
_RUST_ITEMS = {
    "struct": "struct",
    "union": "struct",
    "enum": "enum",
    "trait": "trait",
    "fn": "function",
    "type": "type",
    "mod": "module",
    "const": "constant",
    "static": "constant",
}
_RUST_BINDING = frozenset({"ref", "mut"})
_SWIFT_KEYWORDS = {
    "class": "class",
    "struct": "struct",
    "enum": "enum",
    "extension": "impl",
    "actor": "class",
}


def _is_constant_name(node: Node | None) -> bool:
    return node is not None and _CONSTANT_NAME.fullmatch(node_text(node)) is not None


def py_assignment(node: Node) -> tuple[str, Node] | None:
    """``NAME = value`` with an upper-case name is a constant."""
    target = node
    if node.type == "expression_statement":
        if node.named_child_count != 1:
            return None
        target = node.named_children[0]
    if target.type != "assignment":
        return None
    left = target.child_by_field_name("left")
    if left is not None and left.type == "identifier" and _is_constant_name(left):
        return "constant", target
    return None


def js_declaration(node: Node) -> tuple[str, Node] | None:
    """``const f = () => {}`` is a function, ``const LIMIT = 3`` a constant."""
    declarators = [c for c in node.named_children if c.type == "variable_declarator"]
    if len(declarators) != 1:
        return None
    declarator = declarators[0]
    value = declarator.child_by_field_name("value")
    if value is not None and value.type in FUNCTIONS:
        return "function", declarator
    if value is not None and value.type == "class":
        return "class", declarator
    is_const = node.child_count > 0 and node.children[0].type == "const"
    if is_const and _is_constant_name(declarator.child_by_field_name("name")):
        return "constant", declarator
    return None


def first_spec(node_type: str) -> Classifier:
    """A hook for Go ``const``/``var`` groups: named by their first spec."""

    def classify(node: Node) -> tuple[str, Node] | None:
        spec = next((c for c in node.named_children if c.type.endswith("_spec")), None)
        return (node_type, spec) if spec is not None else None

    return classify


def go_type(node: Node) -> tuple[str, Node] | None:
    """``type X struct`` / ``interface`` / alias, named by the first spec."""
    spec = next((c for c in node.named_children if c.type in ("type_spec", "type_alias")), None)
    if spec is None:
        return None
    if spec.type == "type_alias":
        return "type", spec
    kind = spec.child_by_field_name("type")
    node_type = {"struct_type": "struct", "interface_type": "interface"}.get(
        kind.type if kind else "", "type"
    )
    return node_type, spec


def _record_type(node: Node | None) -> str | None:
    if node is None or node.child_by_field_name("body") is None:
        return None
    if node.type == "enum_specifier":
        return "enum"
    return _C_RECORDS.get(node.type)


def c_specifier(node: Node) -> tuple[str, Node] | None:
    """``struct point { … };`` with a body is a struct (a forward declaration is not)."""
    node_type = _record_type(node)
    return (node_type, node) if node_type is not None else None


def c_typedef(node: Node) -> tuple[str, Node] | None:
    """``typedef struct {…} name_t`` is a struct named ``name_t``; other typedefs are types."""
    return _record_type(node.child_by_field_name("type")) or "type", node


def c_declaration(node: Node) -> tuple[str, Node] | None:
    """``struct point {…} origin;`` declares a struct; other declarations are statements."""
    inner = node.child_by_field_name("type")
    node_type = _record_type(inner)
    return (node_type, inner) if node_type is not None and inner is not None else None


def kotlin_class(node: Node) -> tuple[str, Node] | None:
    """Kotlin spells classes, interfaces and enums with one node kind."""
    kinds = {c.type for c in node.children}
    if "interface" in kinds:
        return "interface", node
    if "enum_class_body" in kinds:
        return "enum", node
    return "class", node


def kotlin_property(node: Node) -> tuple[str, Node] | None:
    """``const val X = 1`` is a constant."""
    modifiers = next((c for c in node.named_children if c.type == "modifiers"), None)
    variable = next((c for c in node.named_children if c.type == "variable_declaration"), None)
    if modifiers is not None and variable is not None and "const" in node_text(modifiers).split():
        return "constant", variable
    return None


def swift_class(node: Node) -> tuple[str, Node] | None:
    """Swift spells class, struct, enum, actor and extension with one node kind."""
    for child in node.children:
        node_type = _SWIFT_KEYWORDS.get(child.type)
        if node_type is not None and not child.is_named:
            return node_type, node
    return "class", node


def ruby_assignment(node: Node) -> tuple[str, Node] | None:
    """``LIMIT = 10`` (a constant on the left) is a constant."""
    left = node.child_by_field_name("left")
    return ("constant", node) if left is not None and left.type == "constant" else None


def php_const(node: Node) -> tuple[str, Node] | None:
    """``const X = 1;`` is a constant named after its first element."""
    element = next((c for c in node.named_children if c.type == "const_element"), None)
    return ("constant", element) if element is not None else None


def php_namespace(node: Node) -> tuple[str, Node] | None:
    """``namespace A { … }`` and ``namespace A;`` (which holds the declarations after it)."""
    return ("namespace", node) if node.child_by_field_name("name") is not None else None


def _rust_invocation(node: Node) -> Node | None:
    if node.type == "macro_invocation":
        return node
    inner = node.named_children
    return inner[0] if len(inner) == 1 and inner[0].type == "macro_invocation" else None


def _rust_macro_item(invocation: Node) -> tuple[str, Node] | None:
    """The item a macro invocation defines: ``define_x! { pub struct Name; }`` → (struct,
    Name); ``define_x!(Name, …)`` → (macro, Name); None without an identifier."""
    tree = next((c for c in invocation.named_children if c.type == "token_tree"), None)
    if tree is None:
        return None
    keyword = ""
    first: Node | None = None
    for child in tree.children:
        if child.type in _RUST_ITEMS and not child.is_named:
            keyword = child.type
            continue
        if child.type != "identifier":
            if child.is_named or child.type not in ("pub", "(", "{", "[", "#"):
                keyword = ""
            continue
        if keyword and node_text(child) not in _RUST_BINDING:
            return _RUST_ITEMS[keyword], child
        if first is None and not keyword:
            first = child
    return ("macro", first) if first is not None else None


def rust_macro(node: Node) -> tuple[str, Node] | None:
    """An item-defining macro invocation at item level is a unit named after what it defines."""
    invocation = _rust_invocation(node)
    if invocation is None:
        return None
    item = _rust_macro_item(invocation)
    return (item[0], invocation) if item is not None else None


def rust_macro_name(node: Node) -> str:
    """The name an item-defining macro invocation gives its item ('' if none)."""
    item = _rust_macro_item(node)
    return node_text(item[1]) if item is not None else ""
