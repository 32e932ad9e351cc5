"""What the engine needs to know about one grammar, and how names and headers are read.

A ``LanguageSpec`` maps grammar node kinds onto the normalised node types of
``indexer.models.NODE_TYPES``; ``_languages`` holds one spec per language.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from tree_sitter import Node

__all__ = [
    "STOP_WORDS",
    "Classifier",
    "LanguageSpec",
    "body_of",
    "find_name",
    "header_end",
    "header_text",
    "node_text",
    "receiver_type",
]

#: A hook for kinds whose node type depends on their content: ``(node_type, declaration)``
#: or ``None`` when the node is a plain statement.
Classifier = Callable[[Node], "tuple[str, Node] | None"]

#: Identifiers no language lists as references: literals and the names of the object itself.
STOP_WORDS = frozenset(
    {"true", "false", "null", "nil", "None", "True", "False", "undefined", "_"}
    | {"self", "this", "cls", "super", "Self"}
)
_SPACES = re.compile(r"\s+")
_GENERICS = re.compile(r"<[^<>]*>|\[[^\[\]]*\]")
_ANGLE = re.compile(r"<[^<>]*>")
_HEADER_NOISE = ("@", "#[", "[", "//", "/*", "*", "#")
_HEADER_TAIL = " \t{:="
_MAX_HEADER = 200
_MAX_NAME = 120
_NAME_KINDS_DEFAULT = (
    "identifier",
    "type_identifier",
    "simple_identifier",
    "constant",
    "name",
    "word",
    "field_identifier",
    "property_identifier",
)
_DECLARATOR_TARGETS = frozenset(
    {
        "identifier",
        "field_identifier",
        "type_identifier",
        "qualified_identifier",
        "destructor_name",
        "operator_name",
    }
)


@dataclass(frozen=True, slots=True)
class LanguageSpec:
    """Grammar knowledge for one language: unit kinds, containers, comments, symbol queries."""

    name: str
    units: Mapping[str, str]
    """Grammar kind → normalised node type for declarations that are always units."""
    special: Mapping[str, Classifier] = field(default_factory=dict)
    """Kinds whose node type depends on the node (``const`` vs ``let``, ``typedef struct``)."""
    wrappers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Kinds that wrap a declaration (``export``, decorators, templates) → fields or kinds to look in."""
    containers: frozenset[str] = frozenset()
    """Declaration kinds whose members become their own chunks when the whole is too big."""
    transparent: frozenset[str] = frozenset()
    """Kinds whose children are read as siblings (``#ifdef`` blocks, ``extern "C" {}``)."""
    comments: frozenset[str] = frozenset({"comment"})
    """Comment kinds; a comment right above a unit belongs to it."""
    attributes: frozenset[str] = frozenset()
    """Attribute or decorator siblings that belong to the unit below them."""
    body_kinds: frozenset[str] = frozenset()
    """Kinds of declaration bodies (where the header ends and members start)."""
    constructors: frozenset[str] = frozenset()
    """Method names that are constructors."""
    fixed_names: Mapping[str, str] = field(default_factory=dict)
    """Names of kinds that have no name node (``init`` blocks, companion objects)."""
    name_hooks: Mapping[str, Callable[[Node], str]] = field(default_factory=dict)
    """Kinds whose name is read by a hook (a Rust macro invocation's item)."""
    name_fields: tuple[str, ...] = ("name",)
    """Fields holding a declaration's name, tried in order."""
    name_kinds: tuple[str, ...] = _NAME_KINDS_DEFAULT
    """Child kinds tried, in order, when a declaration has no ``name`` field."""
    ident_kinds: tuple[str, ...] = ("identifier",)
    """Identifier-like node kinds collected as references."""
    def_patterns: str = ""
    """Tree-sitter query patterns capturing ``@def`` for names a unit defines."""
    stop_words: frozenset[str] = frozenset()
    """Identifiers never listed as references (``self``, ``this``, literals)."""
    qualifier_joiner: str = "::"
    """Joins the path of a type a unit is declared outside of, when the file does not
    declare that type (C++ ``ns::Box``, JavaScript ``jQuery.fn``)."""
    value_fields: tuple[str, ...] = ("value",)
    """Fields holding the value a declaration binds, whose body is the declaration's
    (``const f = () => {…}``, ``X.prototype.m = function…``)."""
    inline_body: Callable[[Node], Node | None] | None = None
    """A hook giving the body whose statements are read as the node's siblings (an IIFE's)."""
    hosts: frozenset[str] = frozenset()
    """Function kinds whose body may hold member units (a JS constructor's ``this.m = …``)."""
    host_member: Classifier | None = None
    """Classifies a statement of a host's body as one of its member units (else None)."""


