"""``chunk_file``: one file's bytes in, ordered chunks out, never an exception.

Byte rule: ``start_byte``/``end_byte`` index the original bytes, and a chunk's
``content`` is always ``data[start_byte:end_byte].decode("utf-8", errors="replace")``.
Invalid UTF-8 therefore keeps exact offsets: only the chunk text shows U+FFFD, and the
file gets a warning. ``chunk_hash`` is blake3 of ``content`` encoded as UTF-8. Chunks
start at a line start (with its indentation) unless a line longer than
``max_line_bytes`` had to be cut; they never end with a newline; every non-blank line
(bytes other than ASCII whitespace) lies within some chunk's ``start_line..end_line``.

Binary files (a NUL byte in the first 8 KiB, or mostly control bytes and invalid UTF-8)
are refused with a ``skipped_reason``. Empty and whitespace-only files give no chunks.
``used_fallback`` is set when a language with semantic chunking had to be cut into line
windows instead (no grammar, minified, or syntax errors over most of the file).
"""

from __future__ import annotations

import re

from blake3 import blake3
from tree_sitter import QueryCursor, Tree

from indexer.chunker._detect import detect_language
from indexer.chunker._engine import Walker
from indexer.chunker._fallback import is_minified, window_pieces
from indexer.chunker._grammar import compile_query, get_parser
from indexer.chunker._languages import spec_for
from indexer.chunker._markdown import markdown_pieces
from indexer.chunker._merge import ensure_coverage, merge_small
from indexer.chunker._sites import symbol_sites
from indexer.chunker._source import Piece, Source, UnitDef
from indexer.chunker._symbols import Symbols
from indexer.config import ChunkerConfig
from indexer.models import Chunk, ChunkedFile

__all__ = ["CHUNKER_VERSION", "chunk_file"]

#: The version of what ``chunk_file`` makes of the same bytes: bumped when chunks or symbols
#: change (the store re-chunks files a different version cut). 2: every unit its own chunk,
#: unit lines and signatures, symbol sites. 3: JavaScript/TypeScript functions defined by
#: assignment (``X.prototype.m = function…``, ``exports.f = …``, ``this.m = …`` in a
#: constructor, IIFE bodies) are units.
CHUNKER_VERSION = 3

_SNIFF_BYTES = 8192
_CONTROL = re.compile(rb"[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f]")
_TEST_PATH = re.compile(
    r"(^|/)(tests?|spec|__tests__)/|(^|/)test_[^/]*$|_test\.\w+$|\.(test|spec)\.\w+$|Tests?\.\w+$"
)
_ERROR_SHARE = 0.5


def _binary_reason(data: bytes) -> str | None:
    head = data[:_SNIFF_BYTES]
    if b"\x00" in head:
        return "binary file (NUL bytes)"
    if not head:
        return None
    replaced = head.decode("utf-8", errors="replace").count("\ufffd")
    if (len(_CONTROL.findall(head)) + replaced) * 10 > len(head) * 3:
        return "binary file (mostly non-text bytes)"
    return None


def _utf8_warning(data: bytes) -> str | None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"invalid UTF-8 at byte {exc.start}: chunk text shows U+FFFD, byte offsets are exact"
    return None


def _error_share(tree: Tree, language: str, size: int) -> float:
    query = compile_query(language, "(ERROR) @error")
    if query is None or size == 0:
        return 0.0
    covered, reach = 0, 0
    spans = sorted(
        (n.start_byte, n.end_byte) for n in QueryCursor(query).captures(tree.root_node).get("error", [])
    )
    for first, end in spans:
        begin = max(first, reach)
        if end > begin:
            covered += end - begin
            reach = end
    return covered / size


