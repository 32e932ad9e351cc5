"""One stage on JSON input (``POST /api/v1/discover/{stage}``, the MCP stage tools).

Each stage reads a JSON object (its fields below, plus ``config``: overrides as in
``discover``) and answers a JSON object; the output of one stage can be fed to the next.
Bad input is a ValidationError naming the field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Final

import msgspec

from indexer.errors import FieldError, ValidationError
from indexer.limits import quote_items
from indexer.search._engine import Searcher
from indexer.search.discover._broad import broad_discovery
from indexer.search.discover._compress import compress_evidence
from indexer.search.discover._config import DiscoverConfig, with_overrides
from indexer.search.discover._expand import expand_queries
from indexer.search.discover._focus import semantic_focus
from indexer.search.discover._models import AnswerPlan, Bullet, ProjectRef, ScoredChunk
from indexer.search.discover._pipeline import (
    HasSearcher,
    focus_projects,
    open_retriever,
    searcher_of,
    validate_question,
)
from indexer.search.discover._plan import build_answer_plan
from indexer.search.discover._projects import filter_projects, project_refs, score_projects
from indexer.search.discover._readme import promote_readme
from indexer.search.discover._render import render_prompt
from indexer.search.discover._terms import extract_terms

__all__ = ["STAGES", "run_stage", "to_json"]

Config = dict[str, Any]
#: Most queries one stage call embeds.
MAX_QUERIES = 64


@dataclass(frozen=True, slots=True)
class _Question:
    question: str
    config: Config = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Filter:
    question: str
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    config: Config = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Score:
    question: str
    projects: tuple[str, ...] = ()
    config: Config = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Search:
    queries: tuple[str, ...]
    question: str = ""
    projects: tuple[str, ...] = ()
    config: Config = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Chunks:
    chunks: tuple[ScoredChunk, ...]
    question: str = ""
    config: Config = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Bullets:
    bullets: tuple[Bullet, ...]
    config: Config = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Plan:
    question: str
    plan: AnswerPlan
    config: Config = field(default_factory=dict)


def to_json(value: Any) -> Any:
    """Stage data as JSON-ready values (chunks gain their ``citation``)."""
    if isinstance(value, ScoredChunk):
        return {**msgspec.to_builtins(value), "citation": value.citation}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    return msgspec.to_builtins(value)


def _field_of(message: str) -> str:
    """The field a msgspec error message names (``$.chunks[0].start_line`` → ``chunks[0].start_line``)."""
    path = message.split(" - at `$", 1)[1].rstrip("`").lstrip(".") if " - at `$" in message else ""
    if "missing required field `" in message:
        name = message.split("missing required field `", 1)[1].split("`", 1)[0]
        return f"{path}.{name}" if path else name
    return path or "body"


def _parse(payload: Mapping[str, Any], cls: type[Any]) -> Any:
    if not isinstance(payload, Mapping):
        raise ValidationError("body", "must be a JSON object")
    known = {f.name for f in fields(cls)}
    unknown = [k for k in payload if k not in known]
    if unknown:
        first, *more = [FieldError(k, f"unknown field; known: {sorted(known)}") for k in unknown]
        raise ValidationError(first.field, first.message, more=tuple(more))
    try:
        return msgspec.convert(dict(payload), cls)
    except msgspec.ValidationError as exc:
        raise ValidationError(_field_of(str(exc)), str(exc).split(" - at ")[0]) from None


def _projects(
    searcher: Searcher, names: Sequence[str], config: DiscoverConfig, question: str
) -> list[ProjectRef]:
    """Named projects (unknown names are a ValidationError), or the filtered ones when none."""
    refs = project_refs(searcher.store)
    if not names:
        return list(filter_projects(question, refs, config.filter).projects)
    by_name = {p.name: p for p in refs} | {p.id: p for p in refs}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ValidationError("projects", f"unknown project(s) {quote_items(unknown)}")
    return list({by_name[n].id: by_name[n] for n in names}.values())


def _queries(queries: Sequence[str]) -> list[str]:
    if not 1 <= len(queries) <= MAX_QUERIES:
        raise ValidationError("queries", f"must hold 1 to {MAX_QUERIES} queries (got {len(queries)})")
    return [validate_question(q, "queries") for q in queries]


def _filter(s: Searcher, p: _Filter, c: DiscoverConfig) -> dict[str, Any]:
    config = (
        with_overrides(c, {"filter": {"include": p.include, "exclude": p.exclude}})
        if p.include or p.exclude
        else c
    )
    found = filter_projects(validate_question(p.question), project_refs(s.store), config.filter)
    return {"terms": list(found.terms), "projects": to_json(found.projects)}


def _score(s: Searcher, p: _Score, c: DiscoverConfig) -> dict[str, Any]:
    question = validate_question(p.question)
    terms = extract_terms(question, c.filter.extra_stopwords)
    scored = score_projects(terms, _projects(s, p.projects, c, question), c.scoring)
    return {"terms": terms, "projects": to_json(scored)}


def _expand(_s: Searcher, p: _Question, c: DiscoverConfig) -> dict[str, Any]:
    return {"queries": expand_queries(validate_question(p.question), c.expansion, c.filter.extra_stopwords)}


def _broad(s: Searcher, p: _Search, c: DiscoverConfig) -> dict[str, Any]:
    queries = _queries(p.queries)
    projects = _projects(s, p.projects, c, p.question or queries[0])
    found = broad_discovery(open_retriever(s, queries, projects, c), projects, c.broad)
    return {
        "chunks": to_json(found.chunks),
        "found": found.found,
        "after_threshold": found.after_threshold,
        "after_dedup": found.after_dedup,
    }


def _focus(s: Searcher, p: _Search, c: DiscoverConfig) -> dict[str, Any]:
    queries = _queries(p.queries)
    question = p.question or queries[0]
    terms = extract_terms(question, c.filter.extra_stopwords)
    projects = _projects(s, p.projects, c, question)
    if not p.projects:
        projects = focus_projects(score_projects(terms, projects, c.scoring), (), c.focus, terms)
    found = semantic_focus(open_retriever(s, queries, projects, c), terms, projects, c.focus)
    return {"chunks": to_json(found.chunks), "hits": found.hits, "context": found.context}


def _promote(_s: Searcher, p: _Chunks, c: DiscoverConfig) -> dict[str, Any]:
    return {"chunks": to_json(promote_readme(p.chunks, c.readme))}


def _compress(_s: Searcher, p: _Chunks, c: DiscoverConfig) -> dict[str, Any]:
    terms = extract_terms(p.question, c.filter.extra_stopwords)
    return {"bullets": to_json(compress_evidence(terms, p.chunks, c.compression))}


def _plan(_s: Searcher, p: _Bullets, c: DiscoverConfig) -> dict[str, Any]:
    return {"plan": to_json(build_answer_plan(p.bullets, c.plan))}


def _render(s: Searcher, p: _Plan, c: DiscoverConfig) -> dict[str, Any]:
    prompt = render_prompt(validate_question(p.question), p.plan, c.render, s.embedder.count_tokens)
    return {"prompt": to_json(prompt)}


_RUNNERS: Final[dict[str, tuple[type[Any], Callable[[Searcher, Any, DiscoverConfig], dict[str, Any]]]]] = {
    "filter_projects": (_Filter, _filter),
    "score_projects": (_Score, _score),
    "expand_queries": (_Question, _expand),
    "broad_discovery": (_Search, _broad),
    "semantic_focus": (_Search, _focus),
    "promote_readme": (_Chunks, _promote),
    "compress_evidence": (_Chunks, _compress),
    "build_answer_plan": (_Bullets, _plan),
    "render_prompt": (_Plan, _render),
}
#: The stage names, in pipeline order.
STAGES: Final = tuple(_RUNNERS)


def run_stage(
    target: Searcher | HasSearcher,
    stage: str,
    payload: Mapping[str, Any],
    base: DiscoverConfig | None = None,
) -> dict[str, Any]:
    """Run one stage on a JSON object; an unknown stage or bad input is a ValidationError."""
    if stage not in _RUNNERS:
        raise ValidationError("stage", f"unknown stage {stage[:80]!r}; known: {', '.join(STAGES)}")
    cls, runner = _RUNNERS[stage]
    parsed = _parse(payload, cls)
    config = with_overrides(base or DiscoverConfig(), parsed.config)
    return runner(searcher_of(target), parsed, config)