def node_text(node: Node | None) -> str:
    """The source text of ``node`` (empty for ``None``)."""
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", errors="replace")


def body_of(decl: Node, spec: LanguageSpec) -> Node | None:
    """The body of a declaration: its ``body`` field or its first child of a body kind."""
    body = decl.child_by_field_name("body")
    if body is not None:
        return body
    for child in decl.named_children:
        if child.type in spec.body_kinds:
            return child
    for name in spec.value_fields:
        value = decl.child_by_field_name(name)
        if value is not None and value.child_by_field_name("body") is not None:
            return value.child_by_field_name("body")
    return None


def _clean_name(raw: str) -> str:
    text = _SPACES.sub(" ", raw).strip()
    if "<" in text:
        for _ in range(4):
            text = _ANGLE.sub("", text)
    return text[:_MAX_NAME]


def _declarator_name(decl: Node) -> Node | None:
    node: Node | None = decl.child_by_field_name("declarator")
    for _ in range(8):
        if node is None or node.type in _DECLARATOR_TARGETS:
            return node
        inner = node.child_by_field_name("declarator")
        if inner is None:
            inner = next((c for c in node.named_children if c.type in _DECLARATOR_TARGETS), None)
        node = inner
    return node


def find_name(decl: Node, spec: LanguageSpec) -> str:
    """The declared name of ``decl`` (``""`` when it has none)."""
    fixed = spec.fixed_names.get(decl.type)
    if fixed is not None:
        return fixed
    hook = spec.name_hooks.get(decl.type)
    if hook is not None:
        return _clean_name(hook(decl))
    node = None
    for field_name in spec.name_fields:
        node = decl.child_by_field_name(field_name)
        if node is not None:
            break
    if node is None:
        node = _declarator_name(decl)
    if node is None:
        node = next((c for c in decl.named_children if c.type in spec.name_kinds), None)
    return _clean_name(node_text(node))


def receiver_type(decl: Node) -> str:
    """Base type name of a Go method receiver (``(s *Stack[T])`` → ``Stack``), else ``""``."""
    receiver = decl.child_by_field_name("receiver")
    if receiver is None:
        return ""
    text = _GENERICS.sub("", node_text(receiver)).strip("() \t")
    return text.rsplit(" ", 1)[-1].lstrip("*&")


def header_end(decl: Node, spec: LanguageSpec) -> int | None:
    """Where a declaration's header ends: at its body or at a comment after its name."""
    body = body_of(decl, spec)
    ends = [body.start_byte] if body is not None and body.start_byte > decl.start_byte else []
    ends += [
        c.start_byte
        for c in decl.named_children
        if c.type in spec.comments and c.start_byte > decl.start_byte
    ]
    return min(ends) if ends else None


def header_text(decl: Node, spec: LanguageSpec, source: bytes) -> str:
    """A declaration's header: its text up to the body, without attributes and comments."""
    stop = header_end(decl, spec)
    end = decl.end_byte if stop is None else stop
    raw = source[decl.start_byte : min(end, decl.start_byte + 4 * _MAX_HEADER)]
    lines = raw.decode("utf-8", errors="replace").splitlines()
    while len(lines) > 1 and lines[0].lstrip().startswith(_HEADER_NOISE):
        lines.pop(0)
    if stop is None:
        lines = lines[:1]
    text = _SPACES.sub(" ", " ".join(lines)).strip().rstrip(_HEADER_TAIL).strip()
    return text[:_MAX_HEADER]
