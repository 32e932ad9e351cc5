"""Editor routes, by position and range as LSP counts them (0-based lines, UTF-16 columns):
``GET /api/v1/files/text`` (lines of an indexed file and its hash) and
``GET /api/v1/symbols/at`` (what is under a cursor).

A ``path`` is relative to its project's root, absolute inside a project's root, or a
``file://`` URI, as everywhere; it travels in the query string, which every client
encodes (a path in the URL's path would need its ``/``, ``#`` and ``?`` handled)."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, get
from litestar.params import QueryParameter

from indexer.editor import PositionQuery, TextQuery, symbol_at_json
from indexer.limits import MAX_TEXT_CHARS
from server.convert import to_wire
from server.http._common import Ctx, blocking, ok
from server.http.examples.navigation import EDITOR as EXAMPLES
from server.http.schemas._fields import NOT_BLANK
from server.http.schemas.editor import FileTextOut, SymbolAtOut

__all__ = ["EditorController"]

PathParam = Annotated[
    str,
    QueryParameter(
        description="The file: relative to its project's root (src/app.py), absolute inside a "
        "project's root, or a file:// URI (percent-encoded, as editors give it)",
        min_length=1,
        max_length=MAX_TEXT_CHARS,
    ),
]
ProjectParam = Annotated[
    str | None,
    QueryParameter(
        description="Project name or id (needed only for a relative path that several projects index)",
        max_length=MAX_TEXT_CHARS,
        pattern=NOT_BLANK,
    ),
]


class EditorController(Controller):
    """Lines of a file, and what is under a cursor."""

    path = "/api/v1"
    tags = ("editor",)

    @get(
        "/files/text",
        summary="Lines of an indexed file and its hash",
        operation_id="read_text",
        responses=ok(FileTextOut, "Two lines of a file", EXAMPLES["text"], errors=(400, 404, 503)),
    )
    @blocking
    def read_text(
        self,
        ctx: Ctx,
        path: PathParam,
        project: ProjectParam = None,
        start_line: Annotated[
            int | None, QueryParameter(ge=0, description="First line (0-based, LSP; default 0)")
        ] = None,
        end_line: Annotated[
            int | None,
            QueryParameter(
                ge=0,
                description="Line after the last one (0-based, exclusive, LSP: the range ends at "
                "(end_line, 0); default: the file's end)",
            ),
        ] = None,
    ) -> FileTextOut:
        """Lines of a file as indexed (what its chunks and hits were cut from), with the blake3
        hash of the whole file: an editor compares it with its buffer's to know whether hits
        still point at the right lines. A path outside every project's root is a 400 naming
        ``path``; a file the index does not hold is a 404."""
        query = TextQuery(path, project, start_line, end_line)
        return to_wire(ctx.lode.read_text(query), FileTextOut)

    @get(
        "/symbols/at",
        summary="The symbol at a position (go to definition from a cursor)",
        operation_id="symbol_at",
        responses=ok(SymbolAtOut, "A call under the cursor", EXAMPLES["at"], errors=(400, 404, 503)),
    )
    @blocking
    def symbol_at(
        self,
        ctx: Ctx,
        path: PathParam,
        line: Annotated[int, QueryParameter(ge=0, description="Line (0-based, LSP)")],
        column: Annotated[
            int,
            QueryParameter(
                ge=0,
                description="Column in UTF-16 code units from the line's start (0-based, LSP's "
                "Position.character); a cursor just after a name is on it",
            ),
        ],
        project: ProjectParam = None,
        limit: Annotated[int, QueryParameter(ge=1, le=1000, description="Definitions returned")] = 20,
    ) -> SymbolAtOut:
        """The identifier at the position, its definitions in the file's project nearest first
        (same file, same folder, imported by the file, elsewhere: by name, like ctags), the
        innermost unit holding the position and the chunk holding its line. A position on no
        identifier (or past the file's end) answers an empty ``name``."""
        query = PositionQuery(path, line, column, project, limit)
        return to_wire(symbol_at_json(ctx.lode.symbol_at(query)), SymbolAtOut)
