"""Stage 6: README files (and top-level docs) boosted, READMEs placed first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from fnmatch import fnmatchcase
from pathlib import PurePosixPath

from indexer.search.discover._config import ReadmeConfig
from indexer.search.discover._models import ScoredChunk

__all__ = ["is_readme", "is_top_doc", "promote_readme"]


def is_readme(file_path: str, config: ReadmeConfig | None = None) -> bool:
    """True when the file name (in any folder) matches a README pattern, ignoring case."""
    config = config or ReadmeConfig()
    name = PurePosixPath(file_path).name.lower()
    return any(fnmatchcase(name, p.lower()) for p in config.readme_patterns)


def is_top_doc(file_path: str, config: ReadmeConfig | None = None) -> bool:
    """True for top-level documentation: a pattern without ``/`` matches top-level files only."""
    config = config or ReadmeConfig()
    low = file_path.lower()
    for pattern in config.docs_patterns:
        pat = pattern.lower()
        if "/" in pat and fnmatchcase(low, pat):
            return True
        if "/" not in pat and "/" not in low and fnmatchcase(low, pat):
            return True
    return False


def promote_readme(chunks: Sequence[ScoredChunk], config: ReadmeConfig | None = None) -> list[ScoredChunk]:
    """Boost README and top-level doc chunks; with ``always_top`` READMEs come first (each
    group by score), else everything is ordered by the boosted scores."""
    config = config or ReadmeConfig()
    readmes: list[ScoredChunk] = []
    others: list[ScoredChunk] = []
    for chunk in chunks:
        if is_readme(chunk.file_path, config):
            readmes.append(replace(chunk, score=round(chunk.score * config.readme_boost, 6)))
        elif is_top_doc(chunk.file_path, config):
            others.append(replace(chunk, score=round(chunk.score * config.docs_boost, 6)))
        else:
            others.append(chunk)

    def by_score(c: ScoredChunk) -> tuple[float, str]:
        return (-c.score, c.key)

    if config.always_top:
        return sorted(readmes, key=by_score) + sorted(others, key=by_score)
    return sorted(readmes + others, key=by_score)
