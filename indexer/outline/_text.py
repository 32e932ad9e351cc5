"""Words of outline nodes: one tokenizer for titles, summaries, content and questions.

Identifiers are split at case changes (``parseHTTPRequest`` → ``parse http request``),
words are lower-cased and stop words (English and common keywords) dropped; nodes keep
these words (readable topic tags come from them) and the index stems them with a light
suffix stripper, so ``expires``/``expired``/``expiring`` meet on one term. Counting runs
the regex over a whole text at once and normalises only its distinct words, so a chunk
costs one ``findall`` plus a few cached lookups per distinct word.
"""

from __future__ import annotations

import functools
import re
from collections import Counter

from indexer.lexicon import split_identifier

__all__ = ["STOP_WORDS", "clip", "normalize", "pack_terms", "query_terms", "stem", "surface", "word_counts"]

# index term → the shortest (then first in order) word seen for it; a memo like the caches.
_SURFACE: dict[str, str] = {}
_TOKEN = re.compile(r"[A-Za-z0-9]+")

#: Words that carry no topic: English function words and keywords shared by most languages.
STOP_WORDS = frozenset(
    """
    a about above after again all also am an and any are as at be been before being below between both
    but by can could did do does doing down during each few for from further had has have having he her
    here hers him his how i if in into is it its itself just me more most my no nor not now of off on once
    only or other our out over own same she should so some such than that the their them then there these
    they this those through to too under until up very was we were what when where which while who whom
    why will with would you your yours
    def self cls return import from class public private protected static void none true false null nil
    new let const var func fn pub mut impl struct enum interface package elif else try except finally raise
    throw throws catch async await yield lambda super extends implements override args kwargs www com org
    """.split()
)


@functools.lru_cache(maxsize=200_000)
def normalize(word: str) -> str:
    """A word as the outline keeps it: lower case, or "" for a stop word or a short one."""
    w = word.lower()
    if len(w) < 2 or w in STOP_WORDS or (w.isdigit() and len(w) > 4):
        return ""
    return w


@functools.lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """The index term of a normalised word: a few English suffixes stripped."""
    term = _strip(word)
    known = _SURFACE.get(term)
    if known is None or (len(word), word) < (len(known), known):
        _SURFACE[term] = word
    return term


def surface(term: str) -> str:
    """A readable word for an index term: the shortest word seen that stems to it."""
    return _SURFACE.get(term, term)


def _strip(word: str) -> str:
    w = word
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 4 and w.endswith("ed"):
        w = w[:-2]
    if len(w) > 4 and w.endswith("e"):
        w = w[:-1]
    return w


@functools.lru_cache(maxsize=200_000)
def _parts(token: str) -> tuple[str, ...]:
    """The normalised words of one alphanumeric token (``parseHTTPRequest`` → parse, http, request)."""
    if token.islower() or token.isdigit() or (token.isupper() and token.isalpha()):
        word = normalize(token)
        return (word,) if word else ()
    return tuple(w for w in map(normalize, split_identifier(token)) if w)


def word_counts(text: str) -> dict[str, int]:
    """Normalised words of ``text`` (identifiers split) with their counts."""
    out: dict[str, int] = {}
    get = out.get
    for token, count in Counter(_TOKEN.findall(text)).items():
        for word in _parts(token):
            out[word] = get(word, 0) + count
    return out


def query_terms(text: str) -> list[str]:
    """Distinct index terms of ``text`` in order of first appearance."""
    return list(dict.fromkeys(stem(w) for t in _TOKEN.findall(text) for w in _parts(t)))


def pack_terms(title: str, summary: str, content: str) -> tuple[tuple[str, ...], bytes, tuple[int, int, int]]:
    """A node's index data: its distinct terms, their (title, summary, content) counts packed
    three bytes per term (each capped at 255), and the three field lengths."""
    fields = (word_counts(title), word_counts(summary), word_counts(content))
    merged: dict[str, list[int]] = {}
    for index, counts in enumerate(fields):
        for word, count in counts.items():
            slot = merged.get(stem(word))
            if slot is None:
                slot = merged[stem(word)] = [0, 0, 0]
            slot[index] += count
    packed = bytes([min(n, 255) for slot in merged.values() for n in slot])
    lengths = (sum(fields[0].values()), sum(fields[1].values()), sum(fields[2].values()))
    return tuple(merged), packed, lengths


def clip(text: str, limit: int) -> str:
    """``text`` with whitespace collapsed, cut at a word boundary to ``limit`` characters (… marks a cut)."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"
