"""The tree walk: semantic units, the blocks between them, and splitting what is too big.

Units are whole lines: from the first comment, decorator or attribute that belongs to
them (contiguous, no blank line between) to their last line. Lines between units become
``block`` pieces at the top level, or parts of the enclosing declaration inside a
container. A container (class, impl, trait, namespace, module…) with member units is
always cut into its members, whatever its size: its own pieces (the first one, the
skeleton, holds the header and fields and lists every member in ``extra_defs``) never
swallow a member. Any other unit over the token limit is cut at statement boundaries,
each part keeping the unit's metadata and its signature. A namespace declared without a
body (C# ``namespace A;``, PHP ``namespace A;``) holds the declarations after it. A host (a
JavaScript function whose body assigns ``this.m = function…``) is cut the same way, with
only those assignments as its members; an IIFE's body is read as if written around it.

Every unit is also recorded in ``defs`` (a ``UnitDef``): the symbol index's definitions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from tree_sitter import Node

from indexer.chunker._source import Piece, Source, UnitDef
from indexer.chunker._spans import Span, line_spans, merge_spans
from indexer.chunker._spec import LanguageSpec, body_of, find_name, header_end, header_text, receiver_type
from indexer.chunker._units import Unit, body_statements, find_units, statements
from indexer.config import ChunkerConfig

__all__ = ["Walker"]

_CLASS_LIKE = frozenset({"class", "struct", "enum", "interface", "trait", "impl"})
_CLOSER = re.compile(rb"[\s})\];,]*(?:end|fi|done|esac)?[\s;]*\Z")
_TEST_MARK = re.compile(
    rb"#\[(?:\w+::)*test\]|@(?:Parameterized)?Test\b|@pytest\.mark|\[(?:Test|Fact|Theory|TestMethod|TestCase)\b"
)
_TEST_NAME = re.compile(r"test_|test[A-Z0-9]|Test[A-Z0-9_]|test\Z")
_MAX_DEPTH = 4


@dataclass(frozen=True, slots=True)
class _Owner:
    """A split declaration whose members are being emitted."""

    node_type: str
    name: str
    scope: tuple[str, ...]
    header: str
    parent_context: str
    member_names: tuple[str, ...]
    first: int = -1
    """The container's first and last lines (0-based): the unit its own pieces belong to."""
    last: int = -1
    signature: str = ""
    """The container's signature (its header as written, ``export`` included)."""
    hosting: bool = False
    """A function holding member units (``this.m = function…``): only those are its members."""


