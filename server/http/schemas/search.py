"""HTTP types of search and of documents and chunks by id.

Field names mirror ``indexer`` dataclasses one for one, so the CLI prints the same
JSON whether it ran in-process or through a server. Converted from ``indexer.models``
and ``indexer.search`` results, never from storage rows.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec
from msgspec import Meta

from indexer.limits import MAX_NAMES, MAX_QUERY_CHARS, MAX_TEXT_CHARS
from indexer.roles import ROLES
from indexer.search import MAX_LIMIT
from indexer.search._options import MAX_OFFSET
from server.http.schemas._choices import Granularity, Mode
from server.http.schemas._fields import (
    NO_NUL,
    NOT_EMPTY,
    ChunkCount,
    ChunkId,
    ChunkIndex,
    ChunkLanguage,
    ChunkText,
    EndLine,
    FileId,
    FilePath,
    FileSize,
    Globs,
    LanguageName,
    Languages,
    NodeName,
    NodeType,
    NodeTypeName,
    PrimaryLanguage,
    ProjectId,
    ProjectName,
    RoleName,
    StartLine,
    Text,
)
from server.http.schemas._fields import describe as _d
from server.http.schemas._positions import FileUri, Matches

__all__ = [
    "ChunkHitOut",
    "ChunkOut",
    "ChunkSearchOut",
    "DocumentHitOut",
    "DocumentOut",
    "DocumentSearchOut",
    "FileGroupOut",
    "SearchRequest",
    "SearchResponseOut",
]

Names = Annotated[list[Text], Meta(max_length=MAX_NAMES)]
#: A glob on a unit's name or parent: not empty, without NUL.
NamePattern = Annotated[str, Meta(min_length=1, max_length=MAX_TEXT_CHARS, pattern=NOT_EMPTY)]
_ROLES_HELP = (
    "What the code is for: implementation, test, docs, example, config, changelog, generated, vendored, "
    "build (a chunk has its file's role, or test inside an inline test module)"
)
_ROLE_HELP = "The chunk's role: its file's (implementation, test, docs, example…), or test for an inline test"
_NODE_TYPES_HELP = (
    "Only these unit kinds: function, method, constructor, class, struct, enum, interface, trait, impl, "
    "module, namespace, type, constant, variable, macro, test, section, block, text"
)


class SearchRequest(msgspec.Struct, forbid_unknown_fields=True):
    """Hybrid search with metadata filters (the same options as the CLI and MCP)."""

    query: Annotated[
        str,
        _d(
            "Natural language or identifiers, e.g. 'parse http request' or 'parseRequest'; may be "
            "left out with has_definitions or has_references (then what they name is listed)"
        ),
        Meta(max_length=MAX_QUERY_CHARS, pattern=NO_NUL),
    ] = ""
    projects: Annotated[Names, _d("Project ids or names (default: all)")] = []
    granularity: Annotated[
        Granularity, _d("document (files with their best chunks) or chunk (chunks grouped by file)")
    ] = "document"
    mode: Annotated[Mode, _d("hybrid (vector + full text), semantic, or lexical")] = "hybrid"
    languages: Annotated[
        Annotated[list[LanguageName], Meta(max_length=MAX_NAMES)],
        _d("Only these languages, e.g. python, go"),
    ] = []
    path_include: Annotated[
        Globs,
        _d(
            "Path globs to include, relative to the project root, e.g. *.py or src/app.py "
            "(** spans folders); a glob without a slash matches file names; an absolute glob inside "
            "the project is made relative, outside it is a 400"
        ),
    ] = []
    path_exclude: Annotated[Globs, _d("Path globs to exclude, relative to the project root")] = []
    node_types: Annotated[
        Annotated[list[NodeTypeName], Meta(max_length=MAX_NAMES)], _d(_NODE_TYPES_HELP)
    ] = []
    node_name_pattern: Annotated[
        NamePattern | None,
        _d("Glob on the unit's name, case-sensitive (exact name = glob without wildcards)"),
    ] = None
    parent_context_pattern: Annotated[
        NamePattern | None, _d("Glob on the enclosing declaration, e.g. 'class Cart*'")
    ] = None
    scope_depth: Annotated[
        Annotated[list[Annotated[int, Meta(ge=0)]], Meta(min_length=2, max_length=2)] | None,
        _d("[min, max] length of the scope path (min > max is an empty range: nothing matches)"),
    ] = None
    has_definitions: Annotated[Names, _d("Chunk defines any of these names")] = []
    has_references: Annotated[Names, _d("Chunk references any of these names")] = []
    roles: Annotated[
        Annotated[list[RoleName], Meta(max_length=len(ROLES))],
        _d(_ROLES_HELP + "; only chunks of these roles"),
    ] = []
    exclude_roles: Annotated[
        Annotated[list[RoleName], Meta(max_length=len(ROLES))], _d("No chunk of these roles")
    ] = []
    file_limit: Annotated[
        Annotated[int, Meta(ge=1, le=MAX_LIMIT)], _d("Files returned (document granularity)")
    ] = 5
    chunks_per_file: Annotated[
        Annotated[int, Meta(ge=1, le=50)], _d("Chunks per file (document granularity)")
    ] = 3
    limit: Annotated[
        Annotated[int, Meta(ge=1, le=MAX_LIMIT)], _d("Chunks returned (chunk granularity), at most 100")
    ] = 10
    offset: Annotated[Annotated[int, Meta(ge=0, le=MAX_OFFSET)], _d("Results to skip (files or chunks)")] = 0


class ChunkHitOut(msgspec.Struct):
    """A ranked chunk."""

    id: ChunkId
    file_id: FileId
    file_path: FilePath
    project_id: ProjectId
    project: ProjectName
    chunk_index: ChunkIndex
    content: ChunkText
    start_line: StartLine
    end_line: EndLine
    language: ChunkLanguage
    node_type: Annotated[str, _d("Unit kind, e.g. function, class or section (see node_types)")]
    node_name: NodeName
    parent_context: Annotated[str, _d("Header of the enclosing declaration or heading ('' at top level)")]
    scope_path: Annotated[list[str], _d("Names of the enclosing units and this one, outermost first")]
    relevance_score: Annotated[float, _d("0-1, comparable across pages of one query")]
    role: Annotated[str, _d(_ROLE_HELP)]
    unit_start_line: Annotated[
        int, _d("First line of the unit this chunk is (a piece of): a long function split into pieces")
    ]
    unit_end_line: Annotated[int, _d("Last line of the unit")]
    uri: FileUri
    matches: Matches
    folded_pieces: Annotated[
        int, _d("Other pieces of the same unit that matched, folded into this hit (0: none)")
    ] = 0


class DocumentHitOut(msgspec.Struct):
    """A ranked file with its best chunks."""

    id: Annotated[str, _d("Document id of the file")]
    file_path: FilePath
    project_id: ProjectId
    project: ProjectName
    relevance_score: Annotated[float, _d("0-1, rank fusion of the file's chunk and whole-file rankings")]
    chunk_count: Annotated[int, _d("Chunks of the whole file")]
    languages: Languages
    primary_language: PrimaryLanguage
    chunks: Annotated[list[ChunkHitOut], _d("The file's best chunks (at most chunks_per_file)")]
    role: Annotated[str, _d("What the file is for: implementation, test, docs, example…")]
    uri: FileUri


class FileGroupOut(msgspec.Struct):
    """Chunk-granularity results of one file."""

    file_id: Annotated[str, _d("Document id of the file")]
    file_path: FilePath
    project_id: ProjectId
    project: ProjectName
    total_relevance: Annotated[float, _d("The file's best chunk score (groups follow their best chunks)")]
    chunks: Annotated[list[ChunkHitOut], _d("This page's chunks of the file, best first")]
    uri: FileUri


class _SearchPageOut(msgspec.Struct):
    """What both shapes of search results hold."""

    query: Annotated[str, _d("The query, as sent")]
    mode: Annotated[Mode, _d("hybrid, semantic or lexical")]
    offset: Annotated[int, _d("Results skipped (files or chunks)")]
    limit: Annotated[int, _d("Page size: file_limit (document granularity) or limit (chunk granularity)")]
    total: Annotated[int, _d("Size of the ranked candidate pool")]
    has_more: Annotated[bool, _d("True when results exist beyond this page")]
    semantic_coverage: Annotated[dict[str, float], _d("Per project id: share of chunks with a vector")]
    warnings: Annotated[list[str], _d("Notes on the results, e.g. an incomplete semantic index")]
    took_ms: Annotated[float, _d("Search time on the server, in milliseconds")]


class DocumentSearchOut(_SearchPageOut, tag_field="granularity", tag="document"):
    """Search results at document granularity: ranked files with their best chunks."""

    documents: Annotated[list[DocumentHitOut], _d("Ranked files, best first")]


class ChunkSearchOut(_SearchPageOut, tag_field="granularity", tag="chunk"):
    """Search results at chunk granularity: this page's chunks grouped by file."""

    groups: Annotated[list[FileGroupOut], _d("This page's chunks grouped by file, best group first")]


