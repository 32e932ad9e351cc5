"""Stage 3: deterministic query expansion from the question's main terms."""

from __future__ import annotations

from indexer.search.discover._config import TEMPLATE_GROUPS, ExpansionConfig
from indexer.search.discover._terms import extract_terms

__all__ = ["expand_queries", "main_terms"]

_GROUP_SWITCH = {
    "definition": "include_definition",
    "features": "include_features",
    "architecture": "include_architecture",
    "api": "include_api",
    "performance": "include_performance",
    "use_cases": "include_use_cases",
}


def main_terms(
    question: str, config: ExpansionConfig | None = None, extra_stopwords: tuple[str, ...] = ()
) -> str:
    """The first ``main_term_words`` words of the question that are not stop words."""
    config = config or ExpansionConfig()
    terms = extract_terms(question, extra_stopwords)
    return " ".join(terms[: config.main_term_words]) or question.strip()


def expand_queries(
    question: str, config: ExpansionConfig | None = None, extra_stopwords: tuple[str, ...] = ()
) -> list[str]:
    """The question, then templates of the enabled groups taken round-robin, capped at
    ``max_expansions`` (duplicates, ignoring case, left out)."""
    config = config or ExpansionConfig()
    original = " ".join(question.split())
    terms = main_terms(original, config, extra_stopwords)
    groups = [config.templates.get(g, ()) for g in TEMPLATE_GROUPS if getattr(config, _GROUP_SWITCH[g])]
    out = [original]
    seen = {original.lower()}
    depth = max((len(g) for g in groups), default=0)
    for i in range(depth):
        for group in groups:
            if i >= len(group) or len(out) >= config.max_expansions:
                continue
            query = group[i].replace("{terms}", terms)
            if query.lower() not in seen:
                seen.add(query.lower())
                out.append(query)
    return out
