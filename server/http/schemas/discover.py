"""HTTP types of discovery (``POST /api/v1/discover`` and its stages).

Field names mirror ``indexer.search.discover`` dataclasses one for one; responses are
converted from those by attribute, never built by hand.
"""

from __future__ import annotations

import typing
from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from indexer.limits import MAX_GLOBS, MAX_QUERY_CHARS, MAX_TEXT_CHARS
from server.http.schemas._choices import PromptFormat
from server.http.schemas._fields import (
    ChunkId,
    ChunkIndex,
    ChunkLanguage,
    ChunkText,
    EndLine,
    FileId,
    FilePath,
    NodeName,
    NodeType,
    ProjectId,
    ProjectName,
    StartLine,
)
from server.http.schemas._fields import describe as _d

__all__ = [
    "STAGE_RESPONSES",
    "AnswerPlanOut",
    "BroadDiscoveryResultOut",
    "BroadDiscoveryStageOut",
    "BuildAnswerPlanResultOut",
    "BuildAnswerPlanStageOut",
    "BulletOut",
    "CompressEvidenceResultOut",
    "CompressEvidenceStageOut",
    "DiscoverMetricsOut",
    "DiscoverRequest",
    "DiscoverResponseOut",
    "EvidenceChunkOut",
    "ExpandQueriesResultOut",
    "ExpandQueriesStageOut",
    "FilterProjectsResultOut",
    "FilterProjectsStageOut",
    "ProjectRefOut",
    "PromoteReadmeResultOut",
    "PromoteReadmeStageOut",
    "RenderPromptResultOut",
    "RenderPromptStageOut",
    "RenderedPromptOut",
    "ScoreProjectsResultOut",
    "ScoreProjectsStageOut",
    "ScoredProjectOut",
    "SectionOut",
    "SemanticFocusResultOut",
    "SemanticFocusStageOut",
    "StageResponseOut",
]

Str = Annotated[str, Meta(min_length=1, max_length=MAX_TEXT_CHARS)]


class DiscoverRequest(msgspec.Struct, forbid_unknown_fields=True):
    """A question, and optionally which projects to search and per-request settings."""

    question: Annotated[
        str,
        _d("What to find out, e.g. 'what is shop' or 'how are discounts applied'"),
        Meta(max_length=MAX_QUERY_CHARS),
    ]
    include: Annotated[
        list[Str], _d("Globs on project names to search (default: every project)"), Meta(max_length=MAX_GLOBS)
    ] = []
    exclude: Annotated[
        list[Str], _d("Globs on project names never searched"), Meta(max_length=MAX_GLOBS)
    ] = []
    format: Annotated[
        PromptFormat | None, _d("Prompt format: markdown, plain or json (config.render.format_style)")
    ] = None
    max_tokens: Annotated[int | None, _d("Prompt token budget (config.render.max_prompt_tokens)")] = None
    max_bullets: Annotated[int | None, _d("Most evidence bullets (config.compression.max_bullets)")] = None
    config: Annotated[
        dict[str, dict[str, Any]] | None,
        _d(
            "Overrides per stage, as in the [discover.*] tables of the config file, "
            "e.g. {'broad': {'mmr_lambda': 0.5}, 'focus': {'context_window': 1}}"
        ),
    ] = None


class EvidenceChunkOut(msgspec.Struct):
    """A chunk of evidence and the stage that found it."""

    project: ProjectName
    file_path: FilePath
    content: ChunkText
    start_line: StartLine
    end_line: EndLine
    chunk_index: ChunkIndex
    score: Annotated[float, _d("Relevance after the stage's reranking and README promotion")]
    similarity: Annotated[float | None, _d("Best cosine similarity to any query (null without a vector)")]
    id: ChunkId
    file_id: FileId
    project_id: ProjectId
    language: ChunkLanguage
    node_type: NodeType
    node_name: NodeName
    origin: Annotated[
        Literal["broad", "focus", "context"], _d("broad, focus, or context (a neighbour of a focused chunk)")
    ]
    citation: Annotated[str, _d("project:path:Lstart-Lend")]


class BulletOut(msgspec.Struct):
    """One piece of evidence."""

    text: Annotated[str, _d("A key sentence, or a code signature with its summary and key lines")]
    citation: Annotated[str, _d("project:path:Lstart-Lend of the sentence or code unit")]
    category: Annotated[
        str, _d("definition, feature, architecture, performance, integration, use_case, other")
    ]
    score: Annotated[float, _d("The source chunk's score times a 0.7-1 factor (may exceed 1)")]
    project: ProjectName
    file_path: FilePath
    start_line: Annotated[int, _d("First cited line (1-based)")]
    end_line: Annotated[int, _d("Last cited line (1-based, inclusive)")]
    kind: Annotated[Literal["prose", "code"], _d("prose or code")]
    chunk_id: Annotated[str, _d("Id of the chunk the bullet was taken from")]