def _semantic(
    path: str, source: Source, language: str, config: ChunkerConfig, warnings: list[str]
) -> tuple[list[Piece], Symbols | None, list[UnitDef]]:
    """Pieces from the syntax tree and its units, or ``([], None, [])`` when line windows
    must be used."""
    spec, parser = spec_for(language), get_parser(language)
    if spec is None or parser is None:
        warnings.append(f"no grammar for {language}: line windows used")
        return [], None, []
    if is_minified(source, config):
        warnings.append("minified or long-line file: line windows used")
        return [], None, []
    tree = parser.parse(source.data)
    walker = Walker(source, spec, config, _TEST_PATH.search(path) is not None)
    pieces = merge_small(walker.walk(tree.root_node), walker.groups, walker.tokens, config)
    if tree.root_node.has_error:
        share = _error_share(tree, language, source.size)
        if share > _ERROR_SHARE and walker.units == 0:
            warnings.append(f"syntax errors cover {share:.0%} of the file: line windows used")
            return [], None, []
        warnings.append(f"syntax errors over {share:.0%} of the file: code around them is chunked as blocks")
    return pieces, Symbols(tree, spec), walker.defs


def _to_chunks(
    source: Source, pieces: list[Piece], language: str, symbols: Symbols | None, cap: int
) -> tuple[Chunk, ...]:
    chunks: list[Chunk] = []
    for index, piece in enumerate(pieces):
        start, end = piece.start_byte, piece.end_byte
        content = source.text(start, end)
        own = (piece.name, *piece.extra_defs) if piece.name else piece.extra_defs
        definitions, references = symbols.lookup(start, end, own, cap) if symbols else (own, ())
        first, last = source.line_of(start), source.line_of(max(start, end - 1))
        unit_first = piece.unit_start if piece.unit_start >= 0 else first
        unit_last = piece.unit_end if piece.unit_end >= 0 else last
        chunks.append(
            Chunk(
                chunk_index=index,
                content=content,
                chunk_hash=blake3(content.encode("utf-8")).hexdigest(),
                start_byte=start,
                end_byte=end,
                start_line=first + 1,
                end_line=last + 1,
                language=language,
                node_type=piece.node_type,
                node_name=piece.name,
                parent_context=piece.parent_context,
                scope_path=piece.scope,
                definitions=definitions,
                references=references,
                unit_start_line=min(unit_first, first) + 1,
                unit_end_line=max(unit_last, last) + 1,
                signature=piece.signature,
            )
        )
    return tuple(chunks)


def _chunk(path: str, data: bytes, config: ChunkerConfig, language: str | None) -> ChunkedFile:
    language = language or detect_language(path, data[:_SNIFF_BYTES])
    reason = _binary_reason(data)
    if reason is not None:
        return ChunkedFile(path=path, language=language, chunks=(), skipped_reason=reason)
    if not data.strip():
        return ChunkedFile(path=path, language=language, chunks=())
    warnings = [w for w in (_utf8_warning(data),) if w]
    source = Source(data)
    symbols: Symbols | None = None
    defs: list[UnitDef] = []
    fallback = False
    if language == "markdown":
        pieces = markdown_pieces(source, config)
    elif spec_for(language) is not None:
        pieces, symbols, defs = _semantic(path, source, language, config, warnings)
        fallback = symbols is None
        if fallback:
            pieces = window_pieces(source, config)
    else:
        pieces = window_pieces(source, config)
    pieces = ensure_coverage(source, pieces, config)
    chunks = _to_chunks(source, pieces, language, symbols, config.max_references)
    sites = symbol_sites(source, defs, symbols, chunks)
    return ChunkedFile(path, language, chunks, None, fallback, tuple(warnings), sites)


def chunk_file(
    path: str, data: bytes, config: ChunkerConfig | None = None, language: str | None = None
) -> ChunkedFile:
    """Cut one file into ordered chunks; never raises (see the module docstring for the rules)."""
    config = config or ChunkerConfig()
    try:
        return _chunk(path, data, config, language)
    except Exception as exc:  # the contract: a bad file must never stop an indexing run
        return _last_resort(path, data, config, language, exc)


def _last_resort(
    path: str, data: bytes, config: ChunkerConfig, language: str | None, exc: Exception
) -> ChunkedFile:
    warning = f"chunker error ({type(exc).__name__}: {exc}): line windows used"
    name = language or "text"
    try:
        source = Source(data)
        pieces = ensure_coverage(source, window_pieces(source, config), config)
        chunks = _to_chunks(source, pieces, name, None, config.max_references)
        return ChunkedFile(path, name, chunks, None, True, (warning,))
    except Exception as inner:  # pragma: no cover - only if the fallback itself breaks
        return ChunkedFile(
            path, name, (), f"chunker failed: {type(inner).__name__}: {inner}", True, (warning,)
        )
