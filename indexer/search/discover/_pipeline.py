"""``discover``: the nine stages chained, from a question to a cited evidence prompt."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

from indexer.errors import ValidationError
from indexer.search._engine import Searcher
from indexer.search.discover._broad import BroadResult, broad_discovery
from indexer.search.discover._compress import compress_evidence
from indexer.search.discover._config import DiscoverConfig, FocusConfig
from indexer.search.discover._expand import expand_queries
from indexer.search.discover._focus import FocusResult, semantic_focus
from indexer.search.discover._models import (
    DiscoverMetrics,
    DiscoverResult,
    ProjectRef,
    RenderedPrompt,
    ScoredChunk,
    ScoredProject,
)
from indexer.search.discover._plan import build_answer_plan
from indexer.search.discover._projects import filter_projects, project_refs, score_projects
from indexer.search.discover._readme import promote_readme
from indexer.search.discover._render import render_prompt
from indexer.search.discover._retrieve import Retriever

__all__ = [
    "HasSearcher",
    "discover",
    "focus_projects",
    "merge_chunks",
    "names_project",
    "open_retriever",
    "searcher_of",
    "validate_question",
]

MAX_QUESTION_CHARS = 2_000


class HasSearcher(Protocol):
    """Anything holding a search engine (``indexer.api.Lode``)."""

    @property
    def searcher(self) -> Searcher:
        """The search engine."""
        ...


def searcher_of(target: Searcher | HasSearcher) -> Searcher:
    """The search engine of a ``Lode`` (or the engine itself)."""
    return target if isinstance(target, Searcher) else target.searcher


def validate_question(question: str, field: str = "question") -> str:
    """The question, or a ValidationError naming ``field``."""
    if not question.strip():
        raise ValidationError(field, "must not be empty")
    if len(question) > MAX_QUESTION_CHARS or "\x00" in question:
        raise ValidationError(field, f"must be at most {MAX_QUESTION_CHARS} characters, without NUL")
    return question.strip()


def names_project(terms: Sequence[str], name: str) -> bool:
    """True when a term is the project's name or a whole part of it (``click`` in ``click-docs``)."""
    parts = {name.lower(), *(p for p in re.split(r"[^a-z0-9]+", name.lower()) if p)}
    return any(t.lower() in parts for t in terms)


def focus_projects(
    scored: Sequence[ScoredProject],
    evidence: Sequence[ScoredChunk],
    config: FocusConfig | None = None,
    terms: Sequence[str] = (),
) -> list[ProjectRef]:
    """The ``top_projects`` best projects by their stage 2 score mixed with their share of the
    broad-discovery evidence (``evidence_weight``); with ``prefer_named_projects``, only the
    projects a question term names, if any."""
    config = config or FocusConfig()
    total = sum(c.score for c in evidence) or 1.0
    share: dict[str, float] = {}
    for chunk in evidence:
        share[chunk.project] = share.get(chunk.project, 0.0) + chunk.score / total
    named = [s for s in scored if names_project(terms, s.project.name)]
    if config.prefer_named_projects and named:
        scored = named
    w = config.evidence_weight
    ranked = sorted(
        scored, key=lambda s: (-((1 - w) * s.score + w * share.get(s.project.name, 0.0)), s.project.name)
    )
    return [s.project for s in ranked[: config.top_projects]]


def merge_chunks(*groups: Sequence[ScoredChunk]) -> list[ScoredChunk]:
    """Chunks of several stages, each once (its best-scored copy), best first."""
    best: dict[str, ScoredChunk] = {}
    for group in groups:
        for chunk in group:
            if chunk.key not in best or chunk.score > best[chunk.key].score:
                best[chunk.key] = chunk
    return sorted(best.values(), key=lambda c: (-c.score, c.key))


class _Clock:
    """Milliseconds per stage."""

    def __init__(self) -> None:
        self.ms: dict[str, float] = {}
        self.started = time.perf_counter()

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.ms[stage] = round((time.perf_counter() - start) * 1000, 3)

    def total(self) -> float:
        return round((time.perf_counter() - self.started) * 1000, 3)


def open_retriever(
    searcher: Searcher, queries: Sequence[str], projects: Sequence[ProjectRef], config: DiscoverConfig
) -> Retriever:
    """A retriever for ``queries`` (embedded in one batch) over ``projects``."""
    lexical = len(queries) if config.broad.lexical_expansions else 1
    return Retriever(searcher, queries, names={p.id: p.name for p in projects}, lexical_queries=lexical)


