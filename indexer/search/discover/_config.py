"""Settings of the discovery pipeline: one frozen section per stage, defaults from the design.

The sections mirror the ``[discover.*]`` tables of the config file (``docs/lode.example.toml``)
and the ``config`` object of ``POST /api/v1/discover``; ``with_overrides`` applies either.
"""

from __future__ import annotations

import math
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Final

import msgspec

from indexer.errors import ConfigError, FieldError, ValidationError
from indexer.limits import MAX_GLOBS, MAX_NAMES, MAX_TEXT_CHARS, items_problem, quote

__all__ = [
    "CATEGORIES",
    "FORMATS",
    "BroadConfig",
    "CompressionConfig",
    "DiscoverConfig",
    "ExpansionConfig",
    "FilterConfig",
    "FocusConfig",
    "PlanConfig",
    "ReadmeConfig",
    "RenderConfig",
    "ScoringConfig",
    "with_overrides",
]

#: Bullet categories, in the default order of the answer plan's sections.
CATEGORIES: Final = (
    "definition", "feature", "architecture", "performance", "integration", "use_case", "other",
)  # fmt: skip
#: Prompt formats.
FORMATS: Final = ("markdown", "plain", "json")
#: Expansion template groups, in round-robin order.
TEMPLATE_GROUPS: Final = ("definition", "features", "architecture", "api", "performance", "use_cases")

_TEMPLATES: Final[dict[str, tuple[str, ...]]] = {
    "definition": ("{terms} definition", "what is {terms}"),
    "features": ("{terms} features", "{terms} capabilities", "{terms} main functionality"),
    "architecture": ("{terms} architecture", "{terms} components", "{terms} system design"),
    "api": ("{terms} API", "{terms} usage"),
    "performance": ("{terms} performance", "{terms} benchmarks"),
    "use_cases": ("{terms} use cases", "{terms} examples"),
}


def _positive(name: str, value: float) -> None:
    if not value > 0 or math.isinf(value):
        raise ConfigError(f"{name} must be > 0 (got {value})")


