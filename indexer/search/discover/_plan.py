"""Stage 8: the answer plan: bullets grouped into sections in priority order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from indexer.search.discover._config import PlanConfig
from indexer.search.discover._models import AnswerPlan, Bullet, Section

__all__ = ["SECTION_TITLES", "build_answer_plan"]

#: Section title of each bullet category.
SECTION_TITLES: Final[dict[str, str]] = {
    "definition": "Definition",
    "feature": "Key Features",
    "architecture": "Architecture",
    "performance": "Performance",
    "integration": "Integrations",
    "use_case": "Use Cases",
    "other": "Other Evidence",
}


def build_answer_plan(bullets: Sequence[Bullet], config: PlanConfig | None = None) -> AnswerPlan:
    """One section per category of ``config.sections`` (in that order) with its best bullets
    (``min``..``max`` per section); ``sources`` lists the cited files in order."""
    config = config or PlanConfig()
    by_category: dict[str, list[Bullet]] = {}
    for bullet in sorted(bullets, key=lambda b: -b.score):
        by_category.setdefault(bullet.category, []).append(bullet)
    sections: list[Section] = []
    for category in config.sections:
        chosen = by_category.get(category, [])[: config.max_bullets_per_section]
        if len(chosen) >= config.min_bullets_per_section:
            title = SECTION_TITLES.get(category, category.replace("_", " ").title())
            sections.append(Section(title, category, len(sections) + 1, tuple(chosen)))
    sources = dict.fromkeys(f"{b.project}:{b.file_path}" for s in sections for b in s.bullets)
    included = sum(len(s.bullets) for s in sections)
    return AnswerPlan(tuple(sections), included, tuple(sources), omitted=len(bullets) - included)
