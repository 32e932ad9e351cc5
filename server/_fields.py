"""What the HTTP schemas share: the helper that describes a field, and the field types
several response shapes carry (one description per meaning)."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

__all__ = [
    "ChunkCount",
    "ChunkId",
    "ChunkIndex",
    "ChunkLanguage",
    "ChunkText",
    "EndLine",
    "FileId",
    "FilePath",
    "FileSize",
    "Languages",
    "NodeName",
    "NodeType",
    "PrimaryLanguage",
    "ProjectId",
    "ProjectName",
    "StartLine",
    "describe",
]


def describe(text: str, max_length: int | None = None) -> Meta:
    """A schema field's OpenAPI description (and optional length bound)."""
    return Meta(description=text, max_length=max_length)


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