def _unit(name: str, value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise ConfigError(f"{name} must be between 0 and 1 (got {value})")


def _at_least(name: str, value: int, low: int, high: int = 1000) -> None:
    if not low <= value <= high:
        raise ConfigError(f"{name} must be between {low} and {high} (got {value})")


def _weight(name: str, value: float) -> None:
    if not 0.0 <= value <= 1000.0:
        raise ConfigError(f"{name} must be between 0 and 1000 (got {value})")


@dataclass(frozen=True, slots=True)
class FilterConfig:
    """Stage 1: which projects are searched (projects play the role of collections)."""

    include: tuple[str, ...] = ()
    """Globs on project names to search; empty means every project."""
    exclude: tuple[str, ...] = ()
    """Globs on project names never searched."""
    extra_stopwords: tuple[str, ...] = ()
    """Words removed from the question on top of the English and Portuguese stop words."""

    def __post_init__(self) -> None:
        for name, most in (("include", MAX_GLOBS), ("exclude", MAX_GLOBS), ("extra_stopwords", MAX_NAMES)):
            values = getattr(self, name)
            if len(values) > most or any(len(v) > MAX_TEXT_CHARS for v in values):
                raise ConfigError(f"{name} {items_problem(values, most)}")
            if any(not v.strip() or "\x00" in v for v in values):
                raise ConfigError(f"{name} must not contain empty strings or NUL")


@dataclass(frozen=True, slots=True)
class ScoringConfig:
    """Stage 2: how projects are ranked (the top ones get a focused search)."""

    name_match_weight: float = 0.4
    """Weight of the share of question terms found in the project's name."""
    term_boost_weight: float = 0.3
    """Weight of boost terms (``boost_terms``) in the project's name."""
    signal_boost_weight: float = 0.3
    """Weight of the size, recency and tag signals."""
    recency_decay_days: float = 90.0
    """Days for the recency signal to decay by a factor e (``exp(-age / days)``)."""
    size_saturation_chunks: int = 1_000_000
    """Chunk count at which the (logarithmic) size signal reaches 1."""
    boost_terms: tuple[str, ...] = ("docs", "source", "api", "sdk", "core")
    """Name parts that mark a project as a primary source."""
    important_tags: tuple[str, ...] = ("documentation", "code", "api")
    """Tags (derived from a project's files) that count for the tag signal."""

    def __post_init__(self) -> None:
        for name in ("name_match_weight", "term_boost_weight", "signal_boost_weight"):
            _weight(name, getattr(self, name))
        _positive("recency_decay_days", self.recency_decay_days)
        _at_least("size_saturation_chunks", self.size_saturation_chunks, 2, 10**12)


@dataclass(frozen=True, slots=True)
class ExpansionConfig:
    """Stage 3: deterministic query expansion from the question's main terms."""

    include_definition: bool = True
    """Add definition queries (``X definition``, ``what is X``)."""
    include_features: bool = True
    """Add feature queries (``X features``, ``X capabilities``…)."""
    include_architecture: bool = True
    """Add architecture queries (``X architecture``, ``X components``…)."""
    include_api: bool = True
    """Add API queries (``X API``, ``X usage``)."""
    include_performance: bool = True
    """Add performance queries (``X performance``, ``X benchmarks``)."""
    include_use_cases: bool = True
    """Add use-case queries (``X use cases``, ``X examples``)."""
    max_expansions: int = 8
    """Most queries, the original question included."""
    main_term_words: int = 3
    """How many of the question's terms (stop words removed) form ``{terms}``."""
    templates: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(_TEMPLATES))
    """Templates per group (``definition``, ``features``, ``architecture``, ``api``,
    ``performance``, ``use_cases``); ``{terms}`` is replaced by the main terms. Groups are
    taken round-robin: the first template of every group, then the second…"""

    def __post_init__(self) -> None:
        _at_least("max_expansions", self.max_expansions, 1, 64)
        _at_least("main_term_words", self.main_term_words, 1, 20)
        unknown = sorted(set(self.templates) - set(TEMPLATE_GROUPS))
        if unknown:
            raise ConfigError(f"templates: unknown group(s) {unknown}; known: {list(TEMPLATE_GROUPS)}")
        for group, items in self.templates.items():
            if any("{terms}" not in t or len(t) > 200 for t in items):
                raise ConfigError(
                    f"templates.{group}: every template must contain {{terms}} (200 chars at most)"
                )


@dataclass(frozen=True, slots=True)
class BroadConfig:
    """Stage 4: every expansion searched across the filtered projects, then MMR."""

    k_per_query: int = 10
    """Candidates taken per query from each list (vectors, full text)."""
    broad_k: int = 50
    """Chunks kept after MMR."""
    mmr_lambda: float = 0.7
    """MMR trade-off: 1 is pure relevance, 0 pure diversity (embedding similarity)."""
    similarity_threshold: float = 0.3
    """Chunks whose best cosine similarity to any query is lower are dropped."""
    enable_deduplication: bool = True
    """Remove near-duplicate chunks (embedding similarity above ``dedup_threshold``)."""
    dedup_threshold: float = 0.85
    """Cosine similarity above which two chunks are near-duplicates (the better one stays)."""
    lexical_expansions: bool = False
    """Full-text search every expansion too, not only the question (slower; expansions
    mostly repeat the question's terms, and all of them are searched by vector)."""

    def __post_init__(self) -> None:
        _at_least("k_per_query", self.k_per_query, 1)
        _at_least("broad_k", self.broad_k, 1)
        _unit("mmr_lambda", self.mmr_lambda)
        _unit("similarity_threshold", self.similarity_threshold)
        _unit("dedup_threshold", self.dedup_threshold)


