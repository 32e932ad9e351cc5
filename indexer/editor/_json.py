"""The editor answers as JSON-ready dicts: the shape the HTTP API sends (a candidate
definition is one flat object, as the symbol routes give it)."""

from __future__ import annotations

from typing import Any

import msgspec

from indexer.editor._model import SymbolAt
from indexer.symbols import symbol_json

__all__ = ["symbol_at_json"]


def symbol_at_json(found: SymbolAt) -> dict[str, Any]:
    """``symbol_at``'s answer."""
    return {
        **msgspec.to_builtins(found),
        "definitions": [symbol_json(r) for r in found.definitions],
        "enclosing": symbol_json(found.enclosing) if found.enclosing is not None else None,
    }
