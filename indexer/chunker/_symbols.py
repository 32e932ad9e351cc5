"""Definitions and references of chunks, from one query run over the whole tree.

One query per language captures identifier-like nodes as ``@id`` and declared names
(functions, classes, parameters, locals, fields) as ``@def``; each chunk takes the
captures inside its byte range.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from tree_sitter import Node, QueryCursor, Tree

from indexer.chunker._grammar import compile_query, get_language, has_node_kind
from indexer.chunker._spec import LanguageSpec

__all__ = ["Symbols"]

_IDENTIFIER = re.compile(r"[^\W\d]\w*|\$\w+|@{1,2}\w+")


def _query_source(spec: LanguageSpec) -> str:
    language = get_language(spec.name)
    kinds = [k for k in spec.ident_kinds if language is not None and has_node_kind(language, k)]
    ids = f"[{' '.join(f'({k})' for k in kinds)}] @id" if kinds else ""
    return f"{ids}\n{spec.def_patterns}"


def _positions(nodes: list[Node]) -> tuple[list[int], list[bytes]]:
    starts = [n.start_byte for n in nodes]
    texts = [n.text or b"" for n in nodes]
    if starts != sorted(starts):
        order = sorted(range(len(starts)), key=starts.__getitem__)
        starts, texts = [starts[i] for i in order], [texts[i] for i in order]
    return starts, texts


class Symbols:
    """Identifier captures of one tree, sliced per chunk."""

    __slots__ = ("_def_starts", "_def_texts", "_id_starts", "_id_texts", "_stop")

    def __init__(self, tree: Tree | None, spec: LanguageSpec | None) -> None:
        self._id_starts: list[int] = []
        self._id_texts: list[bytes] = []
        self._def_starts: list[int] = []
        self._def_texts: list[bytes] = []
        self._stop: frozenset[str] = spec.stop_words if spec is not None else frozenset()
        if tree is None or spec is None:
            return
        query = compile_query(spec.name, _query_source(spec))
        if query is None:
            return
        captures = QueryCursor(query).captures(tree.root_node)
        self._id_starts, self._id_texts = _positions(captures.get("id", []))
        self._def_starts, self._def_texts = _positions(captures.get("def", []))

    def lookup(
        self, start: int, end: int, own: tuple[str, ...], cap: int
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """``(definitions, references)`` of the byte range ``[start, end)``."""
        stop = self._stop
        definitions = dict.fromkeys(n for n in own if _IDENTIFIER.fullmatch(n) and n not in stop)
        lo, hi = bisect_left(self._def_starts, start), bisect_left(self._def_starts, end)
        for raw in dict.fromkeys(self._def_texts[lo:hi]):
            text = raw.decode("utf-8", errors="replace")
            if text not in stop:
                definitions[text] = None
        references: dict[str, None] = {}
        lo, hi = bisect_left(self._id_starts, start), bisect_left(self._id_starts, end)
        stop = self._stop
        for raw in dict.fromkeys(self._id_texts[lo:hi]):
            text = raw.decode("utf-8", errors="replace")
            if len(text) > 1 and text not in definitions and text not in stop:
                references[text] = None
                if len(references) >= cap:
                    break
        return tuple(definitions), tuple(references)

    def defined_in(self, start: int, end: int) -> set[str]:
        """Names declared (``@def``) in the byte range ``[start, end)``."""
        lo, hi = bisect_left(self._def_starts, start), bisect_left(self._def_starts, end)
        return {raw.decode("utf-8", errors="replace") for raw in self._def_texts[lo:hi]}

    def uses(self) -> list[tuple[int, str]]:
        """``(start byte, name)`` of every identifier that is not a declared name itself,
        in file order (stop words and one-character names left out)."""
        declared = set(self._def_starts)
        out: list[tuple[int, str]] = []
        for start, raw in zip(self._id_starts, self._id_texts, strict=True):
            if start in declared or len(raw) < 2:
                continue
            text = raw.decode("utf-8", errors="replace")
            if text not in self._stop:
                out.append((start, text))
        return out
