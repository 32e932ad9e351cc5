"""``GET /api/v1/symbols`` (go to definition), ``GET /api/v1/symbols/references`` (find
references, grouped by caller) and ``GET /api/v1/symbols/{id}`` (one symbol with its code).

Names are resolved as text, like ctags or zoekt's ``sym:``, not by a language server."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, get
from litestar.params import FromPath, QueryParameter

from indexer.chunker import KNOWN_LANGUAGES
from indexer.limits import MAX_NAMES, MAX_SYMBOL_CHARS, MAX_TEXT_CHARS
from indexer.symbols import detail_json, list_json, references_json
from server.convert import reference_query, symbol_query, to_wire
from server.http._common import Ctx, blocking, ok
from server.http.examples.navigation import SYMBOLS as EXAMPLES
from server.http.schemas._choices import Match, NodeTypeName
from server.http.schemas._fields import NOT_BLANK, LanguageName, one_of
from server.http.schemas.symbols import ReferencesOut, SymbolDetailOut, SymbolListOut

__all__ = ["SymbolController"]

NameParam = Annotated[
    str,
    QueryParameter(
        description="A name (push) or a qualified one (Stack.push, Stack::push)",
        min_length=1,
        max_length=MAX_SYMBOL_CHARS,
        pattern=NOT_BLANK,
    ),
]


LanguagesParam = Annotated[
    list[LanguageName] | None,
    QueryParameter(
        description="Only these languages (repeat the parameter: language=python&language=go)",
        min_items=1,
        max_items=MAX_NAMES,
        # Litestar leaves a list parameter's item constraints out of the document
        schema_extra={"items": {"type": "string", "pattern": one_of(KNOWN_LANGUAGES)}},
    ),
]
ProjectParam = Annotated[
    str | None,
    QueryParameter(
        description="Project name or id (default: all)", max_length=MAX_TEXT_CHARS, pattern=NOT_BLANK
    ),
]
FromPathParam = Annotated[
    str | None,
    QueryParameter(
        description="The file the name is read in: relative to its project's root, absolute inside "
        "a project's root, or a file:// URI; candidates are ranked by proximity to it (same "
        "file, same folder, imported by it). Outside every project's root: a 400",
        max_length=MAX_TEXT_CHARS,
    ),
]


class SymbolController(Controller):
    """Definitions and references of names."""

    path = "/api/v1/symbols"
    tags = ("symbols",)

    @get(
        summary="Definitions of a name (go to definition)",
        operation_id="find_symbols",
        responses=ok(SymbolListOut, "The definitions of a name", EXAMPLES["list"], errors=(400, 404, 503)),
    )
    @blocking
    def find_symbols(
        self,
        ctx: Ctx,
        name: NameParam,
        match: Annotated[
            Match,
            QueryParameter(
                description="exact; prefix; glob (*, ?, [...], case-sensitive); fuzzy (case and _ "
                "ignored, the letters in order)",
            ),
        ] = "exact",
        kind: Annotated[
            list[NodeTypeName] | None,
            QueryParameter(
                description="Only these node types (repeat the parameter: kind=function&kind=method)",
                min_items=1,
                max_items=MAX_NAMES,
            ),
        ] = None,
        language: LanguagesParam = None,
        project: ProjectParam = None,
        from_path: FromPathParam = None,
        limit: Annotated[int, QueryParameter(ge=1, le=1000, description="Definitions returned")] = 50,
    ) -> SymbolListOut:
        """Every definition (a unit: function, method, class, namespace, macro…) whose name
        matches, ranked by proximity to ``from_path``, then exact names first, then types and
        functions before variables. An ambiguous name lists every candidate."""
        query = symbol_query(name, match, kind, language, project, from_path, limit)
        return to_wire(list_json(ctx.lode.symbols(query)), SymbolListOut)

    @get(
        "/references",
        summary="Uses of a name, grouped by caller (find references)",
        operation_id="find_references",
        responses=ok(ReferencesOut, "The callers of a name", EXAMPLES["references"], errors=(400, 404, 503)),
    )
    @blocking
    def find_references(
        self,
        ctx: Ctx,
        name: NameParam,
        language: LanguagesParam = None,
        project: ProjectParam = None,
        from_path: FromPathParam = None,
        limit: Annotated[int, QueryParameter(ge=1, le=1000, description="Callers returned")] = 100,
    ) -> ReferencesOut:
        """Every line using the name (a qualified name's last part), grouped by the unit it is
        used in (its callers), with the name's candidate definitions; nearest to ``from_path``
        first."""
        query = reference_query(name, language, project, from_path, limit)
        return to_wire(references_json(ctx.lode.references(query)), ReferencesOut)

    @get(
        "/{symbol_id:str}",
        summary="One symbol with its code",
        operation_id="get_symbol",
        responses=ok(SymbolDetailOut, "A definition and its code", EXAMPLES["detail"], errors=(404, 503)),
    )
    @blocking
    def get_symbol(self, ctx: Ctx, symbol_id: FromPath[str]) -> SymbolDetailOut:
        """A definition (or a reference site) by id, with the lines it spans; an unknown id is a 404."""
        return to_wire(detail_json(ctx.lode.symbol(symbol_id)), SymbolDetailOut)
