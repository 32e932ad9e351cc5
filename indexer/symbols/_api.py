"""Symbol operations over a store: find definitions, read one with its code, find callers.

Resolution is by name, like ctags or zoekt's ``sym:``, not a language server: every
definition of a name is a candidate, ranked by proximity to the file it is read in.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from indexer.errors import NotFoundError, ValidationError
from indexer.limits import MAX_NAMES, MAX_SYMBOL_CHARS, check_items, quote, quote_items
from indexer.locations import file_uri, locate_path
from indexer.models import NODE_TYPES, Project, Symbol
from indexer.positions import Range, line_texts, name_ranges
from indexer.search._engine import resolve_projects
from indexer.store import NameMatch, Store, glob_to_regex
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
from indexer.symbols._rank import Proximity, fuzzy_names

__all__ = ["definitions_near", "find_references", "find_symbols", "get_symbol"]

#: Definitions read per query before ranking (a name defined more often is cut here).
_MAX_CANDIDATES = 2000
#: Reference sites read per query before grouping.
_MAX_SITES = 20_000
#: A symbol's code is cut after this many characters.
_MAX_CODE = 40_000
_QUALIFIER = re.compile(r"(.+?)(?:::|\.|#)([^.:#]+)$")


def _check_name(name: str, field: str = "name") -> str:
    text = name.strip()
    if not text:
        raise ValidationError(field, "must not be empty")
    if len(text) > MAX_SYMBOL_CHARS or "\x00" in text:
        raise ValidationError(field, f"must be at most {MAX_SYMBOL_CHARS} characters, without NUL")
    return text


def _check_kinds(kinds: Sequence[str], languages: Sequence[str]) -> None:
    from indexer.chunker import KNOWN_LANGUAGES

    for field, values, known in (("kind", kinds, NODE_TYPES), ("language", languages, KNOWN_LANGUAGES)):
        check_items(field, values, MAX_NAMES)
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValidationError(
                field, f"unknown {field} {quote_items(unknown)}; one of: {', '.join(sorted(known))}"
            )


def _check_request(projects: Sequence[str]) -> None:
    """The projects named (a list of names)."""
    check_items("project", projects, MAX_NAMES)


def _check_limit(limit: int, high: int) -> None:
    if not 1 <= limit <= high:
        raise ValidationError("limit", f"must be between 1 and {high} (got {limit})")


def _proximity(store: Store, projects: Sequence[Project], from_path: str | None) -> Proximity:
    """Proximity to ``from_path`` (relative, absolute inside a project's root, or a
    ``file://`` URI; its text read for its imports, from its project, else from the first
    of ``projects`` that has it); a PathError naming ``from_path`` for a path outside every
    project's root."""
    if not from_path:  # empty: none given
        return Proximity(None, None)
    located = locate_path(from_path, store.projects.all(), "from_path")
    order = [located.project] if located.project is not None else list(projects)
    found = store.documents.content_at([p.id for p in order], located.path)
    return Proximity(located.path, found[1] if found is not None else None)


def _split_qualified(name: str) -> tuple[str, str]:
    """``Stack.push`` → (``Stack``, ``push``); a plain name → ("", name)."""
    found = _QUALIFIER.fullmatch(name)
    return (found.group(1), found.group(2)) if found else ("", name)


def _qualifier_matches(symbol: Symbol, qualifier: str) -> bool:
    container = symbol.container.replace("::", ".")
    wanted = re.sub(r"::|#", ".", qualifier)
    return container == wanted or container.endswith("." + wanted)


def _candidates(
    store: Store,
    query: SymbolQuery,
    name: str,
    project_ids: list[str],
    plain_found: list[Symbol] | None = None,
) -> list[Symbol]:
    """Definitions matching the query, unranked (fuzzy: best names first); ``plain_found``:
    the exact definitions of the name's last part, already read."""
    kinds, languages = query.kinds, query.languages

    def named(names: Sequence[str], match: NameMatch = "exact") -> list[Symbol]:
        return store.symbols.definitions(
            names,
            match=match,
            kinds=kinds,
            languages=languages,
            project_ids=project_ids,
            limit=_MAX_CANDIDATES,
        )

    if query.match == "fuzzy":  # ``stack.psh``: the name's letters, in a container like ``stack``
        qualifier, plain = _split_qualified(name)
        best = fuzzy_names(plain, store.symbols.names(project_ids, languages))
        order = {n: i for i, n in enumerate(best)}
        wanted = qualifier.lower()
        return sorted(
            named(best), key=lambda s: (wanted not in s.container.lower(), order.get(s.name, len(order)))
        )
    if query.match != "exact":
        return named([name], "prefix" if query.match == "prefix" else "glob")
    qualifier, plain = _split_qualified(name)
    exact = plain_found if plain_found is not None else named([plain])
    if not qualifier:
        return exact
    qualified = [s for s in exact if _qualifier_matches(s, qualifier)]
    return qualified or named([name])  # ``Shop.Orders``: a C# namespace is named so whole


def find_symbols(store: Store, query: SymbolQuery) -> SymbolList:
    """Definitions matching ``query``: nearest to ``from_path`` first, then exact names,
    then types and functions before variables (fuzzy: best-matching names first)."""
    name = _check_name(query.name)
    if query.match not in MATCHES:
        raise ValidationError("match", f"must be one of: {', '.join(MATCHES)} (got {quote(query.match)})")
    if query.match == "glob":
        try:
            glob_to_regex(name)
        except ValueError as exc:
            raise ValidationError("name", f"is not a valid glob: {quote(str(exc))}") from None
    _check_limit(query.limit, 1000)
    _check_kinds(query.kinds, query.languages)
    _check_request(query.projects)
    projects = resolve_projects(store, query.projects, "project")
    return _ranked(store, query, name, projects, _proximity(store, projects, query.from_path))


