"""Symbols: go to definition, find references and callers, from the symbol index.

Resolution is name-based, like ctags or zoekt's ``sym:``, not a language server: a name
has as many candidate definitions as units are named so, ranked by proximity to the file
it is read in (same file, same folder, imported by that file).
"""

from indexer.symbols._api import definitions_near, find_references, find_symbols, get_symbol
from indexer.symbols._json import detail_json, list_json, references_json, symbol_json
from indexer.symbols._model import (
    MATCHES,
    PROXIMITIES,
    Caller,
    RankedSymbol,
    ReferenceQuery,
    References,
    ReferenceSite,
    SymbolDetail,
    SymbolList,
    SymbolQuery,
)

__all__ = [
    "MATCHES",
    "PROXIMITIES",
    "Caller",
    "RankedSymbol",
    "ReferenceQuery",
    "ReferenceSite",
    "References",
    "SymbolDetail",
    "SymbolList",
    "SymbolQuery",
    "definitions_near",
    "detail_json",
    "find_references",
    "find_symbols",
    "get_symbol",
    "list_json",
    "references_json",
    "symbol_json",
]
