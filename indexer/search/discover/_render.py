"""Stage 9: the prompt for an LLM (markdown, plain text or JSON), within a token budget.

Tokens are counted with the embedding model's tokenizer. When the plan does not fit, whole
bullets are dropped, lowest priority first (the last section's last bullet), and the prompt
says how many were dropped from which section; a bullet is never cut in the middle.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from indexer.search.discover._config import RenderConfig
from indexer.search.discover._models import AnswerPlan, Bullet, RenderedPrompt, Section

__all__ = ["INSTRUCTIONS", "render_prompt"]

INSTRUCTIONS = (
    "Answer the question using only the evidence below. Keep each citation "
    "[project:path:Lstart-Lend] next to the fact it supports, follow the sections in order, "
    "and say so when the evidence does not answer the question."
)


@dataclass(frozen=True, slots=True)
class _View:
    """What one rendering shows: the kept bullets per section and what was dropped."""

    question: str
    sections: tuple[tuple[Section, tuple[Bullet, ...]], ...]
    dropped: dict[str, int]
    max_tokens: int
    metadata: Mapping[str, object]

    @property
    def bullets(self) -> list[Bullet]:
        return [b for _, bullets in self.sections for b in bullets]

    @property
    def sources(self) -> list[str]:
        return list(dict.fromkeys(f"{b.project}:{b.file_path}" for b in self.bullets))

    def dropped_note(self) -> str:
        total = sum(self.dropped.values())
        parts = ", ".join(f"{title}: {n}" for title, n in self.dropped.items())
        return f"Truncated to fit {self.max_tokens} tokens: {total} bullet(s) dropped ({parts})."


def _line(number: int, bullet: Bullet, config: RenderConfig) -> str:
    cited = f" [{bullet.citation}]" if config.include_sources and bullet.citation else ""
    return f"{number}. {bullet.text}{cited}"


def _text(view: _View, config: RenderConfig, markdown: bool) -> str:
    """The prompt as Markdown (``#`` headings) or plain text (upper-case headings)."""

    def heading(title: str, level: int = 2, blank: bool = True) -> list[str]:
        if not markdown:
            return [title.upper()]
        return [f"{'#' * level} {title}", *([""] if blank else [])]

    item = "- " if markdown else ""
    title = f"# Evidence for: {view.question}" if markdown else f"EVIDENCE FOR: {view.question}"
    out = [title, "", f"Found {len(view.bullets)} pieces of evidence in {len(view.sources)} files.", ""]
    out += [*heading("Instructions", blank=False), INSTRUCTIONS, ""]
    if config.include_metadata and view.metadata:
        out += [*heading("Metadata", blank=False), *(f"{item}{k}: {v}" for k, v in view.metadata.items()), ""]
    out += ["## Evidence", ""] if markdown else []
    for section, kept in view.sections:
        out += [*heading(section.title, 3), *(_line(i, b, config) for i, b in enumerate(kept, 1)), ""]
    if not view.sections:
        out += ["No evidence found.", ""]
    if view.dropped:
        out += [f"_{view.dropped_note()}_" if markdown else f"[{view.dropped_note()}]", ""]
    if config.include_sources and view.sources:
        out += [*heading("Sources"), *(f"- {s}" for s in view.sources), ""]
    return "\n".join(out).rstrip() + "\n"


def _json(view: _View, config: RenderConfig) -> str:
    def bullet(b: Bullet) -> dict[str, str]:
        return {"text": b.text, "citation": b.citation} if config.include_sources else {"text": b.text}

    doc: dict[str, object] = {
        "question": view.question,
        "instructions": INSTRUCTIONS,
        "sections": [{"title": s.title, "bullets": [bullet(b) for b in kept]} for s, kept in view.sections],
    }
    if config.include_sources:
        doc["sources"] = view.sources
    if config.include_metadata and view.metadata:
        doc["metadata"] = dict(view.metadata)
    if view.dropped:
        doc["truncated"] = {"note": view.dropped_note(), "dropped_by_section": view.dropped}
    return json.dumps(doc, ensure_ascii=False, default=str) + "\n"


_FORMATTERS: dict[str, Callable[[_View, RenderConfig], str]] = {
    "markdown": lambda view, config: _text(view, config, markdown=True),
    "plain": lambda view, config: _text(view, config, markdown=False),
    "json": _json,
}


def _view(
    question: str, plan: AnswerPlan, keep: int, max_tokens: int, metadata: Mapping[str, object]
) -> _View:
    sections: list[tuple[Section, tuple[Bullet, ...]]] = []
    dropped: dict[str, int] = {}
    left = keep
    for section in plan.sections:
        kept = section.bullets[: max(0, left)]
        left -= len(kept)
        if kept:
            sections.append((section, kept))
        if len(kept) < len(section.bullets):
            dropped[section.title] = len(section.bullets) - len(kept)
    return _View(question, tuple(sections), dropped, max_tokens, metadata)


def count_in_pieces(count_tokens: Callable[[str], int], text: str, words: int = 150) -> int:
    """Tokens of ``text`` counted over pieces of at most ``words`` whitespace-separated words
    (exact for word-piece tokenizers, which split at whitespace first; keeps each piece under
    the model's sequence length so the tokenizer does not warn)."""
    parts = text.split()
    return sum(count_tokens(" ".join(parts[i : i + words])) for i in range(0, len(parts), words))


def render_prompt(
    question: str,
    plan: AnswerPlan,
    config: RenderConfig | None = None,
    count_tokens: Callable[[str], int] | None = None,
    metadata: Mapping[str, object] | None = None,
) -> RenderedPrompt:
    """The prompt of ``plan`` in ``config.format_style``, cut at bullet boundaries to fit
    ``max_prompt_tokens`` (counted by ``count_tokens``, by default whitespace words)."""
    config = config or RenderConfig()
    counter = count_tokens or (lambda text: len(text.split()))

    def count(text: str) -> int:
        return count_in_pieces(counter, text)

    fmt = _FORMATTERS[config.format_style]
    total = sum(len(s.bullets) for s in plan.sections)
    meta = dict(metadata or {})

    def attempt(keep: int) -> tuple[str, int, _View]:
        view = _view(question, plan, keep, config.max_prompt_tokens, meta)
        text = fmt(view, config)
        return text, count(text), view

    best = attempt(total)
    if best[1] > config.max_prompt_tokens:
        low, high = 0, total - 1  # the largest bullet count that fits, by bisection
        best = attempt(0)
        while low <= high:
            mid = (low + high) // 2
            tried = attempt(mid)
            if tried[1] <= config.max_prompt_tokens:
                best, low = tried, mid + 1
            else:
                high = mid - 1
    text, tokens, view = best
    dropped = sum(view.dropped.values())
    return RenderedPrompt(text, config.format_style, tokens, config.max_prompt_tokens, dropped, view.dropped)
