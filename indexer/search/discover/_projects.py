"""Stages 1 and 2: which projects are searched, and which deserve a focused search."""

from __future__ import annotations

import math
import re
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from fnmatch import fnmatchcase
from pathlib import PurePosixPath
from typing import Final

from indexer.keywords import TEXT_SUFFIXES
from indexer.search.discover._config import FilterConfig, ScoringConfig
from indexer.search.discover._models import ProjectRef, ScoredProject
from indexer.search.discover._terms import extract_terms
from indexer.store import Store

__all__ = ["FilteredProjects", "filter_projects", "project_refs", "project_tags", "score_projects"]

_DOC_SUFFIXES: Final = frozenset(TEXT_SUFFIXES)
_DATA_SUFFIXES: Final = frozenset({".json", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".lock", ".csv"})
_API: Final = re.compile(r"(?:^|[^a-z])(api|openapi|swagger)(?:[^a-z]|$)")


@dataclass(frozen=True, slots=True)
class FilteredProjects:
    """Stage 1's answer: the question's terms and the projects to search."""

    terms: tuple[str, ...]
    projects: tuple[ProjectRef, ...]


def _matches(name: str, globs: Sequence[str]) -> bool:
    low = name.lower()
    return any(fnmatchcase(low, g.lower()) for g in globs)


def filter_projects(
    question: str, projects: Sequence[ProjectRef], config: FilterConfig | None = None
) -> FilteredProjects:
    """Projects whose name matches an include glob (all when none) and no exclude glob."""
    config = config or FilterConfig()
    terms = tuple(extract_terms(question, config.extra_stopwords))
    kept = [
        p
        for p in projects
        if (not config.include or _matches(p.name, config.include)) and not _matches(p.name, config.exclude)
    ]
    return FilteredProjects(terms=terms, projects=tuple(kept))


def _name_match(name: str, terms: Sequence[str]) -> float:
    if not terms:
        return 0.0
    low = name.lower()
    score = sum(1 for t in terms if t.lower() in low) / len(terms)
    if any(low.startswith(t.lower()) for t in terms):
        score *= 1.5
    return min(1.0, score)


def _term_boost(name: str, boost_terms: Sequence[str]) -> float:
    if not boost_terms:
        return 0.0
    low = name.lower()
    return sum(1 for t in boost_terms if t.lower() in low) / len(boost_terms)


def _signals(project: ProjectRef, config: ScoringConfig, now: datetime) -> float:
    size = min(1.0, math.log1p(max(0, project.chunks)) / math.log1p(config.size_saturation_chunks))
    recency = 0.0
    if project.updated_at is not None:
        stamp = project.updated_at if project.updated_at.tzinfo else project.updated_at.replace(tzinfo=UTC)
        days = max(0.0, (now - stamp).total_seconds() / 86400)
        recency = math.exp(-days / config.recency_decay_days)
    important = {t.lower() for t in config.important_tags}
    tags = len(important & {t.lower() for t in project.tags}) / len(important) if important else 0.0
    return (size + recency + tags) / 3


def score_projects(
    terms: Sequence[str],
    projects: Sequence[ProjectRef],
    config: ScoringConfig | None = None,
    now: datetime | None = None,
) -> list[ScoredProject]:
    """Projects by a weighted mix of name match, boost terms and signals, best first (score in [0, 1])."""
    config = config or ScoringConfig()
    now = now or datetime.now(UTC)
    weights = (config.name_match_weight, config.term_boost_weight, config.signal_boost_weight)
    total = sum(weights)
    out: list[ScoredProject] = []
    for p in projects:
        parts = (
            _name_match(p.name, terms),
            _term_boost(p.name, config.boost_terms),
            _signals(p, config, now),
        )
        score = sum(w * v for w, v in zip(weights, parts, strict=True)) / total if total > 0 else 0.0
        out.append(ScoredProject(p, round(score, 6), *(round(v, 6) for v in parts)))
    out.sort(key=lambda s: (-s.score, s.project.name))
    return out


def project_tags(paths: Sequence[str]) -> tuple[str, ...]:
    """Tags of a project from its file paths: ``documentation``, ``code`` and ``api``."""
    tags: set[str] = set()
    for path in paths:
        pure = PurePosixPath(path)
        suffix = pure.suffix.lower()
        if suffix in _DOC_SUFFIXES or pure.parts[0].lower() in ("docs", "doc"):
            tags.add("documentation")
        elif suffix and suffix not in _DATA_SUFFIXES and not pure.name.startswith("."):
            tags.add("code")
        if _API.search(path.lower()) or suffix == ".proto":
            tags.add("api")
        if len(tags) == 3:
            break
    return tuple(t for t in ("documentation", "code", "api") if t in tags)


_CACHE: weakref.WeakKeyDictionary[Store, tuple[int, list[ProjectRef]]] = weakref.WeakKeyDictionary()
_CACHE_LOCK = threading.Lock()


def project_refs(store: Store) -> list[ProjectRef]:
    """Every project with its size and tags (remembered until the index changes)."""
    version = store.index_version()
    with _CACHE_LOCK:
        cached = _CACHE.get(store)
    projects = store.projects.all()
    if cached is not None and cached[0] == version and [r.id for r in cached[1]] == [p.id for p in projects]:
        stamps = {p.id: (p.name, p.last_indexed_at or p.updated_at) for p in projects}
        if all(stamps[r.id] == (r.name, r.updated_at) for r in cached[1]):
            return list(cached[1])
    refs = [
        ProjectRef(
            name=p.name,
            id=p.id,
            root=p.root,
            documents=store.documents.count(p.id),
            chunks=store.chunks.count(p.id),
            updated_at=p.last_indexed_at or p.updated_at,
            tags=project_tags(list(store.documents.states(p.id))),
        )
        for p in projects
    ]
    with _CACHE_LOCK:
        _CACHE[store] = (version, refs)
    return list(refs)