#: Search results: one shape per granularity, told apart by ``granularity``.
SearchResponseOut = DocumentSearchOut | ChunkSearchOut


class DocumentOut(msgspec.Struct):
    """An indexed file: metadata, and optionally its text and chunks."""

    id: Annotated[str, _d("Document id (UUID v5 of project id and path)")]
    project_id: ProjectId
    file_path: FilePath
    content_hash: Annotated[str, _d("blake3 hex digest of the file's bytes")]
    file_size: FileSize
    last_modified: Annotated[float, _d("File modification time (Unix seconds) seen by the last index run")]
    indexed_at: Annotated[datetime | None, _d("When the file was last indexed (UTC)")]
    languages: Languages
    primary_language: PrimaryLanguage
    chunk_count: ChunkCount
    keywords: Annotated[list[str], _d("Up to 7 key phrases of the file")]
    summary: Annotated[
        str, _d("First doc comment or heading paragraph, at most ~300 characters ('' if none)")
    ]
    content: Annotated[str | None, _d("The whole text as indexed (null unless content=true)")] = None
    chunks: Annotated[list[ChunkOut] | None, _d("Every chunk in file order (null unless chunks=true)")] = None


class ChunkOut(msgspec.Struct):
    """One stored chunk with all its metadata."""

    id: ChunkId
    file_id: FileId
    project_id: ProjectId
    file_path: FilePath
    chunk_index: ChunkIndex
    content: ChunkText
    chunk_hash: Annotated[str, _d("blake3 hex digest of content (UTF-8)")]
    start_byte: Annotated[int, _d("Offset of the first byte in the file (0-based)")]
    end_byte: Annotated[int, _d("Offset just past the last byte (0-based, exclusive)")]
    start_line: StartLine
    end_line: EndLine
    language: ChunkLanguage
    node_type: NodeType
    node_name: NodeName
    parent_context: Annotated[str, _d("Header of the enclosing declaration or heading ('' at top level)")]
    scope_path: Annotated[list[str], _d("Names of the enclosing units and this one, outermost first")]
    definitions: Annotated[list[str], _d("Names the chunk defines")]
    references: Annotated[list[str], _d("Identifiers the chunk uses but does not define (capped)")]
    embedded: Annotated[bool, _d("True once the chunk has a vector")]