@dataclass(frozen=True, slots=True)
class FocusConfig:
    """Stage 5: a deeper search in the top projects, reranked, with neighbouring chunks."""

    top_projects: int = 3
    """How many of the best projects get the focused search."""
    focus_k: int = 15
    """Chunks kept after reranking (neighbours come on top)."""
    candidates_per_query: int = 30
    """Candidates taken per query from each list."""
    similarity_threshold: float = 0.35
    """Stricter than the broad threshold: best cosine similarity to any query."""
    semantic_reranking: bool = True
    """Rerank by term frequency, sentence quality and position in the file."""
    rerank_base_weight: float = 0.6
    """Weight of the retrieval score in the reranked score."""
    rerank_tf_weight: float = 0.2
    """Weight of the share of question terms found in the chunk."""
    rerank_quality_weight: float = 0.1
    """Weight of sentence quality (prose sentences or a documented code unit)."""
    rerank_position_weight: float = 0.1
    """Weight of the position boost ``1 / (1 + 0.1 * chunk_index)``."""
    context_window: int = 3
    """Neighbouring chunks (same file, ``chunk_index ± n``) added around each focused chunk."""
    context_decay: float = 0.5
    """A neighbour at distance d scores the focused chunk's score times ``decay ** d``."""
    prefer_named_projects: bool = True
    """When the question names projects (a term is a project's name or a whole part of it,
    ``click`` for ``click-docs``), only those get the focused search."""
    evidence_weight: float = 0.5
    """Share of the focus ranking given to a project's broad-discovery evidence (the rest is
    the stage 2 score); lode's addition so ordinary questions focus where the evidence is."""

    def __post_init__(self) -> None:
        _at_least("top_projects", self.top_projects, 1, 100)
        _at_least("focus_k", self.focus_k, 1)
        _at_least("candidates_per_query", self.candidates_per_query, 1)
        _at_least("context_window", self.context_window, 0, 50)
        for name in ("similarity_threshold", "context_decay", "evidence_weight"):
            _unit(name, getattr(self, name))
        for name in ("base", "tf", "quality", "position"):
            _weight(f"rerank_{name}_weight", getattr(self, f"rerank_{name}_weight"))


@dataclass(frozen=True, slots=True)
class ReadmeConfig:
    """Stage 6: README files (and top-level docs) first."""

    readme_boost: float = 1.5
    """Score multiplier of README chunks."""
    docs_boost: float = 1.2
    """Score multiplier of top-level documentation chunks (``docs_patterns``)."""
    always_top: bool = True
    """Place README chunks before every other chunk (else they are only boosted)."""
    readme_patterns: tuple[str, ...] = ("README", "README.*", "readme.*")
    """File-name globs (any folder, case-insensitive) of README files."""
    docs_patterns: tuple[str, ...] = ("*.md", "*.rst", "docs/*", "doc/*")
    """Path globs (case-insensitive) of top-level docs; a glob without ``/`` matches top-level
    files only."""

    def __post_init__(self) -> None:
        for name in ("readme_boost", "docs_boost"):
            _positive(name, getattr(self, name))
            _weight(name, getattr(self, name))


@dataclass(frozen=True, slots=True)
class CompressionConfig:
    """Stage 7: key sentences and code signatures, cited as ``project:path:Lstart-Lend``."""

    min_sentence_words: int = 8
    """Shorter prose sentences are not evidence."""
    max_sentence_words: int = 30
    """Longer prose sentences are not evidence."""
    prefer_starts: bool = True
    """Favour a chunk's first sentences (where prose states its point)."""
    include_citations: bool = True
    """Give every bullet its citation (render shows it unless ``include_sources`` is off)."""
    max_bullets: int = 20
    """Most bullets in all."""
    max_per_doc: int = 3
    """Most bullets from one file."""
    max_per_chunk: int = 2
    """Most bullets from one chunk."""
    code_lines: int = 2
    """Most relevant lines quoted after a code unit's signature."""

    def __post_init__(self) -> None:
        _at_least("min_sentence_words", self.min_sentence_words, 1)
        if self.max_sentence_words < self.min_sentence_words:
            raise ConfigError("max_sentence_words must be >= min_sentence_words")
        for name in ("max_bullets", "max_per_doc", "max_per_chunk"):
            _at_least(name, getattr(self, name), 1)
        _at_least("code_lines", self.code_lines, 0, 20)