class SectionOut(msgspec.Struct):
    """A section of the answer plan."""

    title: Annotated[str, _d("Section heading, e.g. Definition or Key Features")]
    category: Annotated[str, _d("The bullet category the section holds")]
    priority: Annotated[int, _d("1 = first")]
    bullets: Annotated[list[BulletOut], _d("The section's bullets, best first")]


class AnswerPlanOut(msgspec.Struct):
    """Sections in priority order and the files they cite."""

    sections: Annotated[list[SectionOut], _d("Sections in priority order")]
    total_bullets: Annotated[int, _d("Bullets in the plan")]
    sources: Annotated[list[str], _d("project:path of every cited file")]
    omitted: Annotated[int, _d("Bullets left out of the plan (section full or too small)")]


class DiscoverMetricsOut(msgspec.Struct):
    """Time per stage and the size of every step."""

    stage_ms: Annotated[dict[str, float], _d("Milliseconds per stage (embed_queries: the one query batch)")]
    total_ms: Annotated[float, _d("Milliseconds for the whole discovery")]
    projects_searched: Annotated[int, _d("Projects left after the include/exclude globs")]
    projects: Annotated[list[str], _d("Names of the projects searched")]
    focus_projects: Annotated[list[str], _d("Projects that got the focused search")]
    queries: Annotated[list[str], _d("The question and its expansions")]
    chunks_found: Annotated[int, _d("Broad candidates before the similarity threshold")]
    chunks_after_threshold: Annotated[
        int, _d("Broad candidates at or above the similarity threshold (or without a vector)")
    ]
    chunks_after_dedup: Annotated[int, _d("Broad candidates left after near-duplicate removal")]
    chunks_selected: Annotated[int, _d("Broad chunks kept by MMR")]
    focus_chunks: Annotated[int, _d("Chunks the focused search kept, before neighbours were added")]
    context_chunks: Annotated[int, _d("Neighbours added around focused chunks")]
    chunks: Annotated[int, _d("Chunks after merging broad and focus")]
    bullets: Annotated[int, _d("Evidence bullets extracted from the chunks")]
    prompt_tokens: Annotated[int, _d("Prompt size with the embedding model's tokenizer")]
    dropped_bullets: Annotated[int, _d("Bullets dropped to fit the token budget")]


class DiscoverResponseOut(msgspec.Struct):
    """The prompt for an LLM and everything it was built from."""

    question: Annotated[str, _d("The question, trimmed")]
    answer_prompt: Annotated[str, _d("The rendered prompt (markdown, plain text or JSON text)")]
    plan: Annotated[AnswerPlanOut, _d("The bullets grouped into sections")]
    bullets: Annotated[list[BulletOut], _d("Every evidence bullet, best first")]
    chunks: Annotated[
        list[EvidenceChunkOut],
        _d("Evidence from broad and focused search, with neighbours; README chunks boosted"),
    ]
    metrics: Annotated[DiscoverMetricsOut, _d("Time per stage and the size of every step")]
    warnings: Annotated[
        list[str], _d("Notes, e.g. no project matched or bullets dropped to fit the token budget")
    ]


class ProjectRefOut(msgspec.Struct):
    """A project as discovery sees it."""

    name: ProjectName
    id: ProjectId
    root: Annotated[str, _d("Absolute folder")]
    documents: Annotated[int, _d("Indexed files")]
    chunks: Annotated[int, _d("Indexed chunks")]
    updated_at: Annotated[datetime | None, _d("When it was last indexed (UTC); null if never")]
    tags: Annotated[list[str], _d("Derived from its files: documentation, code, api")]


class ScoredProjectOut(msgspec.Struct):
    """A project with its score (0-1) and the parts of it."""

    project: Annotated[ProjectRefOut, _d("The project")]
    score: Annotated[float, _d("0-1: the parts below combined")]
    name_match: Annotated[float, _d("0-1: share of the question's terms in its name")]
    term_boost: Annotated[float, _d("0-1: share of the configured boost terms in its name")]
    signals: Annotated[float, _d("0-1: its size, recency and important tags")]


class RenderedPromptOut(msgspec.Struct):
    """The prompt, its size in model tokens, and what was dropped to fit the budget."""

    text: Annotated[str, _d("The rendered prompt")]
    format: Annotated[PromptFormat, _d("markdown, plain or json")]
    tokens: Annotated[int, _d("Its size with the embedding model's tokenizer")]
    max_tokens: Annotated[int, _d("The token budget")]
    dropped_bullets: Annotated[int, _d("Bullets dropped to fit the budget")]
    dropped_by_section: Annotated[dict[str, int], _d("Bullets dropped, per section title")]


_CHUNKS = Annotated[list[EvidenceChunkOut], _d("Chunks of evidence, best first")]
_TERMS = Annotated[list[str], _d("Key terms of the question")]
_TOOK = Annotated[float, _d("Milliseconds the stage took on the server")]


class FilterProjectsResultOut(msgspec.Struct):
    """The output of filter_projects."""

    terms: _TERMS
    projects: Annotated[list[ProjectRefOut], _d("Projects kept by the include/exclude globs")]


