"""Words around results: how a query was understood, what to call next, what to ask next."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from indexer.lexicon import identifier_words
from indexer.search._terms import is_case_sensitive

__all__ = ["content_actions", "content_interpretation", "documents_actions", "related_queries"]

_MAX_RELATED = 5


def content_interpretation(
    concepts: Sequence[str], terms: Sequence[str], min_score: float, projects: Sequence[str]
) -> str:
    """One sentence saying what was searched and how it was scored."""
    parts = []
    if concepts:
        parts.append("chunks about " + " or ".join(repr(c) for c in concepts) + " (by meaning and words)")
    if terms:
        shown = ", ".join(f"{t!r} ({'exact case' if is_case_sensitive(t) else 'any case'})" for t in terms)
        if not concepts:
            parts.append(f"chunks containing any of {shown}, ranked by those terms")
        else:
            parts.append(f"holding any of {shown}")
        if len(terms) > 1:
            parts.append("×1.5 for each of them present")
    where = f" in {', '.join(projects)}" if projects else " in every project"
    text = "; ".join(parts)
    return text[:1].upper() + text[1:] + f"{where}; relevance ≥ {min_score:g}."


def related_queries(
    keyword_lists: Iterable[Sequence[str]], asked: Sequence[str], fallback: Iterable[str]
) -> tuple[str, ...]:
    """Key phrases shared by the results' documents that the query did not already use;
    ``fallback`` phrases (unit names, file names) fill in when documents have no keywords."""
    seen = {a.lower() for a in asked}
    counts: Counter[str] = Counter()
    order: dict[str, int] = {}
    for keywords in keyword_lists:
        for phrase in keywords:
            key = phrase.lower()
            if key not in seen:
                counts[key] += 1
                order.setdefault(key, len(order))
    out = sorted(counts, key=lambda k: (-counts[k], order[k]))[:_MAX_RELATED]
    for name in fallback:
        phrase = identifier_words(name).strip()
        if len(out) >= _MAX_RELATED:
            break
        if phrase and phrase not in seen and phrase not in out:
            out.append(phrase)
    return tuple(out)


def content_actions(
    project: str,
    top: tuple[str, int, int] | None,
    has_more: bool,
    total: int,
    exact_only: bool,
    min_score: float,
) -> tuple[str, ...]:
    """Next calls for an agent, from the shape of the result set (``top``: path and lines of the best hit)."""
    if top is None:
        return (
            f"Nothing reached min_score={min_score:g}: lower it, drop exact terms, or rephrase the concepts",
            "Discover files first: find_documents(query='...')",
        )
    path, start, end = top
    actions = [
        f"Read the whole file: get_document_data(project='{project}', document_id='{path}')",
        f"Read around the best hit: get_document_text(project='{project}', document_id='{path}', "
        f"start_line={max(1, start - 20)}, end_line={end + 20})",
    ]
    if has_more:
        actions.append("More results: call search_content again with continuation_token=next_token")
    if exact_only:
        actions.append("Rank these matches by meaning: add semantic_concepts")
    elif total > 30:
        actions.append("Narrow down: add exact_terms you expect in the code, or raise min_score")
    return tuple(actions)


def documents_actions(project: str, top: str | None, has_more: bool) -> tuple[str, ...]:
    """Next calls after ``find_documents``."""
    if top is None:
        return ("No file matched: rephrase the query, or search passages with search_content",)
    actions = [
        f"Read the best file: get_document_data(project='{project}', document_id='{top}')",
        "Find the exact passages: search_content(semantic_concepts=[...], exact_terms=[...])",
    ]
    if has_more:
        actions.append("More files: call find_documents again with continuation_token=next_token")
    return tuple(actions)
