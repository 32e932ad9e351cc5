"""Search options (the HTTP contract too) and their validation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from indexer.errors import FieldError, ValidationError
from indexer.limits import (
    MAX_GLOBS,
    MAX_NAMES,
    MAX_QUERY_CHARS,
    MAX_TEXT_CHARS,
    clip,
    items_problem,
    quote,
    quote_items,
)
from indexer.models import NODE_TYPES, ChunkFilter
from indexer.roles import ROLES

__all__ = [
    "GRANULARITIES",
    "MAX_LIMIT",
    "MODES",
    "SearchOptions",
    "raise_errors",
    "relative_path_globs",
    "validate_options",
]

GRANULARITIES: Final = ("document", "chunk")
MODES: Final = ("hybrid", "semantic", "lexical")
MAX_LIMIT: Final = 100
MAX_OFFSET: Final = 10_000
#: Most items of each list option (globs fewer: each is a regular expression the store runs).
MAX_ITEMS: Final = {
    "projects": MAX_NAMES, "languages": MAX_NAMES, "path_include": MAX_GLOBS, "path_exclude": MAX_GLOBS,
    "node_types": MAX_NAMES, "has_definitions": MAX_NAMES, "has_references": MAX_NAMES,
    "roles": len(ROLES), "exclude_roles": len(ROLES), "exact_terms": MAX_NAMES,
}  # fmt: skip
#: Most candidates a search may ask each list for (``SearchOptions.candidates``).
MAX_CANDIDATES: Final = 1000


@dataclass(frozen=True, slots=True)
class SearchOptions:
    """Everything a search can ask for; names are the HTTP/MCP/CLI contract."""

    query: str
    projects: tuple[str, ...] = ()
    granularity: str = "document"
    mode: str = "hybrid"
    languages: tuple[str, ...] = ()
    path_include: tuple[str, ...] = ()
    path_exclude: tuple[str, ...] = ()
    node_types: tuple[str, ...] = ()
    node_name_pattern: str | None = None
    parent_context_pattern: str | None = None
    scope_depth: tuple[int, int] | None = None
    has_definitions: tuple[str, ...] = ()
    has_references: tuple[str, ...] = ()
    roles: tuple[str, ...] = ()
    exclude_roles: tuple[str, ...] = ()
    exact_terms: tuple[str, ...] = ()
    """Only chunks holding at least one of these (``indexer.search._terms``: a substring,
    identifier-like terms in their exact case); a chunk's score is scaled by 1.5 per term
    it holds over 1.5 per term given, and split units are not folded (every chunk holding
    a term is a result)."""
    min_score: float = 0.0
    """Results scoring below this are left out (of ``total`` too)."""
    candidates: int | None = None
    """Candidates taken from each list; None: enough for the page (more for later pages).
    A fixed number keeps the pool, ``total`` and every score the same on every page."""
    file_limit: int = 5
    chunks_per_file: int = 3
    limit: int = 10
    offset: int = 0


#: Options of the engine that ``POST /api/v1/search`` does not take (``search_content`` and
#: ``find_documents`` set them).
ENGINE_ONLY = ("exact_terms", "min_score", "candidates")


def raise_errors(errors: list[FieldError]) -> None:
    """Raise one ValidationError naming every field of ``errors`` (if any)."""
    if errors:
        first, *more = errors
        raise ValidationError(first.field, first.message, more=tuple(more))


def _check_range(errors: list[FieldError], name: str, value: int, low: int, high: int) -> None:
    if not low <= value <= high:
        errors.append(FieldError(name, f"must be between {low} and {high} (got {value})"))


def _check_lists(errors: list[FieldError], opts: SearchOptions) -> set[str]:
    """Every list option's length and items (counted before any item is looked at); the
    names of the lists found bad, which no later check reads."""
    bad = set()
    for name, most in MAX_ITEMS.items():
        problem = items_problem(getattr(opts, name), most, MAX_TEXT_CHARS)
        if problem is not None:
            errors.append(FieldError(name, problem))
            bad.add(name)
    return bad


def _check_choices(
    errors: list[FieldError], opts: SearchOptions, known_languages: frozenset[str] | None, bad: set[str]
) -> None:
    if opts.granularity not in GRANULARITIES:
        errors.append(FieldError("granularity", f"must be one of {', '.join(GRANULARITIES)}"))
    if opts.mode not in MODES:
        errors.append(FieldError("mode", f"must be one of {', '.join(MODES)}"))
    vocabularies: list[tuple[str, str, Sequence[str], bool]] = [
        ("roles", "role(s)", ROLES, True),
        ("exclude_roles", "role(s)", ROLES, True),
        ("node_types", "node type(s)", sorted(NODE_TYPES), True),
    ]
    if known_languages is not None:
        vocabularies.append(("languages", "language(s)", sorted(known_languages), False))
    for name, what, known, listed in vocabularies:
        unknown = sorted(set(getattr(opts, name)) - set(known)) if name not in bad else []
        if unknown:
            shown = f"; known: {list(known)}" if listed else ""
            errors.append(FieldError(name, f"unknown {what} {quote_items(unknown)}{shown}"))


def _check_query(errors: list[FieldError], query: str, names: bool = False) -> None:
    if not query.strip():
        if not names:  # has_definitions / has_references alone list what they name
            errors.append(FieldError("query", "must not be empty (or give has_definitions / has_references)"))
    elif len(query) > MAX_QUERY_CHARS or "\x00" in query:
        errors.append(FieldError("query", f"must be at most {MAX_QUERY_CHARS} characters, without NUL"))


def _check_patterns(errors: list[FieldError], opts: SearchOptions, bad: set[str]) -> None:
    if opts.scope_depth is not None:
        low, high = opts.scope_depth
        if low < 0 or high < 0:
            message = f"must be [min, max] with 0 <= min, max (got {[low, high]})"
            errors.append(FieldError("scope_depth", message))
    for name in ("node_name_pattern", "parent_context_pattern"):
        value = getattr(opts, name)
        if value is not None and (value == "" or "\x00" in value or len(value) > MAX_TEXT_CHARS):
            errors.append(
                FieldError(
                    name, f"must be a non-empty glob of at most {MAX_TEXT_CHARS} characters without NUL"
                )
            )
            bad.add(name)
    _check_globs(errors, opts, bad)


def _check_globs(errors: list[FieldError], opts: SearchOptions, bad: set[str]) -> None:
    """Globs the store cannot translate (``[z-a]``) are a 400 naming the field, not a 500."""
    from indexer.store import glob_to_regex

    globs = [
        (name, g, True)
        for name in ("path_include", "path_exclude")
        if name not in bad
        for g in getattr(opts, name)
    ]
    globs += [
        (name, getattr(opts, name), False)
        for name in ("node_name_pattern", "parent_context_pattern")
        if name not in bad
    ]
    for name, glob, is_path in globs:
        if not glob:
            continue
        try:
            glob_to_regex(glob, path=is_path)
        except ValueError as exc:
            errors.append(FieldError(name, f"{quote(glob)} is not a valid glob: {quote(str(exc))}"))


def validate_options(opts: SearchOptions, known_languages: frozenset[str] | None = None) -> None:
    """Raise a ValidationError naming every invalid field of ``opts``."""
    errors: list[FieldError] = []
    _check_query(errors, opts.query, bool(opts.has_definitions or opts.has_references or opts.exact_terms))
    bad = _check_lists(errors, opts)
    _check_choices(errors, opts, known_languages, bad)
    _check_patterns(errors, opts, bad)
    _check_range(errors, "limit", opts.limit, 1, MAX_LIMIT)
    _check_range(errors, "file_limit", opts.file_limit, 1, MAX_LIMIT)
    _check_range(errors, "chunks_per_file", opts.chunks_per_file, 1, 50)
    _check_range(errors, "offset", opts.offset, 0, MAX_OFFSET)
    if not 0.0 <= opts.min_score <= 1.0:
        errors.append(FieldError("min_score", f"must be between 0 and 1 (got {opts.min_score})"))
    if opts.candidates is not None:
        _check_range(errors, "candidates", opts.candidates, 1, MAX_CANDIDATES)
    raise_errors(errors)


def _inside(glob: str, roots: Sequence[str]) -> str | None:
    """``glob`` relative to the first root it lies under (``**`` for the root itself)."""
    for root in roots:
        base = root.rstrip("/")
        if glob.rstrip("/") == base:
            return "**"
        if glob.startswith(base + "/"):
            return glob[len(base) + 1 :] or "**"
    return None


def relative_path_globs(opts: SearchOptions, roots: Sequence[str]) -> SearchOptions:
    """``opts`` with every absolute path glob made relative to the project root it lies
    under; a ValidationError naming the field for one outside every root searched.

    Path globs are relative to the project root: ``/home/me/shop/src/**`` searching the
    project at ``/home/me/shop`` becomes ``src/**``."""
    changes: dict[str, Any] = {}
    errors: list[FieldError] = []
    for name in ("path_include", "path_exclude"):
        globs: tuple[str, ...] = getattr(opts, name)
        if not any(g.startswith("/") for g in globs):
            continue
        out = []
        for glob in globs:
            relative = _inside(glob, roots) if glob.startswith("/") else glob
            if relative is None:
                where = ", ".join(roots) if roots else "no project is registered"
                errors.append(
                    FieldError(
                        name,
                        f"{quote(glob)} is outside the project root ({clip(where)}); path globs are "
                        f"relative to the project root, e.g. {quote(glob.lstrip('/') or '**')}",
                    )
                )
            else:
                out.append(relative)
        changes[name] = tuple(out)
    raise_errors(errors)
    return replace(opts, **changes) if changes else opts


def to_filter(opts: SearchOptions, project_ids: tuple[str, ...]) -> ChunkFilter:
    """The metadata filter of validated options (projects already resolved to ids)."""
    return ChunkFilter(
        project_ids=project_ids,
        languages=opts.languages,
        path_include=opts.path_include,
        path_exclude=opts.path_exclude,
        node_types=opts.node_types,
        node_name_pattern=opts.node_name_pattern,
        parent_context_pattern=opts.parent_context_pattern,
        scope_depth=opts.scope_depth,
        has_definitions=opts.has_definitions,
        has_references=opts.has_references,
        roles=opts.roles,
        exclude_roles=opts.exclude_roles,
    )