class ScoreProjectsResultOut(msgspec.Struct):
    """The output of score_projects."""

    terms: _TERMS
    projects: Annotated[list[ScoredProjectOut], _d("Projects with their scores, best first")]


class ExpandQueriesResultOut(msgspec.Struct):
    """The output of expand_queries."""

    queries: Annotated[list[str], _d("The question and its expansions")]


class BroadDiscoveryResultOut(msgspec.Struct):
    """The output of broad_discovery."""

    chunks: _CHUNKS
    found: Annotated[int, _d("Candidates before the similarity threshold")]
    after_threshold: Annotated[int, _d("Candidates at or above the threshold (or without a vector)")]
    after_dedup: Annotated[int, _d("Candidates left after near-duplicate removal")]


class SemanticFocusResultOut(msgspec.Struct):
    """The output of semantic_focus."""

    chunks: _CHUNKS
    hits: Annotated[int, _d("Chunks the focused search kept")]
    context: Annotated[int, _d("Neighbours added around them")]


class PromoteReadmeResultOut(msgspec.Struct):
    """The output of promote_readme."""

    chunks: _CHUNKS


class CompressEvidenceResultOut(msgspec.Struct):
    """The output of compress_evidence."""

    bullets: Annotated[list[BulletOut], _d("Evidence bullets, best first")]


class BuildAnswerPlanResultOut(msgspec.Struct):
    """The output of build_answer_plan."""

    plan: Annotated[AnswerPlanOut, _d("The bullets grouped into sections")]


class RenderPromptResultOut(msgspec.Struct):
    """The output of render_prompt."""

    prompt: Annotated[RenderedPromptOut, _d("The rendered prompt")]


class FilterProjectsStageOut(msgspec.Struct, tag_field="stage", tag="filter_projects"):
    """filter_projects ran: the projects its globs keep."""

    took_ms: _TOOK
    result: Annotated[FilterProjectsResultOut, _d("The stage's output (feed it to the next stage)")]


class ScoreProjectsStageOut(msgspec.Struct, tag_field="stage", tag="score_projects"):
    """score_projects ran: the projects scored against the question."""

    took_ms: _TOOK
    result: Annotated[ScoreProjectsResultOut, _d("The stage's output (feed it to the next stage)")]


class ExpandQueriesStageOut(msgspec.Struct, tag_field="stage", tag="expand_queries"):
    """expand_queries ran: the question and its expansions."""

    took_ms: _TOOK
    result: Annotated[ExpandQueriesResultOut, _d("The stage's output (feed it to the next stage)")]


class BroadDiscoveryStageOut(msgspec.Struct, tag_field="stage", tag="broad_discovery"):
    """broad_discovery ran: chunks found by every query."""

    took_ms: _TOOK
    result: Annotated[BroadDiscoveryResultOut, _d("The stage's output (feed it to the next stage)")]


class SemanticFocusStageOut(msgspec.Struct, tag_field="stage", tag="semantic_focus"):
    """semantic_focus ran: chunks of the focused search and their neighbours."""

    took_ms: _TOOK
    result: Annotated[SemanticFocusResultOut, _d("The stage's output (feed it to the next stage)")]


class PromoteReadmeStageOut(msgspec.Struct, tag_field="stage", tag="promote_readme"):
    """promote_readme ran: the chunks with README chunks boosted."""

    took_ms: _TOOK
    result: Annotated[PromoteReadmeResultOut, _d("The stage's output (feed it to the next stage)")]


class CompressEvidenceStageOut(msgspec.Struct, tag_field="stage", tag="compress_evidence"):
    """compress_evidence ran: the chunks as cited bullets."""

    took_ms: _TOOK
    result: Annotated[CompressEvidenceResultOut, _d("The stage's output (feed it to the next stage)")]


class BuildAnswerPlanStageOut(msgspec.Struct, tag_field="stage", tag="build_answer_plan"):
    """build_answer_plan ran: the bullets in sections."""

    took_ms: _TOOK
    result: Annotated[BuildAnswerPlanResultOut, _d("The stage's output (feed it to the next stage)")]


class RenderPromptStageOut(msgspec.Struct, tag_field="stage", tag="render_prompt"):
    """render_prompt ran: the prompt within its token budget."""

    took_ms: _TOOK
    result: Annotated[RenderPromptResultOut, _d("The stage's output (feed it to the next stage)")]


#: The answer of ``POST /api/v1/discover/{stage}``: one shape per stage, told apart by ``stage``.
StageResponseOut = (
    FilterProjectsStageOut
    | ScoreProjectsStageOut
    | ExpandQueriesStageOut
    | BroadDiscoveryStageOut
    | SemanticFocusStageOut
    | PromoteReadmeStageOut
    | CompressEvidenceStageOut
    | BuildAnswerPlanStageOut
    | RenderPromptStageOut
)
#: Each stage's answer type, by stage name.
STAGE_RESPONSES: dict[str, type[msgspec.Struct]] = {
    str(t.__struct_config__.tag): t for t in typing.get_args(StageResponseOut)
}
