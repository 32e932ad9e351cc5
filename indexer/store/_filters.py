"""Filter data → LanceDB SQL predicates (values quoted by ``_sql`` only)."""

from __future__ import annotations

from indexer.models import ChunkFilter
from indexer.store._sql import and_all, glob_to_regex, in_list, list_literal, quote

__all__ = ["chunk_where", "document_where"]


def _path_clauses(flt: ChunkFilter) -> list[str]:
    clauses: list[str] = []
    if flt.path_include:
        ors = [f"regexp_like(file_path, {quote(glob_to_regex(g, path=True))})" for g in flt.path_include]
        clauses.append(" OR ".join(ors))
    clauses.extend(
        f"NOT regexp_like(file_path, {quote(glob_to_regex(pattern, path=True))})"
        for pattern in flt.path_exclude
    )
    return clauses


def chunk_where(flt: ChunkFilter, *, embedded_only: bool = False) -> str | None:
    """The WHERE text selecting the chunks that ``flt`` admits."""
    clauses: list[str | None] = [
        in_list("project_id", flt.project_ids) if flt.project_ids else None,
        in_list("file_id", flt.file_ids) if flt.file_ids else None,
        in_list("language", flt.languages) if flt.languages else None,
        in_list("node_type", flt.node_types) if flt.node_types else None,
        "embedded = true" if embedded_only else None,
    ]
    clauses.extend(_path_clauses(flt))
    if flt.node_name_pattern is not None:
        clauses.append(f"regexp_like(node_name, {quote(glob_to_regex(flt.node_name_pattern))})")
    if flt.parent_context_pattern is not None:
        clauses.append(f"regexp_like(parent_context, {quote(glob_to_regex(flt.parent_context_pattern))})")
    if flt.scope_depth is not None:
        low, high = flt.scope_depth
        clauses.append(f"scope_depth >= {int(low)} AND scope_depth <= {int(high)}")
    if flt.has_definitions:
        clauses.append(f"array_has_any(definitions, {list_literal(flt.has_definitions)})")
    if flt.has_references:
        clauses.append(f"array_has_any(`references`, {list_literal(flt.has_references)})")
    return and_all(clauses)


def document_where(flt: ChunkFilter, *, embedded_only: bool = False) -> str | None:
    """The WHERE text selecting the documents that ``flt``'s file-level conditions admit."""
    clauses: list[str | None] = [
        in_list("project_id", flt.project_ids) if flt.project_ids else None,
        in_list("id", flt.file_ids) if flt.file_ids else None,
        f"array_has_any(languages, {list_literal(flt.languages)})" if flt.languages else None,
        "embedded = true" if embedded_only else None,
    ]
    clauses.extend(_path_clauses(flt))
    return and_all(clauses)
