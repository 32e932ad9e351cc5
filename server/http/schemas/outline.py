"""HTTP types of the outline routes (``/api/v1/projects/{id}/outline…``): field names
match ``indexer.outline``'s answers one for one (``to_wire`` converts them)."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

from indexer.limits import MAX_QUERY_CHARS, MAX_TEXT_CHARS
from server.http.schemas._fields import describe as _d

__all__ = [
    "OutlineCatOut",
    "OutlineCueOut",
    "OutlineFindOut",
    "OutlineGrepMatchOut",
    "OutlineGrepOut",
    "OutlineListedOut",
    "OutlineListingOut",
    "OutlineLocateOut",
    "OutlineLocateRequest",
    "OutlineNodeOut",
    "OutlinePlanOut",
    "OutlinePlanRequest",
]

NodeId = Annotated[str, Meta(min_length=1, max_length=MAX_TEXT_CHARS)]
Question = Annotated[str, Meta(min_length=1, max_length=MAX_QUERY_CHARS)]


class OutlineNodeOut(msgspec.Struct, kw_only=True):
    """One outline node (without its children)."""

    id: Annotated[str, _d("Stable node id: '.', a path, path#Scope.Name or path#Heading/Sub")]
    title: Annotated[str, _d("Project, folder or file name, unit name, or heading text")]
    kind: Annotated[str, _d("project, directory, file, or the unit kind (class, method, section…)")]
    depth: Annotated[int, _d("0 for the project root")]
    path: Annotated[str, _d("Project-relative file or folder path ('.' for the root)")]
    parent: Annotated[str | None, _d("Parent node id (null for the root)")] = None
    breadcrumb: Annotated[str, _d("Titles from the root to this node, joined by '/'")]
    start_line: Annotated[int, _d("First line (1-based; 0 for folders)")]
    end_line: Annotated[int, _d("Last line (inclusive; 0 for folders)")]
    summary: Annotated[str, _d("Extractive: a docstring, doc comment or first paragraph")]
    topic_tags: Annotated[list[str], _d("Key terms of the node by TF-IDF within the project")]
    leaf_count: Annotated[int, _d("Leaves under this node (1 for a leaf)")]
    child_count: Annotated[int, _d("Direct children of the node")]


class OutlineListedOut(msgspec.Struct):
    """A child in a listing (with its own children when listed with depth > 1)."""

    id: Annotated[str, _d("Node id")]
    title: Annotated[str, _d("Folder or file name, unit name, or heading text")]
    kind: Annotated[str, _d("directory, file, or the unit kind (class, method, section…)")]
    summary: Annotated[str, _d("Extractive: a docstring, doc comment or first paragraph ('' if none)")]
    leaf_count: Annotated[int, _d("Leaves under this node (1 for a leaf)")]
    has_children: Annotated[bool, _d("True when the node has children, listed or not")]
    start_line: Annotated[int, _d("First line (1-based; 0 for folders)")]
    end_line: Annotated[int, _d("Last line (inclusive; 0 for folders)")]
    children: Annotated[
        list[OutlineListedOut], _d("Its own children when listed with depth > 1, else empty")
    ] = []


class OutlineListingOut(msgspec.Struct):
    """``ls``: a node and its children."""

    node: Annotated[OutlineNodeOut, _d("The listed node")]
    children: Annotated[list[OutlineListedOut], _d("Its children, at most limit per level")]
    total_children: Annotated[int, _d("Children of the node before the limit")]
    truncated: Annotated[bool, _d("True when a limit left children out")]


class OutlineCatOut(msgspec.Struct):
    """``cat``: a node's text, line-numbered (a folder's: its outline)."""

    node: Annotated[OutlineNodeOut, _d("The node read")]
    text: Annotated[str, _d("The node's lines, each prefixed with its number (a folder: its outline)")]
    start_line: Annotated[int, _d("First line included (1-based; 0 for a folder's outline)")]
    end_line: Annotated[int, _d("Last line included (0 for a folder's outline)")]
    truncated: Annotated[bool, _d("True when max_chars cut the text")]


class OutlineFindOut(msgspec.Struct):
    """``find``: nodes whose title matches a glob."""

    title: Annotated[str, _d("The title glob searched (case-insensitive)")]
    nodes: Annotated[list[OutlineNodeOut], _d("Matching nodes in document order, at most limit")]
    total: Annotated[int, _d("Matching nodes before the limit")]
    truncated: Annotated[bool, _d("True when more nodes matched than the limit")]


class OutlineGrepMatchOut(msgspec.Struct):
    """A matching line and the innermost node holding it."""

    node: Annotated[str, _d("Id of the innermost node holding the line")]
    title: Annotated[str, _d("Title of that node")]
    path: Annotated[str, _d("File path relative to the project root")]
    line: Annotated[int, _d("Line number (1-based)")]
    preview: Annotated[str, _d("The matching line, trimmed (about 200 characters at most)")]


class OutlineGrepOut(msgspec.Struct):
    """``grep``: matching lines under a node."""

    pattern: Annotated[str, _d("The regular expression searched")]
    node: Annotated[str, _d("Id of the node searched under")]
    matches: Annotated[list[OutlineGrepMatchOut], _d("Matching lines in outline order, at most limit")]
    files_searched: Annotated[int, _d("Files scanned before the scan ended")]
    truncated: Annotated[bool, _d("True when the limit (or the time budget) stopped the scan")]


class OutlineLocateRequest(msgspec.Struct, forbid_unknown_fields=True):
    """Where to start reading for a question."""

    question: Annotated[Question, _d("A question in natural language")]
    max_branches: Annotated[Annotated[int, Meta(ge=1, le=10)], _d("Cues returned, one per branch (1-10)")] = 3


class OutlineCueOut(msgspec.Struct):
    """A node worth opening for the question."""

    node: Annotated[str, _d("Node id")]
    title: Annotated[str, _d("Node title")]
    kind: Annotated[str, _d("Node kind, e.g. file, section or class")]
    path: Annotated[str, _d("File or folder path relative to the project root")]
    breadcrumb: Annotated[str, _d("Titles from the root to this node, joined by '/'")]
    confidence: Annotated[float, _d("0-1: matched share of the question's words and relative score")]
    reason: Annotated[str, _d("Why the node was picked, e.g. its BM25 score and matched words")]


class OutlineLocateOut(msgspec.Struct):
    """``locate``: cues, best first."""

    question: Annotated[str, _d("The question, trimmed")]
    cues: Annotated[list[OutlineCueOut], _d("Nodes to open, best first")]
    fallback: Annotated[str | None, _d("overview or root when the cue is a fallback, else null")] = None


class OutlinePlanRequest(msgspec.Struct, forbid_unknown_fields=True):
    """Build a navigation-planning prompt (a re-plan when visited/evidence/missing are given)."""

    question: Annotated[Question, _d("The question to answer")]
    node: Annotated[NodeId | None, _d("Current node id (default: the root)")] = None
    visited: Annotated[list[NodeId], _d("Node ids already read"), Meta(max_length=200)] = []
    evidence: Annotated[
        list[Annotated[str, Meta(max_length=4000)]], _d("What was found so far"), Meta(max_length=200)
    ] = []
    missing: Annotated[Annotated[str, Meta(max_length=4000)] | None, _d("What is still missing")] = None


class OutlinePlanOut(msgspec.Struct):
    """``plan``: a prompt for the caller's own LLM."""

    intent: Annotated[str, _d("factual, summary, navigational or analytical")]
    system: Annotated[str, _d("System prompt for the caller's LLM")]
    user: Annotated[str, _d("User prompt (Markdown): question, intent, current node, structure and matches")]
