"""One conversion path (issue 40): the HTTP schemas that ``server.convert.to_wire`` fills
mirror their ``indexer`` model field by field (names and nesting), so an answer converts
without a hand-written function, and a field added to a model without its schema (or the
other way round) fails here rather than in a client."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

import msgspec
import pytest

from indexer.editor import ChunkAt, FileText
from indexer.outline import _model as outline
from indexer.positions import Position, Range
from indexer.search import ENGINE_ONLY, ChunkHit, DocumentHit, FileGroup, SearchOptions, SearchResponse
from server.http.schemas import _positions as sp
from server.http.schemas import editor as se
from server.http.schemas import outline as so
from server.http.schemas import search as schemas

#: HTTP schema → the model it mirrors.
MIRRORS: list[tuple[type[Any], type[Any]]] = [
    (schemas.SearchRequest, SearchOptions),
    (schemas.DocumentSearchOut, SearchResponse),
    (schemas.ChunkSearchOut, SearchResponse),
    (schemas.FileGroupOut, FileGroup),
    (schemas.DocumentHitOut, DocumentHit),
    (schemas.ChunkHitOut, ChunkHit),
    (sp.RangeOut, Range),
    (sp.PositionOut, Position),
    (se.FileTextOut, FileText),
    (se.ChunkAtOut, ChunkAt),
    (so.OutlineNodeOut, outline.NodeInfo),
    (so.OutlineListedOut, outline.ListedNode),
    (so.OutlineListingOut, outline.Listing),
    (so.OutlineCatOut, outline.NodeText),
    (so.OutlineFindOut, outline.FindResult),
    (so.OutlineGrepMatchOut, outline.GrepMatch),
    (so.OutlineGrepOut, outline.GrepResult),
    (so.OutlineCueOut, outline.Cue),
    (so.OutlineLocateOut, outline.LocateResult),
    (so.OutlinePlanOut, outline.PlanPrompt),
]


#: What the engine takes or gives that the HTTP search does not: the options and the
#: answer's rank-order lists and the file facts ``search_content`` and ``find_documents`` use.
ENGINE_ONLY_FIELDS: dict[type[Any], set[str]] = {
    SearchOptions: set(ENGINE_ONLY),
    SearchResponse: {"hits", "files", "mean_relevance"},
    DocumentHit: {"summary", "keywords", "file_size"},
}


#: One shape per search granularity (issue 41): each leaves out the other's results.
OTHER_SHAPE: dict[type[Any], set[str]] = {
    schemas.DocumentSearchOut: {"groups"},
    schemas.ChunkSearchOut: {"documents"},
}


def _fields(cls: type[Any]) -> set[str]:
    if issubclass(cls, msgspec.Struct):
        tag = cls.__struct_config__.tag_field  # a tagged shape's tag is a field on the wire
        return set(cls.__struct_fields__) | ({tag} if tag else set())
    return {f.name for f in dataclasses.fields(cls)}


@pytest.mark.parametrize(("wire", "model"), MIRRORS, ids=[w.__name__ for w, _ in MIRRORS])
def test_a_schema_has_its_models_fields(wire: type[Any], model: type[Any]) -> None:
    assert _fields(wire) == _fields(model) - ENGINE_ONLY_FIELDS.get(model, set()) - OTHER_SHAPE.get(
        wire, set()
    )


def test_every_nested_schema_is_in_the_table() -> None:
    """A schema's field of another schema's type is held to its model too."""
    listed = {w for w, _ in MIRRORS}
    nested: set[type[Any]] = set()
    for wire, _ in MIRRORS:
        for hint in typing.get_type_hints(wire, include_extras=False).values():
            for arg in (hint, *typing.get_args(hint)):
                if isinstance(arg, type) and issubclass(arg, msgspec.Struct):
                    nested.add(arg)
    assert nested <= listed