def _prefetch(retriever: Retriever, projects: Sequence[ProjectRef], config: DiscoverConfig) -> None:
    """When focus will search the same projects as broad discovery, fetch both depths at once."""
    if len(projects) <= config.focus.top_projects:
        k = max(config.broad.k_per_query, config.focus.candidates_per_query)
        retriever.fetch(tuple(p.id for p in projects), k)


@dataclass(frozen=True, slots=True)
class _Found:
    """Stages 1 to 6: what was searched and the chunks of evidence."""

    projects: tuple[ProjectRef, ...]
    terms: tuple[str, ...]
    queries: list[str]
    broad: BroadResult
    focus: FocusResult
    focused: list[ProjectRef]
    chunks: list[ScoredChunk]


def _search(searcher: Searcher, question: str, config: DiscoverConfig, clock: _Clock) -> _Found:
    with clock("filter_projects"):
        filtered = filter_projects(question, project_refs(searcher.store), config.filter)
    with clock("score_projects"):
        scored = score_projects(filtered.terms, filtered.projects, config.scoring)
    with clock("expand_queries"):
        queries = expand_queries(question, config.expansion, config.filter.extra_stopwords)
    broad, focus, top = BroadResult((), 0, 0, 0), FocusResult((), 0, 0), list[ProjectRef]()
    if filtered.projects:
        with clock("embed_queries"):
            retriever = open_retriever(searcher, queries, filtered.projects, config)
        with clock("broad_discovery"):
            _prefetch(retriever, filtered.projects, config)
            broad = broad_discovery(retriever, filtered.projects, config.broad)
        with clock("semantic_focus"):
            top = focus_projects(scored, broad.chunks, config.focus, filtered.terms)
            focus = semantic_focus(retriever, filtered.terms, top, config.focus)
    with clock("promote_readme"):
        chunks = promote_readme(merge_chunks(broad.chunks, focus.chunks), config.readme)
    return _Found(filtered.projects, filtered.terms, queries, broad, focus, top, chunks)


def _metrics(found: _Found, clock: _Clock, bullets: int, prompt: RenderedPrompt) -> DiscoverMetrics:
    return DiscoverMetrics(
        stage_ms=clock.ms,
        total_ms=clock.total(),
        projects_searched=len(found.projects),
        projects=tuple(p.name for p in found.projects),
        focus_projects=tuple(p.name for p in found.focused),
        queries=tuple(found.queries),
        chunks_found=found.broad.found,
        chunks_after_threshold=found.broad.after_threshold,
        chunks_after_dedup=found.broad.after_dedup,
        chunks_selected=len(found.broad.chunks),
        focus_chunks=found.focus.hits,
        context_chunks=found.focus.context,
        chunks=len(found.chunks),
        bullets=bullets,
        prompt_tokens=prompt.tokens,
        dropped_bullets=prompt.dropped_bullets,
    )


def discover(
    target: Searcher | HasSearcher, question: str, config: DiscoverConfig | None = None
) -> DiscoverResult:
    """Run the nine stages on ``question`` and return the prompt, plan, bullets, chunks and metrics."""
    question = validate_question(question)
    config = config or DiscoverConfig()
    searcher = searcher_of(target)
    clock = _Clock()
    found = _search(searcher, question, config, clock)
    with clock("compress_evidence"):
        bullets = compress_evidence(found.terms, found.chunks, config.compression)
    with clock("build_answer_plan"):
        plan = build_answer_plan(bullets, config.plan)
    with clock("render_prompt"):
        meta = {
            "projects": ", ".join(p.name for p in found.projects),
            "queries": len(found.queries),
            "chunks": len(found.chunks),
        }
        prompt = render_prompt(question, plan, config.render, searcher.embedder.count_tokens, meta)
    warnings = [] if found.projects else ["no project matches the include/exclude globs"]
    if prompt.dropped_bullets:
        warnings.append(f"{prompt.dropped_bullets} bullet(s) dropped to fit max_prompt_tokens")
    metrics = _metrics(found, clock, len(bullets), prompt)
    return DiscoverResult(
        question, prompt.text, plan, tuple(bullets), tuple(found.chunks), metrics, tuple(warnings)
    )
