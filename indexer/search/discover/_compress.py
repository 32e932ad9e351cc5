"""Stage 7: evidence compression: key prose sentences, and for code the signature, doc
summary and most relevant lines; each bullet categorised and cited ``project:path:Lstart-Lend``."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from indexer.search.discover._config import CompressionConfig
from indexer.search.discover._models import Bullet, ScoredChunk, cite
from indexer.search.discover._terms import match_words, term_overlap
from indexer.search.discover._text import code_signature, doc_summary, doc_text, is_prose, sentences

__all__ = ["categorize", "compress_evidence"]

#: Keywords per category (regex alternatives, matched at word starts), checked in this order.
_KEYWORDS: Final[dict[str, tuple[str, ...]]] = {
    "definition": (r"(?:is|are) (?:a|an|the)\b", r"defines?\b", r"represents?\b", r"refers to\b",
                   r"stands for\b"),
    "feature": (r"features?\b", r"supports?\b", r"provides?\b", r"allows?\b", r"enables?\b", r"lets? you\b",
                r"offers?\b", r"capabilit"),
    "architecture": (r"architect", r"components?\b", r"modules?\b", r"packages?\b", r"layers?\b", r"design",
                     r"structure", r"holds?\b", r"consists? of\b", r"pipeline"),
    "performance": (r"performance\b", r"fast", r"speed", r"latency\b", r"throughput\b", r"memory\b",
                    r"benchmark", r"efficien", r"scal(?:e|able|ing)\b", r"cach"),
    "integration": (r"integrat", r"api\b", r"sdks?\b", r"plugins?\b", r"http\b", r"rest\b", r"mcp\b",
                    r"protocol", r"clients?\b", r"extensions?\b"),
    "use_case": (r"use cases?\b", r"examples?\b", r"for instance\b", r"e\.g\.", r"applications?\b",
                 r"used (?:to|for)\b", r"usage\b", r"tutorial"),
}  # fmt: skip
#: Node types of top-level code between declarations (imports, module docs).
_TOP_LEVEL: Final = frozenset({"block", "module", "text"})
_RULES: Final = tuple(
    (name, re.compile(r"\b(?:" + "|".join(words) + ")", re.IGNORECASE)) for name, words in _KEYWORDS.items()
)


def categorize(text: str, heading: str = "") -> str:
    """The first category whose keywords the text has; else the heading's; else ``other``."""
    for source in (text, heading):
        for name, pattern in _RULES:
            if source and pattern.search(source):
                return name
    return "other"


def _bullet(
    chunk: ScoredChunk,
    text: str,
    category: str,
    factor: float,
    lines: tuple[int, int],
    kind: str,
    config: CompressionConfig,
) -> Bullet:
    """A bullet of ``chunk`` citing ``lines``, scored the chunk's score times ``factor``."""
    citation = cite(chunk.project, chunk.file_path, *lines) if config.include_citations else ""
    score = round(chunk.score * factor, 6)
    return Bullet(text, citation, category, score, chunk.project, chunk.file_path, *lines, kind, chunk.id)


def _prose_bullets(
    chunk: ScoredChunk, terms: Sequence[str], config: CompressionConfig, text: str | None = None
) -> list[Bullet]:
    found = []
    for sentence in sentences(chunk.content if text is None else text, chunk.start_line):
        if not config.min_sentence_words <= sentence.words <= config.max_sentence_words:
            continue
        start = 1.0 / (1 + sentence.position) if config.prefer_starts else 1.0
        factor = 0.7 + 0.2 * term_overlap(terms, match_words(sentence.text)) + 0.1 * start
        category = categorize(sentence.text, chunk.node_name if chunk.node_type == "section" else "")
        lines = (sentence.start_line, sentence.end_line)
        found.append(_bullet(chunk, sentence.text, category, factor, lines, "prose", config))
    found.sort(key=lambda b: -b.score)
    return found


def _key_lines(chunk: ScoredChunk, skip_to: int, terms: Sequence[str], count: int) -> list[str]:
    stems = [match_words(t) for t in terms]
    docs = doc_text(chunk.content).splitlines()
    scored = []
    for i, line in enumerate(chunk.content.splitlines()):
        text = line.strip()
        in_doc = i < len(docs) and bool(docs[i].strip())
        if i <= skip_to or not text or in_doc or text.startswith(("#", "//", "/*", "*", '"""', "'''")):
            continue
        words = match_words(text)
        hits = sum(1 for s in stems if s and s <= words)
        if hits:
            scored.append((-hits, i, text[:120]))
    return [text for _, _, text in sorted(sorted(scored)[:count], key=lambda t: t[1])]


def _code_bullet(chunk: ScoredChunk, terms: Sequence[str], config: CompressionConfig) -> Bullet | None:
    signature, _, last = code_signature(chunk.content)
    if not signature:
        return None
    summary = doc_summary(chunk.content)
    lines = _key_lines(chunk, last, terms, config.code_lines)
    text = f"`{signature}`"
    if summary:
        text += f" — {summary}"
    if lines:
        text += " Key lines: " + "; ".join(f"`{line}`" for line in lines)
    words = match_words(f"{chunk.node_name} {chunk.content}")
    factor = 0.7 + 0.2 * term_overlap(terms, words) + (0.1 if summary else 0.0)
    category = categorize(summary) if summary else "other"
    return _bullet(chunk, text, category, factor, (chunk.start_line, chunk.end_line), "code", config)


def _candidates(chunk: ScoredChunk, terms: Sequence[str], config: CompressionConfig) -> list[Bullet]:
    """Prose: its sentences. Code: the unit's signature bullet; top-level code (a module's
    docs, a block) without a declaration: the sentences of its comments."""
    if is_prose(chunk.language, chunk.node_type):
        return _prose_bullets(chunk, terms, config)
    code = _code_bullet(chunk, terms, config) if chunk.node_type not in _TOP_LEVEL else None
    if code is not None:
        return [code]
    return _prose_bullets(chunk, terms, config, doc_text(chunk.content))


def compress_evidence(
    terms: Sequence[str], chunks: Sequence[ScoredChunk], config: CompressionConfig | None = None
) -> list[Bullet]:
    """Bullets from the chunks in their order (at most ``max_per_chunk`` per chunk and
    ``max_per_doc`` per file, no repeated text) until ``max_bullets``, then best first."""
    config = config or CompressionConfig()
    per_doc: dict[tuple[str, str], int] = {}
    seen: set[str] = set()
    out: list[Bullet] = []
    for chunk in chunks:
        doc = (chunk.project, chunk.file_path)
        room = min(config.max_per_chunk, config.max_per_doc - per_doc.get(doc, 0))
        if room <= 0:
            continue
        candidates = _candidates(chunk, terms, config)
        for bullet in candidates:
            norm = " ".join(bullet.text.lower().split())
            if room <= 0 or norm in seen:
                continue
            seen.add(norm)
            out.append(bullet)
            per_doc[doc] = per_doc.get(doc, 0) + 1
            room -= 1
        if len(out) >= config.max_bullets:
            break
    out.sort(key=lambda b: -b.score)
    return out[: config.max_bullets]
