"""Ranking candidates: by proximity to the file a name is read in, by how exactly the name
matches, and fuzzy name matching.

Name-based, like ctags: a candidate is near when it is in the same file, the same folder
(package or module), or in a file that the reading file's import lines name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePosixPath

from indexer.models import Symbol

__all__ = ["Proximity", "fuzzy_names", "kind_rank"]

#: Lines that import something: ``import``/``from``/``use``/``using``/``#include``/``require``…
_IMPORT = re.compile(
    r"^\s*(?:import|from|use|using|require|require_once|include|include_once|#\s*include|"
    r"extern\s+crate|mod|source)\b.*$|^.*\b(?:require|import)\s*\(.*$|^\s*}\s*from\s.*$",
    re.MULTILINE,
)
#: Go's ``import ( … )`` blocks.
_IMPORT_BLOCK = re.compile(r"^\s*import\s*\(([^)]*)\)", re.MULTILINE)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Node types ranked first among equally near candidates: what "go to definition" wants.
_KINDS = ("class", "struct", "interface", "trait", "enum", "type", "function", "method", "constructor",
          "impl", "module", "namespace", "macro", "test", "constant", "variable")  # fmt: skip
_FUZZY_MAX = 200


def kind_rank(kind: str) -> int:
    """Position of a node type in the preferred order (unknown ones last)."""
    return _KINDS.index(kind) if kind in _KINDS else len(_KINDS)


_PACKAGE_FILES = frozenset({"__init__", "index", "mod", "lib", "main"})


def _module_word(path: str) -> str:
    """The word an import names a file by: its stem (``cart`` of ``shop/cart.py``,
    ``Ledger`` of ``Ledger.java``), or its folder's name for a package file (``__init__.py``,
    ``index.js``, ``mod.rs``) and for Go, which imports folders."""
    pure = PurePosixPath(path)
    if (pure.stem in _PACKAGE_FILES or pure.suffix == ".go") and pure.parent.name:
        return pure.parent.name
    return pure.stem


class Proximity:
    """How near candidates are to one file (the one a name is read in)."""

    def __init__(self, from_path: str | None, from_text: str | None) -> None:
        self.from_path = from_path
        self.folder = str(PurePosixPath(from_path).parent) if from_path else None
        text = from_text or ""
        lines = [*_IMPORT.findall(text), *_IMPORT_BLOCK.findall(text)]
        self.imported = {w for line in lines for w in _WORD.findall(line)}
        #: file path → its proximity (a name's sites crowd into few files)
        self._known: dict[str, str] = {}

    def of(self, file_path: str) -> str:
        """``same_file``, ``same_module``, ``imported`` or ``elsewhere``."""
        known = self._known.get(file_path)
        if known is None:
            known = self._known[file_path] = self._of(file_path)
        return known

    def _of(self, file_path: str) -> str:
        if self.from_path is None:
            return "elsewhere"
        if file_path == self.from_path:
            return "same_file"
        if str(PurePosixPath(file_path).parent) == self.folder:
            return "same_module"
        if _module_word(file_path) in self.imported:
            return "imported"
        return "elsewhere"

    def key(self, symbol: Symbol, name: str) -> tuple[int, int, int, int, str, int]:
        """Sort key: nearer, exact name, preferred kind, shorter path, then path and line."""
        order = ("same_file", "same_module", "imported", "elsewhere")
        return (
            order.index(self.of(symbol.file_path)),
            0 if symbol.name == name else 1,
            kind_rank(symbol.kind),
            symbol.file_path.count("/"),
            symbol.file_path,
            symbol.start_line,
        )


def _squash(text: str) -> str:
    return text.replace("_", "").replace("-", "").lower()


def _fuzzy_score(query: str, name: str) -> tuple[int, int] | None:
    """(tier, spread) of ``name`` for ``query`` (both squashed); None when it does not match.
    Tiers: equal, prefix, substring, the query's letters in order."""
    if name == query:
        return (0, 0)
    if name.startswith(query):
        return (1, len(name) - len(query))
    found = name.find(query)
    if found >= 0:
        return (2, found)
    position, first = -1, -1
    for ch in query:
        position = name.find(ch, position + 1)
        if position < 0:
            return None
        first = position if first < 0 else first
    return (3, position - first - len(query))


def fuzzy_names(query: str, names: Iterable[str], limit: int = _FUZZY_MAX) -> list[str]:
    """Names matching ``query`` fuzzily (case and ``_`` ignored), best first."""
    wanted = _squash(query)
    if not wanted:
        return []
    scored = []
    for name in names:
        score = _fuzzy_score(wanted, _squash(name))
        if score is not None:
            scored.append((score, len(name), name))
    scored.sort()
    return [name for _, _, name in scored[:limit]]