@dataclass(frozen=True, slots=True)
class PlanConfig:
    """Stage 8: sections of the answer, in priority order."""

    sections: tuple[str, ...] = CATEGORIES
    """Bullet categories that become sections, in this order (others are left out)."""
    min_bullets_per_section: int = 1
    """A section with fewer bullets is left out."""
    max_bullets_per_section: int = 5
    """Most bullets in one section (the best by score)."""

    def __post_init__(self) -> None:
        unknown = sorted(set(self.sections) - set(CATEGORIES))
        if unknown:
            raise ConfigError(f"sections: unknown categories {unknown}; known: {list(CATEGORIES)}")
        _at_least("min_bullets_per_section", self.min_bullets_per_section, 1, 100)
        if self.max_bullets_per_section < self.min_bullets_per_section:
            raise ConfigError("max_bullets_per_section must be >= min_bullets_per_section")


@dataclass(frozen=True, slots=True)
class RenderConfig:
    """Stage 9: the prompt handed to an LLM."""

    format_style: str = "markdown"
    """``markdown``, ``plain`` or ``json``."""
    max_prompt_tokens: int = 4000
    """Token budget (the embedding model's tokenizer); whole bullets are dropped to fit."""
    include_sources: bool = True
    """Show citations after bullets and a sources list."""
    include_metadata: bool = False
    """Add a block with the pipeline's numbers (projects, queries, chunks)."""

    def __post_init__(self) -> None:
        if self.format_style not in FORMATS:
            raise ConfigError(
                f"format_style must be one of {', '.join(FORMATS)} (got {quote(self.format_style)})"
            )
        _at_least("max_prompt_tokens", self.max_prompt_tokens, 50, 1_000_000)


@dataclass(frozen=True, slots=True)
class DiscoverConfig:
    """Every setting of ``discover``, one section per stage (the ``[discover]`` file table)."""

    filter: FilterConfig = field(default_factory=FilterConfig)
    """Stage 1 settings."""
    scoring: ScoringConfig = field(default_factory=ScoringConfig)
    """Stage 2 settings."""
    expansion: ExpansionConfig = field(default_factory=ExpansionConfig)
    """Stage 3 settings."""
    broad: BroadConfig = field(default_factory=BroadConfig)
    """Stage 4 settings."""
    focus: FocusConfig = field(default_factory=FocusConfig)
    """Stage 5 settings."""
    readme: ReadmeConfig = field(default_factory=ReadmeConfig)
    """Stage 6 settings."""
    compression: CompressionConfig = field(default_factory=CompressionConfig)
    """Stage 7 settings."""
    plan: PlanConfig = field(default_factory=PlanConfig)
    """Stage 8 settings."""
    render: RenderConfig = field(default_factory=RenderConfig)
    """Stage 9 settings."""


def _section(config: DiscoverConfig, name: str, values: Any, prefix: str) -> Any:
    current = getattr(config, name)
    if not isinstance(values, Mapping):
        raise ValidationError(f"{prefix}{name}", "must be a table/object of settings")
    hints = typing.get_type_hints(type(current))
    known = {f.name for f in fields(current)}
    unknown = [k for k in values if k not in known]
    if unknown:
        first, *more = [FieldError(f"{prefix}{name}.{k}", "unknown setting") for k in unknown]
        raise ValidationError(first.field, f"unknown setting; known: {sorted(known)}", more=tuple(more))
    changes: dict[str, Any] = {}
    for key, value in values.items():
        try:
            changes[key] = msgspec.convert(value, hints[key])
        except msgspec.ValidationError as exc:
            raise ValidationError(f"{prefix}{name}.{key}", str(exc).split(" - at ")[0]) from None
    try:
        return replace(current, **changes)
    except ConfigError as exc:
        raise ValidationError(f"{prefix}{name}", exc.message) from None


def with_overrides(
    config: DiscoverConfig, overrides: Mapping[str, Any] | None, prefix: str = "config."
) -> DiscoverConfig:
    """``config`` with nested overrides (``{"broad": {"mmr_lambda": 0.5}}``) applied.

    Unknown sections or settings and bad values raise a ValidationError naming them, as
    ``prefix`` + ``section.setting``.
    """
    if not overrides:
        return config
    sections = {f.name for f in fields(config)}
    unknown = [k for k in overrides if k not in sections]
    if unknown:
        first, *more = [FieldError(f"{prefix}{k}", "unknown section") for k in unknown]
        raise ValidationError(first.field, f"unknown section; known: {sorted(sections)}", more=tuple(more))
    return replace(config, **{k: _section(config, k, v, prefix) for k, v in overrides.items()})
