"""JavaScript and TypeScript functions defined by assignment, and IIFE bodies.

ES5 and CommonJS code defines its methods and exports by assigning functions:
``X.prototype.m = function…`` (a method ``m`` of ``X``), ``X.s = …`` (a static method of
``X``), ``exports.f = …`` / ``module.exports.f = …`` (a function ``f``) and, in a constructor
function's body, ``this.m = function…`` (a method of that constructor). These hooks make
such statements units where the walker reads statements: at module level, in an IIFE's body
(``(function () { … })()``, whose statements are read as if at module level) and, for
``this.m``, in the body of the function that assigns them. Assignments deeper inside a
function body are plain code. Names carry their qualifier as ``X::m`` (the walker's
convention for a unit declared outside its type).
"""

from __future__ import annotations

from tree_sitter import Node

from indexer.chunker._spec import node_text

__all__ = ["FUNCTIONS", "assigned_name", "iife_body", "js_assignment", "this_member"]

#: JavaScript and TypeScript expressions that make a function.
FUNCTIONS = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
_EXPORTS = (("module", "exports"), ("exports",))
_INVOKE = frozenset({"call", "apply"})
_DECLARATIONS = frozenset({"lexical_declaration", "variable_declaration"})


def _member_path(node: Node | None) -> list[str] | None:
    """``a.b.c`` → ``["a", "b", "c"]`` (``this`` included); None for anything else."""
    parts: list[str] = []
    while node is not None and node.type == "member_expression":
        prop = node.child_by_field_name("property")
        if prop is None or prop.type != "property_identifier":
            return None
        parts.append(node_text(prop))
        node = node.child_by_field_name("object")
    if node is None or node.type not in ("identifier", "this"):
        return None
    parts.append(node_text(node))
    return parts[::-1]


def _assignment(node: Node) -> tuple[list[str], Node] | None:
    """An expression statement assigning a function to a member: its target path and node."""
    if node.type != "expression_statement" or node.named_child_count != 1:
        return None
    expression = node.named_children[0]
    if expression.type != "assignment_expression":
        return None
    right = expression.child_by_field_name("right")
    if right is None or right.type not in FUNCTIONS:
        return None
    path = _member_path(expression.child_by_field_name("left"))
    return (path, expression) if path is not None and len(path) > 1 else None


def _target(path: list[str], right: Node | None) -> tuple[str, tuple[str, ...]] | None:
    """The node type and qualified name an assignment defines (``X.prototype.m`` → method
    ``X::m``, ``exports.f`` → function ``f``, ``module.exports = function f…`` → function
    ``f``), or None (an anonymous function assigned to ``module.exports``)."""
    if path[0] == "this":
        return ("method", (path[-1],)) if len(path) == 2 else None
    if tuple(path) in _EXPORTS:
        named = right.child_by_field_name("name") if right is not None else None
        return ("function", (node_text(named),)) if named is not None else None
    *owner, name = path
    for prefix in _EXPORTS:
        if tuple(owner[: len(prefix)]) == prefix:
            owner = owner[len(prefix) :]
            break
    owner = [part for part in owner if part != "prototype"]
    return ("method" if owner else "function"), (*owner, name)


def js_assignment(node: Node) -> tuple[str, Node] | None:
    """``X.prototype.m = function…`` and ``X.s = …`` are methods of ``X``; ``exports.f = …``
    is a function ``f``; ``this.m = …`` is left to the function that assigns it."""
    found = _assignment(node)
    if found is None or found[0][0] == "this":
        return None
    target = _target(found[0], found[1].child_by_field_name("right"))
    return (target[0], found[1]) if target is not None else None


def this_member(node: Node) -> tuple[str, Node] | None:
    """``this.m = function…`` in a constructor function's body: a method of that function."""
    found = _assignment(node)
    if found is None or found[0][0] != "this" or len(found[0]) != 2:
        return None
    return "method", found[1]


def assigned_name(node: Node) -> str:
    """The qualified name an assignment defines: ``X.prototype.m`` → ``X::m``, ``this.m`` → ``m``."""
    path = _member_path(node.child_by_field_name("left"))
    target = _target(path, node.child_by_field_name("right")) if path and len(path) > 1 else None
    return "::".join(target[1]) if target is not None else ""


def _callee(expression: Node | None) -> Node | None:
    """The function an IIFE calls: ``(function () {…})()``, ``!function () {…}()``,
    ``(function () {…}).call(this)``."""
    for _ in range(4):
        if expression is None:
            return None
        if expression.type == "parenthesized_expression" and expression.named_child_count == 1:
            expression = expression.named_children[0]
        elif expression.type == "unary_expression":
            expression = expression.child_by_field_name("argument")
        else:
            break
    if expression is None or expression.type != "call_expression":
        return None
    callee = expression.child_by_field_name("function")
    if callee is not None and callee.type == "member_expression":
        prop = callee.child_by_field_name("property")
        callee = callee.child_by_field_name("object") if node_text(prop) in _INVOKE else None
    while callee is not None and callee.type == "parenthesized_expression" and callee.named_child_count == 1:
        callee = callee.named_children[0]
    return callee if callee is not None and callee.type in FUNCTIONS else None


def iife_body(node: Node) -> Node | None:
    """The body of a function called where it is written, as a statement
    (``(function () {…})();``) or as a variable's value (``var X = (function () {…})();``)."""
    expression: Node | None = None
    if node.type == "expression_statement" and node.named_child_count == 1:
        expression = node.named_children[0]
    elif node.type in _DECLARATIONS:
        declarators = [c for c in node.named_children if c.type == "variable_declarator"]
        if len(declarators) == 1:
            expression = declarators[0].child_by_field_name("value")
    callee = _callee(expression)
    body = callee.child_by_field_name("body") if callee is not None else None
    return body if body is not None and body.type == "statement_block" else None
