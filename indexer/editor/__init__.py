"""Editor operations, by position and range as the Language Server Protocol counts them
(0-based lines, UTF-16 columns): lines of an indexed file with its hash (``read_text``)
and what is under a cursor (``symbol_at``).

A path is taken the same way everywhere (``indexer.locations``): relative to its
project's root, absolute inside a project's root, or a ``file://`` URI.
"""

from indexer.editor._at import symbol_at
from indexer.editor._json import symbol_at_json
from indexer.editor._model import ChunkAt, FileText, PositionQuery, SymbolAt, TextQuery
from indexer.editor._read import read_text

__all__ = [
    "ChunkAt",
    "FileText",
    "PositionQuery",
    "SymbolAt",
    "TextQuery",
    "read_text",
    "symbol_at",
    "symbol_at_json",
]