class Walker:
    """Walks one syntax tree and collects ``Piece``s in file order."""

    def __init__(self, source: Source, spec: LanguageSpec, config: ChunkerConfig, test_file: bool) -> None:
        self.source = source
        self.spec = spec
        self.limit = config.max_chunk_tokens
        self.max_line_bytes = config.max_line_bytes
        self.test_file = test_file
        self.pieces: list[Piece] = []
        self.groups: list[int] = []
        self.tokens: list[int] = []
        self.units = 0
        self.defs: list[UnitDef] = []
        self._group = 0

    def walk(self, root: Node) -> list[Piece]:
        """Pieces for the whole tree."""
        last = self.source.line_count - 1
        self._members(self._siblings(root.named_children), (0, last), header_row=-1, owner=None, scope=())
        return self.pieces

    def _siblings(self, nodes: list[Node]) -> list[Node]:
        out: list[Node] = []
        inline = self.spec.inline_body
        for node in nodes:
            body = inline(node) if inline is not None else None
            if body is not None:
                out.extend(self._siblings(body.named_children))
            elif node.type in self.spec.transparent or node.type == "ERROR":
                out.extend(self._siblings(node.named_children))
            else:
                out.append(node)
        return out

    def _members(
        self,
        nodes: list[Node],
        lines: tuple[int, int],
        *,
        header_row: int,
        owner: _Owner | None,
        scope: tuple[str, ...],
    ) -> None:
        """Emit the units among ``nodes`` and the gaps between them, over ``lines`` (inclusive)."""
        first, last = lines
        self._group += 1
        group = self._group
        units = find_units(nodes, header_row, self.spec, owner is not None and owner.hosting)
        if owner is not None and not owner.member_names:
            names = tuple(n for u in units if (n := find_name(u.decl, self.spec)))
            owner = replace(owner, member_names=names)
        cursor = first
        floor = header_row + 1
        skeleton = owner.member_names if owner is not None else ()
        for unit in units:
            start = max(unit.first_line, cursor, floor)
            if start > unit.last_line or unit.last_line > last:
                if unit.last_line <= last:
                    self._record_inline(unit, owner, scope)
                continue
            self._gap((cursor, start - 1), nodes, owner=owner, scope=scope, where=(group, skeleton))
            skeleton = ()
            opened = self._unit(unit, start, owner, scope, group)
            cursor = unit.last_line + 1
            if opened is not None and owner is None:  # ``namespace A;``: the rest of the file is in it
                owner = self._open_namespace(opened, last)
                scope = owner.scope
        self._gap((cursor, last), nodes, owner=owner, scope=scope, where=(group, skeleton))

    def _open_namespace(self, owner: _Owner, last: int) -> _Owner:
        """A bodiless namespace's owner, reaching to ``last``; its definition and piece too."""
        owner = replace(owner, last=last)
        self.defs[-1] = replace(self.defs[-1], end=last, end_byte=self.source.line_end(last))
        self.pieces[-1] = replace(self.pieces[-1], unit_end=last)
        return owner

    def _add(self, piece: Piece, group: int, tokens: int) -> None:
        self.pieces.append(piece)
        self.groups.append(group)
        self.tokens.append(tokens)

    def _gap(
        self,
        lines: tuple[int, int],
        nodes: list[Node],
        *,
        owner: _Owner | None,
        scope: tuple[str, ...],
        where: tuple[int, tuple[str, ...]],
    ) -> None:
        first, last = lines
        group, skeleton = where
        if first > last:
            return
        start, end = self.source.span(first, last)
        if not self.source.has_text(start, end):
            return
        if self.pieces and _CLOSER.match(self.source.data, start, end):
            previous = self.pieces[-1]
            if previous.end_byte <= start:
                self.pieces[-1] = _extend(previous, end)
                return
        for span in self._split(first, last, nodes, 0):
            if owner is None:
                piece = Piece(span[0], span[1], "block", scope=scope)
            else:
                piece = Piece(
                    span[0],
                    span[1],
                    owner.node_type,
                    owner.name,
                    owner.parent_context,
                    owner.scope,
                    skeleton,
                    owner.first,
                    owner.last,
                    owner.signature,
                )
                skeleton = ()
            self._add(piece, group, span[2])

    def _unit(
        self, unit: Unit, start: int, owner: _Owner | None, scope: tuple[str, ...], group: int
    ) -> _Owner | None:
        """Emit one unit (whole, cut, or as a container of members); record its definition.

        Returns the owner of the declarations after it when it is a bodiless namespace."""
        spec = self.spec
        self.units += 1
        name, node_type, unit_scope, signature = self._describe(unit, owner, scope)
        parent = owner.header if owner is not None else self._outer_header(unit_scope[len(scope) : -1])
        self._record(unit, name, node_type, unit_scope, signature, start)
        begin, end = self.source.span(start, unit.last_line)
        tokens = self.source.tokens(begin, end)
        body = body_of(unit.decl, spec)
        hosting = unit.decl.type in spec.hosts and spec.host_member is not None
        if (unit.decl.type in spec.containers or hosting) and body is not None and body.named_child_count:
            members = self._siblings(self._member_nodes(unit.decl, body))
            header_row = self._header_row(unit.decl)
            held = find_units(members, header_row, spec, hosting)
            if held or (tokens > self.limit and not hosting):
                header = self._header(unit, signature)
                child = _Owner(
                    node_type, name, unit_scope, header, parent, (), start, unit.last_line, signature, hosting
                )
                self._members(
                    members, (start, unit.last_line), header_row=header_row, owner=child, scope=unit_scope
                )
                return None
        meta = (start, unit.last_line, signature)
        if tokens <= self.limit:
            self._add(Piece(begin, end, node_type, name, parent, unit_scope, (), *meta), group, tokens)
            if node_type == "namespace" and body is None and name:
                header = self._header(unit, signature)
                return _Owner(node_type, name, unit_scope, header, "", (), start, unit.last_line, signature)
            return None
        statements = body_statements(body) if body is not None else []
        for span in self._split(start, unit.last_line, statements, 0):
            piece = Piece(span[0], span[1], node_type, name, parent, unit_scope, (), *meta)
            self._add(piece, group, span[2])
        return None

    def _describe(
        self, unit: Unit, owner: _Owner | None, scope: tuple[str, ...]
    ) -> tuple[str, str, tuple[str, ...], str]:
        """A unit's name, node type, scope path and signature."""
        name = find_name(unit.decl, self.spec)
        prefix: tuple[str, ...] = ()
        node_type = unit.node_type
        if "::" in name and node_type in ("function", "method"):
            *qualifier, name = name.split("::")
            prefix = tuple(qualifier)
            if node_type == "function" and prefix and prefix[-1][:1].isupper():
                node_type = "method"
        receiver = receiver_type(unit.decl) if node_type == "method" else ""
        prefix = (receiver,) if receiver else prefix
        node_type = self._refine(unit, node_type, name, owner)
        unit_scope = (*scope, *prefix, name) if name else (*scope, *prefix)
        # ``export function f``, ``type T struct``: the wrapper's line reads better; a statement
        # around a function assigned (``X.prototype.m = function…``) only adds its ``;``
        node, decl = unit.node, unit.decl
        same_line = node.start_point.row == decl.start_point.row
        adds = node.start_byte < decl.start_byte or body_of(decl, self.spec) is None
        head = node if same_line and adds and node.type not in self.spec.transparent else decl
        return name, node_type, unit_scope, header_text(head, self.spec, self.source.data)

    def _outer_header(self, qualifier: tuple[str, ...]) -> str:
        """The parent context of a unit declared outside its type (a Go method, C++'s
        ``void Box::draw()``): that type's signature when this file declares it, else its name."""
        if not qualifier:
            return ""
        found = next((d for d in reversed(self.defs) if d.scope[-len(qualifier) :] == qualifier), None)
        return found.signature if found is not None else self.spec.qualifier_joiner.join(qualifier)

    def _header(self, unit: Unit, signature: str) -> str:
        """What a container's members show as their parent context: its signature, but
        without what a wrapper adds (``export``, decorators, ``template <…>``)."""
        if unit.node is not unit.decl and unit.node.type in self.spec.wrappers:
            return header_text(unit.decl, self.spec, self.source.data)
        return signature

    def _record_inline(self, unit: Unit, owner: _Owner | None, scope: tuple[str, ...]) -> None:
        """Record a unit that shares its lines with the one before (no piece of its own)."""
        name, node_type, unit_scope, signature = self._describe(unit, owner, scope)
        self._record(unit, name, node_type, unit_scope, signature, unit.first_line)

    def _record(
        self, unit: Unit, name: str, node_type: str, scope: tuple[str, ...], signature: str, start: int
    ) -> None:
        """Remember a named unit as a definition (from its declaration line to its end)."""
        if not name:
            return
        first = max(start, int(unit.decl.start_point.row))
        first = min(first, unit.last_line)
        self.defs.append(
            UnitDef(
                name,
                node_type,
                scope,
                signature,
                first,
                unit.last_line,
                self.source.line_start(first),
                self.source.line_end(unit.last_line),
            )
        )

    def _member_nodes(self, decl: Node, body: Node) -> list[Node]:
        members = list(body.named_children)
        comments = [c for c in decl.named_children if c.type in self.spec.comments]
        if comments:
            members = sorted(members + comments, key=lambda n: n.start_byte)
        return members

    def _header_row(self, decl: Node) -> int:
        data = self.source.data
        pos = (header_end(decl, self.spec) or decl.end_byte) - 1
        while pos > decl.start_byte and data[pos] in b" \t\r\n":
            pos -= 1
        return self.source.line_of(pos)

    def _refine(self, unit: Unit, node_type: str, name: str, owner: _Owner | None) -> str:
        in_class = owner is not None and owner.node_type in _CLASS_LIKE
        if node_type == "function" and in_class:
            node_type = "method"
        if node_type == "method" and owner is not None and name in (*self.spec.constructors, owner.name):
            node_type = "constructor"
        if node_type in ("function", "method") and self._is_test(unit, name):
            node_type = "test"
        return node_type

    def _is_test(self, unit: Unit, name: str) -> bool:
        if self.test_file and _TEST_NAME.match(name):
            return True
        start, _ = self.source.span(unit.first_line, unit.first_line)
        name_node = unit.decl.child_by_field_name("name")
        end = name_node.start_byte if name_node is not None else unit.decl.start_byte + 1
        return _TEST_MARK.search(self.source.data, start, end) is not None

    def _split(self, first: int, last: int, nodes: list[Node], depth: int) -> list[Span]:
        """Cut lines ``first..last`` at the starts of ``nodes``; recurse into big statements."""
        source = self.source
        whole_start, whole_end = source.span(first, last)
        whole = source.tokens(whole_start, whole_end)
        if whole <= self.limit:
            return [(whole_start, whole_end, whole)]
        cuts = sorted({r for n in nodes if first < (r := int(n.start_point.row)) <= last})
        bounds = [first, *cuts, last + 1]
        spans: list[Span] = []
        for index in range(len(bounds) - 1):
            a, b = bounds[index], bounds[index + 1] - 1
            start, end = source.span(a, b)
            tokens = source.tokens(start, end)
            if tokens <= self.limit:
                spans.append((start, end, tokens))
                continue
            inner = [c for n in nodes if a <= n.start_point.row <= b for c in statements(n)]
            if depth < _MAX_DEPTH and a < b and any(a < c.start_point.row <= b for c in inner):
                spans.extend(self._split(a, b, inner, depth + 1))
            else:
                spans.extend(line_spans(source, a, b, self.max_line_bytes, self.limit))
        return merge_spans(spans, self.limit)


def _extend(piece: Piece, end: int) -> Piece:
    return replace(piece, end_byte=end)
