"""What the HTTP schemas share: the helper that describes a field, and the field types
several response shapes carry (one description per meaning)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Annotated

from msgspec import Meta

from indexer.chunker import KNOWN_LANGUAGES
from indexer.limits import MAX_GLOBS, MAX_TEXT_CHARS
from server.http.schemas._choices import NodeTypeName, RoleName

__all__ = [
    "NOT_BLANK",
    "NOT_EMPTY",
    "NO_NUL",
    "PATTERN_WORDS",
    "RELATIVE",
    "ChunkCount",
    "ChunkId",
    "ChunkIndex",
    "ChunkLanguage",
    "ChunkText",
    "EndLine",
    "FileId",
    "FilePath",
    "FileSize",
    "Globs",
    "LanguageName",
    "Languages",
    "NodeName",
    "NodeType",
    "NodeTypeName",
    "PrimaryLanguage",
    "ProjectId",
    "ProjectName",
    "RelativePath",
    "RoleName",
    "StartLine",
    "Text",
    "describe",
    "one_of",
]


def describe(text: str, max_length: int | None = None) -> Meta:
    """A schema field's OpenAPI description (and optional length bound)."""
    return Meta(description=text, max_length=max_length)


def one_of(values: Iterable[str]) -> str:
    """A pattern that admits exactly ``values`` (a JSON-schema enum the decoder enforces)."""
    return "^(?:" + "|".join(re.escape(v) for v in sorted(values)) + ")$"


# ---- request fields: the constraint is both the schema and the check ---------------------
#: Not only blanks, without NUL.
NOT_BLANK = r"^[^\x00]*[^\x00\s][^\x00]*$"
#: Not empty, without NUL.
NOT_EMPTY = r"^[^\x00]+$"
#: Without NUL (may be empty).
NO_NUL = r"^[^\x00]*$"
#: Not absolute, no ``..`` segment, without NUL.
RELATIVE = r"^(?![/\\])(?!(?:.*[/])?\.\.(?:/|$))[^\x00]+$"
#: What each pattern means, in words (the 400's message).
PATTERN_WORDS = {
    NOT_BLANK: "must not be blank or contain NUL characters",
    NOT_EMPTY: "must not be empty or contain NUL characters",
    NO_NUL: "must not contain NUL characters",
    RELATIVE: "must be a path relative to the project root, without '..'",
}
#: Text of 1 to 4,096 characters, not only blanks, without NUL (names, globs, terms).
Text = Annotated[str, Meta(min_length=1, max_length=MAX_TEXT_CHARS, pattern=NOT_BLANK)]
#: At most ``MAX_GLOBS`` globs.
Globs = Annotated[list[Text], Meta(max_length=MAX_GLOBS)]
#: A path relative to the project root: not absolute, no ``..`` segment, no NUL.
RelativePath = Annotated[str, Meta(min_length=1, max_length=MAX_TEXT_CHARS, pattern=RELATIVE)]
#: A language lode knows (``python``, ``go``, ``markdown``…).
LanguageName = Annotated[str, Meta(pattern=one_of(KNOWN_LANGUAGES))]


FilePath = Annotated[str, describe("Path relative to the project root")]
ProjectId = Annotated[str, describe("Project id")]
ProjectName = Annotated[str, describe("Project name")]
ChunkId = Annotated[str, describe("Chunk id (UUID v7)")]
FileId = Annotated[str, describe("Document id of the chunk's file")]
ChunkIndex = Annotated[int, describe("0-based position of the chunk in its file")]
StartLine = Annotated[int, describe("First line (1-based)")]
EndLine = Annotated[int, describe("Last line (1-based, inclusive)")]
NodeName = Annotated[str, describe("Name of the unit ('' when it has none)")]
NodeType = Annotated[str, describe("Unit kind, e.g. function, class or section")]
ChunkText = Annotated[str, describe("The chunk's text")]
ChunkLanguage = Annotated[str, describe("Language of the chunk, e.g. python")]
PrimaryLanguage = Annotated[str, describe("Language with the most chunk tokens (else the detected language)")]
Languages = Annotated[list[str], describe("Languages of its chunks, sorted (else the detected language)")]
ChunkCount = Annotated[int, describe("Chunks of the file")]
FileSize = Annotated[int, describe("Size in bytes")]
