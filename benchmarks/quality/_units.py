"""Documented units and doc comments of one source file, found with tree-sitter.

A *unit* is a function, method, class or type. Its *doc* is, per language: Python the
docstring (first statement of the body); Go the ``//`` or ``/* */`` comments ending on
the line before the declaration; Rust the ``///``/``/** */`` comments before the item
(attributes may sit between); JavaScript and Java the ``/** */`` comment right before it.
``scan_source`` also returns the byte ranges of *every* doc comment of the file (module
docstrings, field docs, …) so that they can all be blanked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node, Parser

__all__ = ["LANGUAGES", "Definition", "Scan", "Unit", "iter_definitions", "parse_errors", "scan_source"]

#: Languages whose doc comments the benchmark understands.
LANGUAGES = ("go", "java", "javascript", "python", "rust")

_COMMENTS = frozenset({"comment", "line_comment", "block_comment"})
_JS_FUNCTIONS = frozenset(
    {"function_expression", "function", "arrow_function", "generator_function", "class"}
)
_UNITS: dict[str, frozenset[str]] = {
    "python": frozenset({"function_definition", "class_definition"}),
    "go": frozenset({"function_declaration", "method_declaration", "type_spec"}),
    "rust": frozenset(
        {
            "function_item",
            "function_signature_item",
            "struct_item",
            "enum_item",
            "union_item",
            "trait_item",
            "type_item",
            "macro_definition",
        }
    ),
    "javascript": frozenset(
        {
            "function_declaration",
            "generator_function_declaration",
            "class_declaration",
            "method_definition",
            "lexical_declaration",
            "variable_declaration",
            "expression_statement",
        }
    ),
    "java": frozenset(
        {
            "method_declaration",
            "constructor_declaration",
            "compact_constructor_declaration",
            "class_declaration",
            "interface_declaration",
            "enum_declaration",
            "record_declaration",
            "annotation_type_declaration",
        }
    ),
}
#: Go declarations whose leading comments are doc comments (blanked, not all queried).
_GO_DOCUMENTED = frozenset(
    {
        "package_clause",
        "function_declaration",
        "method_declaration",
        "type_declaration",
        "type_spec",
        "type_alias",
        "const_declaration",
        "const_spec",
        "var_declaration",
        "var_spec",
        "field_declaration",
        "method_spec",
        "method_elem",
    }
)
_CONSTRUCTOR_NAMES = {"python": re.compile(r"__(init|new)__"), "go": re.compile(r"New([A-Z]\w*)?")}
_TEST_NAMES = re.compile(r"(test|Test|Benchmark|Example|Fuzz)(_|[A-Z]|$)\w*")


@dataclass(frozen=True, slots=True)
class Unit:
    """A documented unit of a file."""

    name: str
    kind: str
    start_line: int
    """First line of the unit itself (its doc comment excluded), 1-based."""
    end_line: int
    doc: str
    """The doc comment or docstring as written (markers and quotes included)."""
    constructor: bool = False
    test: bool = False


@dataclass(frozen=True, slots=True)
class Scan:
    """What one file holds: its documented units and the byte ranges of all its doc comments."""

    units: tuple[Unit, ...]
    doc_ranges: tuple[tuple[int, int, str], ...]
    """(start byte, end byte, ``"docstring"`` or ``"comment"``), sorted, not overlapping."""


def _parser(language: str) -> Parser:
    import tree_sitter_language_pack as pack

    return Parser(pack.get_language(language))  # type: ignore[arg-type]


def parse_errors(language: str, data: bytes) -> bool:
    """True when tree-sitter finds a syntax error in ``data``."""
    return _parser(language).parse(data).root_node.has_error


def _walk(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.named_children))


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", errors="replace") if node is not None and node.text else ""


def _last_line(node: Node) -> int:
    """0-based last line holding text of ``node`` (Rust line comments end after their newline)."""
    row, column = node.end_point
    return row if column > 0 or row == node.start_point[0] else row - 1


def _is_doc(language: str, node: Node) -> bool:
    if node.type not in _COMMENTS:
        return False
    text = _text(node)
    if language == "go":
        return True
    if language == "rust":
        return bool(re.match(r"(///(?!/)|//!|/\*\*(?![*/])|/\*!)", text))
    return text.startswith("/**") and not text.startswith("/**/")


def _doc_run(language: str, anchor: Node) -> list[Node]:
    """The doc comment nodes right before ``anchor``, in source order."""
    run: list[Node] = []
    following = anchor
    sibling = anchor.prev_named_sibling
    while sibling is not None:
        if language == "rust" and sibling.type == "attribute_item":
            sibling = sibling.prev_named_sibling
            continue
        if not _is_doc(language, sibling):
            break
        if language == "go" and _last_line(sibling) < following.start_point[0] - 1:
            break
        if language == "rust" and _text(sibling).startswith(("//!", "/*!")):
            break
        run.append(sibling)
        following = sibling
        if language in ("java", "javascript"):
            break
        sibling = sibling.prev_named_sibling
    return run[::-1]


def _anchor(language: str, node: Node) -> Node:
    """The node a doc comment precedes: the export statement or single-spec type declaration."""
    parent = node.parent
    if parent is None:
        return node
    if language == "javascript" and parent.type == "export_statement":
        return parent
    single_spec = sum(1 for c in parent.named_children if c.type == "type_spec") == 1
    if language == "go" and node.type == "type_spec" and parent.type == "type_declaration" and single_spec:
        return parent
    return node


def _js_declared_name(node: Node) -> str | None:
    """``const name = function/arrow/class``: the name, else None."""
    declarators = [c for c in node.named_children if c.type == "variable_declarator"]
    value = declarators[0].child_by_field_name("value") if len(declarators) == 1 else None
    if value is None or value.type not in _JS_FUNCTIONS:
        return None
    return _text(declarators[0].child_by_field_name("name"))


def _js_assigned_name(node: Node) -> str | None:
    """``a.b.name = function …``: the name, else None."""
    expr = node.named_children[0] if node.named_children else None
    if expr is None or expr.type != "assignment_expression":
        return None
    right, left = expr.child_by_field_name("right"), expr.child_by_field_name("left")
    if right is None or right.type not in _JS_FUNCTIONS or left is None:
        return None
    return _text(left.child_by_field_name("property") if left.type == "member_expression" else left)


def _js_name(node: Node) -> str | None:
    """The name of a JS unit, or None when the node defines no function or class."""
    if node.type in ("lexical_declaration", "variable_declaration"):
        return _js_declared_name(node)
    if node.type == "expression_statement":
        return _js_assigned_name(node)
    return _text(node.child_by_field_name("name"))


def _in_rust_test(node: Node) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type == "mod_item" and _text(parent.child_by_field_name("name")) in ("test", "tests"):
            return True
        parent = parent.parent
    sibling = node.prev_named_sibling
    while sibling is not None and sibling.type in ("attribute_item", "line_comment", "block_comment"):
        if sibling.type == "attribute_item" and re.search(r"\btest\b", _text(sibling)):
            return True
        sibling = sibling.prev_named_sibling
    return False


def _is_constructor(language: str, node: Node, name: str) -> bool:
    if language == "java":
        return node.type in ("constructor_declaration", "compact_constructor_declaration")
    if language == "javascript":
        return node.type == "method_definition" and name == "constructor"
    if language == "rust":
        return node.type == "function_item" and name == "new"
    pattern = _CONSTRUCTOR_NAMES.get(language)
    return bool(pattern and pattern.fullmatch(name))


def _unit(language: str, node: Node, name: str, doc: str) -> Unit:
    test = bool(_TEST_NAMES.match(name)) or (language == "rust" and _in_rust_test(node))
    return Unit(
        name=name,
        kind=node.type,
        start_line=node.start_point[0] + 1,
        end_line=_last_line(node) + 1,
        doc=doc,
        constructor=_is_constructor(language, node, name),
        test=test,
    )


def _docstring(body: Node | None) -> Node | None:
    """The docstring node of a module or block (its first statement, when a string)."""
    if body is None:
        return None
    first = next((c for c in body.named_children if c.type != "comment"), None)
    if first is not None and first.type == "expression_statement" and first.named_child_count == 1:
        first = first.named_children[0]
    if first is not None and first.type in ("string", "concatenated_string"):
        return first
    return None


def _scan_python(root: Node) -> Scan:
    units: list[Unit] = []
    ranges: list[tuple[int, int, str]] = []
    module_doc = _docstring(root)
    if module_doc is not None:
        ranges.append((module_doc.start_byte, module_doc.end_byte, "docstring"))
    for node in _walk(root):
        if node.type not in _UNITS["python"]:
            continue
        doc = _docstring(node.child_by_field_name("body"))
        if doc is None:
            continue
        ranges.append((doc.start_byte, doc.end_byte, "docstring"))
        units.append(_unit("python", node, _text(node.child_by_field_name("name")), _text(doc)))
    return Scan(tuple(units), tuple(sorted(ranges)))


def _scan_comments(language: str, root: Node) -> Scan:
    units: list[Unit] = []
    ranges: set[tuple[int, int, str]] = set()
    unit_types = _UNITS[language]
    for node in _walk(root):
        if language != "go" and _is_doc(language, node):
            ranges.add((node.start_byte, node.end_byte, "comment"))
        if node.type not in unit_types and not (language == "go" and node.type in _GO_DOCUMENTED):
            continue
        run = _doc_run(language, _anchor(language, node))
        if language == "go":
            ranges.update((c.start_byte, c.end_byte, "comment") for c in run)
        if not run or node.type not in unit_types:
            continue
        name = _js_name(node) if language == "javascript" else _text(node.child_by_field_name("name"))
        if name:
            units.append(_unit(language, node, name, "\n".join(_text(c).rstrip("\r\n") for c in run)))
    return Scan(tuple(units), tuple(sorted(ranges)))


def scan_source(language: str, data: bytes) -> Scan:
    """The documented units and doc-comment ranges of a file in one of ``LANGUAGES``."""
    if language not in LANGUAGES:
        raise ValueError(f"no doc-comment rules for {language!r}")
    root = _parser(language).parse(data).root_node
    return _scan_python(root) if language == "python" else _scan_comments(language, root)


@dataclass(frozen=True, slots=True)
class Definition:
    """A named unit of a file, documented or not (the identifier query set's targets)."""

    name: str
    kind: str
    start_line: int
    end_line: int
    test: bool = False
    constructor: bool = False


def iter_definitions(language: str, data: bytes) -> Iterator[Definition]:
    """Every named function, method, class or type of a file in one of ``LANGUAGES``."""
    if language not in LANGUAGES:
        raise ValueError(f"no unit rules for {language!r}")
    unit_types = _UNITS[language]
    for node in _walk(_parser(language).parse(data).root_node):
        if node.type not in unit_types:
            continue
        name = _js_name(node) if language == "javascript" else _text(node.child_by_field_name("name"))
        if not name:
            continue
        unit = _unit(language, node, name, "")
        yield Definition(name, node.type, unit.start_line, unit.end_line, unit.test, unit.constructor)
