"""Filter data → LanceDB SQL predicates (values quoted by ``_sql`` only)."""

from __future__ import annotations

from indexer.models import ChunkFilter
from indexer.store._sql import and_all, glob_prefix, glob_to_regex, in_list, list_literal, quote, starts_with

__all__ = ["chunk_where", "document_where"]


#: What may follow a literal ``dir/`` in a glob that then admits every path under it.
_ANYTHING = ("**", "**/*", "**/**")

_INT32_MAX = 2**31 - 1


def _glob_clause(pattern: str) -> str:
    """``file_path`` matches the glob ``pattern``.

    A regular expression costs every admitted row its evaluation (~50 ms per query on 60k
    rows), so the glob's literal start becomes a range the file_path index answers: alone
    when it says everything (``src/**``, or a literal path and what is under it), else
    narrowing the rows the expression runs on (``copy_0*/**``).
    """
    regex = f"regexp_like(file_path, {quote(glob_to_regex(pattern, path=True))})"
    prefix, rest = glob_prefix(pattern)
    if not prefix or "\x00" in prefix:  # (NUL cannot be quoted; search options refuse it anyway)
        return regex
    if not rest:  # a literal path: that file, or everything in that folder
        return f"file_path = {quote(prefix)} OR ({starts_with('file_path', prefix + '/')})"
    if prefix.endswith("/") and rest in _ANYTHING:
        return starts_with("file_path", prefix)
    return f"{starts_with('file_path', prefix)} AND {regex}"


def _path_clauses(flt: ChunkFilter) -> list[str]:
    clauses: list[str] = []
    if flt.path_include:
        clauses.append(" OR ".join(f"({_glob_clause(g)})" for g in flt.path_include))
    clauses.extend(f"NOT ({_glob_clause(pattern)})" for pattern in flt.path_exclude)
    return clauses


def chunk_where(flt: ChunkFilter, *, embedded_only: bool = False) -> str | None:
    """The WHERE text selecting the chunks that ``flt`` admits."""
    clauses: list[str | None] = [
        in_list("project_id", flt.project_ids) if flt.project_ids else None,
        in_list("file_id", flt.file_ids) if flt.file_ids else None,
        in_list("id", flt.chunk_ids) if flt.chunk_ids is not None else None,
        in_list("language", flt.languages) if flt.languages else None,
        in_list("node_type", flt.node_types) if flt.node_types else None,
        in_list("role", flt.roles) if flt.roles else None,
        f"NOT ({in_list('role', flt.exclude_roles)})" if flt.exclude_roles else None,
        "embedded = true" if embedded_only else None,
    ]
    clauses.extend(_path_clauses(flt))
    if flt.node_name_pattern is not None:
        clauses.append(f"regexp_like(node_name, {quote(glob_to_regex(flt.node_name_pattern))})")
    if flt.parent_context_pattern is not None:
        clauses.append(f"regexp_like(parent_context, {quote(glob_to_regex(flt.parent_context_pattern))})")
    if flt.scope_depth is not None:
        # The column is int32: a bound beyond it would be a store error, not a range.
        low, high = (min(int(bound), _INT32_MAX) for bound in flt.scope_depth)
        clauses.append(f"scope_depth >= {low} AND scope_depth <= {high}")
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