def definitions_near(
    store: Store, name: str, project: Project, path: str, text: str, limit: int
) -> SymbolList:
    """Definitions of ``name`` in ``project``, nearest to ``path`` (whose text is ``text``)
    first: go to definition from a file already read."""
    query = SymbolQuery(name, projects=(project.id,), from_path=path, limit=limit)
    return _ranked(store, query, name, [project], Proximity(path, text))


def _ranked(
    store: Store,
    query: SymbolQuery,
    name: str,
    projects: list[Project],
    proximity: Proximity,
    plain_found: list[Symbol] | None = None,
) -> SymbolList:
    names = {p.id: p.name for p in projects}
    roots = {p.id: p.root for p in projects}
    found = _candidates(store, query, name, list(names), plain_found)
    if query.match == "fuzzy":  # as ``_candidates`` ordered them, nearest first within a name
        order = {n: i for i, n in enumerate(dict.fromkeys((s.container, s.name) for s in found))}
        ranked = sorted(found, key=lambda s: (order[(s.container, s.name)], proximity.key(s, s.name)))
    else:
        plain = _split_qualified(name)[1]
        ranked = sorted(found, key=lambda s: proximity.key(s, plain))
    symbols = tuple(
        RankedSymbol(s, names.get(s.project_id, ""), proximity.of(s.file_path), _uri(roots, s))
        for s in ranked[: query.limit]
    )
    return SymbolList(name, query.match, symbols, len(found), len(found) > query.limit)


def _uri(roots: dict[str, str], symbol: Symbol) -> str:
    root = roots.get(symbol.project_id)
    return file_uri(root, symbol.file_path) if root else ""


def get_symbol(store: Store, symbol_id: str) -> SymbolDetail:
    """One symbol by id with its code (NotFoundError for an unknown id)."""
    symbol = store.symbols.get(symbol_id)
    if symbol is None:
        raise NotFoundError(f"no symbol {quote(symbol_id)}")
    projects = store.projects.all()
    names = {p.id: p.name for p in projects}
    content = store.documents.content(symbol.file_id) or ""
    lines = content.split("\n")[symbol.start_line - 1 : symbol.end_line]
    code = "\n".join(lines)
    truncated = len(code) > _MAX_CODE
    uri = _uri({p.id: p.root for p in projects}, symbol)
    return SymbolDetail(symbol, names.get(symbol.project_id, ""), code[:_MAX_CODE], truncated, uri)


def find_references(store: Store, query: ReferenceQuery) -> References:
    """Every use of a name, grouped by the unit it is used in (its callers), with the
    name's candidate definitions; nearest to ``from_path`` first. Uses are found by name
    (a qualified name's last part): which type a receiver has is not known."""
    name = _check_name(query.name)
    _check_limit(query.limit, 1000)
    _check_kinds((), query.languages)
    _check_request(query.projects)
    projects = resolve_projects(store, query.projects, "project")
    names = {p.id: p.name for p in projects}
    plain = _split_qualified(name)[1]
    proximity = _proximity(store, projects, query.from_path)
    wanted = SymbolQuery(name, languages=query.languages, projects=tuple(names), from_path=query.from_path)
    defined, sites = store.symbols.uses(
        [plain],
        languages=query.languages,
        project_ids=list(names),
        definitions=_MAX_CANDIDATES,
        references=_MAX_SITES,
    )
    definitions = _ranked(store, wanted, name, projects, proximity, defined).symbols
    groups: dict[tuple[str, str, str, str], list[Symbol]] = {}
    for site in sites:
        key = (site.project_id, site.file_path, site.container, site.signature)
        groups.setdefault(key, []).append(site)
    ordered = sorted(
        (sorted(members, key=lambda s: s.start_line) for members in groups.values()),
        key=lambda m: (PROXIMITIES.index(proximity.of(m[0].file_path)), m[0].file_path, m[0].start_line),
    )
    shown = ordered[: query.limit]
    texts = store.documents.contents(sorted({s.file_id for members in shown for s in members}))
    lines = {file_id: line_texts(text) for file_id, text in texts.items()}
    roots = {p.id: p.root for p in projects}
    return References(
        name=name,
        definitions=definitions,
        callers=tuple(_caller(m, names, roots, proximity, lines.get(m[0].file_id, [])) for m in shown),
        total_sites=len(sites),
        total_callers=len(ordered),
        truncated=len(ordered) > query.limit or len(sites) >= _MAX_SITES,
    )


def _caller(
    members: list[Symbol],
    names: dict[str, str],
    roots: dict[str, str],
    proximity: Proximity,
    lines: list[str],
) -> Caller:
    """The sites of one caller (in line order), each with the ranges of the name on its line
    (of ``lines``, its file's text)."""
    first = members[0]

    def ranges(site: Symbol) -> tuple[Range, ...]:
        line = site.start_line - 1
        return tuple(name_ranges(line, lines[line], site.name)) if 0 <= line < len(lines) else ()

    return Caller(
        project=names.get(first.project_id, ""),
        file_path=first.file_path,
        language=first.language,
        container=first.container,
        container_kind=first.container_kind,
        signature=first.signature,
        proximity=proximity.of(first.file_path),
        sites=tuple(ReferenceSite(s.id, s.start_line, s.text, s.chunk_id, ranges(s)) for s in members),
        uri=_uri(roots, first),
    )
