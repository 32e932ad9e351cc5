"""Pure parts of search_content: the exact-term rule, its full-text superset, continuation
tokens, and index-time key phrases and summaries. No store, no model."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from indexer.chunker import chunk_file
from indexer.config import ChunkerConfig
from indexer.errors import ValidationError
from indexer.keywords import document_keywords, document_summary
from indexer.search._terms import contains_term, is_case_sensitive, term_runs
from indexer.search._tokens import PageToken, decode_token, encode_token, head_digest, token_key
from indexer.store import TermRun
from indexer.store._vocabulary import WordIndex, words_of

# ---- the presence rule ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("term", "sensitive"),
    [
        ("useState", True),
        ("parse_document", True),
        ("ParseDocument", True),
        ("v4.2", True),
        ("vec0", True),
        ("websocket", False),
        ("WebSocket", True),
        ("TMOAT", False),
        ("Cart", False),
        ("a->b", False),
        ("state management", False),
    ],
)
def test_case_rule(term: str, sensitive: bool) -> None:
    assert is_case_sensitive(term) is sensitive


@pytest.mark.parametrize(
    ("text", "term", "present"),
    [
        ("const [a, b] = useState(0)", "useState", True),
        ("const [a, b] = usestate(0)", "useState", False),  # identifier: case-sensitive
        ("class WebSocketServer:", "Socket", True),  # identifier part
        ("class WebSocketServer:", "WebSocket", True),
        ("class WebSocketServer:", "ebSocket", True),  # a substring, like grep
        ("parse_document(text)", "parse", True),
        ("parse_document(text)", "document", True),
        ("reparseDocument(x)", "parseDocument", True),
        ("reparsedocument(x)", "parseDocument", False),  # identifier: case-sensitive
        ("x = HTTPServer()", "HTTP", True),
        ("x = HTTPServer()", "Server", True),
        ("x = HTTPServer()", "HTTPS", True),
        ("x = HTTPServer()", "HTTPX", False),
        ("requires v4.2 or later", "v4.2", True),
        ("requires v4.20 or later", "v4.2", True),
        ("requires v4-2 or later", "v4.2", False),
        ("version v40", "v4", True),
        ("version V40", "v4", False),  # digits: case-sensitive
        ("use vec0 tables", "vec", True),
        ("the discarted item", "cart", True),  # inside a word
        ("the CART total", "cart", True),  # any case
        ("ShopCart", "cart", True),  # any case, identifier part
        ("a->b and c", "a->b", True),
        ("xa->by", "a->b", True),
        ("a-> b", "a->b", False),
        ("p->next", "->", True),  # no letter or digit: anywhere
        ("is valid", "id", True),
        ("is vaLID", "id", True),  # any case
        ("is i-d", "id", False),
        ("user id: 7", "id", True),
        ("TMOAT agent", "tmoat", True),
        ("naïve approach", "naïve", True),
        ("xab ab ab", "ab ab", True),
        ("O'Reilly media", "o'reilly", True),
    ],
)
def test_presence_rule(text: str, term: str, present: bool) -> None:
    assert contains_term(text, term) is present


def test_terms_the_index_cannot_tokenize_are_scanned() -> None:
    assert term_runs("->") is None
    assert term_runs("naïve") is None
    assert term_runs("v4.2") is not None
    assert term_runs("parseDocument.v4_2") == (
        TermRun("parsedocument", open_left=True),
        TermRun("v4"),
        TermRun("2", open_right=True),
    )
    assert term_runs("->next") == (TermRun("next", open_right=True),)
    assert term_runs("Cart") == (TermRun("cart", open_left=True, open_right=True),)


def test_word_index_lookups() -> None:
    index = WordIndex(words_of(["getattr(self, name); setattr_x = attribute; Attr itself; the_attr"]))
    assert sorted(index.candidates(TermRun("attr")) or []) == ["attr"]
    assert sorted(index.candidates(TermRun("attr", open_right=True)) or []) == ["attr", "attribute"]
    assert sorted(index.candidates(TermRun("attr", open_left=True)) or []) == ["attr", "getattr", "setattr"]
    both = TermRun("attr", open_left=True, open_right=True)
    assert sorted(index.candidates(both) or []) == ["attr", "attribute", "getattr", "setattr"]
    assert index.candidates(TermRun("nothing", open_left=True, open_right=True)) == []
    assert index.candidates(both, cap=3) is None  # too many: the caller scans instead
    index.add(["reattract", "attrition"])  # merged into the sorted list built above
    assert "reattract" in (index.candidates(both) or [])
    assert sorted(index.candidates(TermRun("attr", open_right=True)) or []) == [
        "attr",
        "attribute",
        "attrition",
    ]
    assert index.candidates(TermRun("zzz", open_right=True)) == []


# The words of a text as the full-text tokenizer cuts them (before stemming), lower case.
def _index_words(text: str) -> set[str]:
    return {t.lower() for t in re.findall(r"[^\W_]+", text)}


_ALPHABET = st.sampled_from(list("aAbBzZ019_ .-$"))


@settings(max_examples=600, deadline=None)
@given(st.text(_ALPHABET, max_size=30), st.text(_ALPHABET, min_size=1, max_size=8))
@example(text="bB0", term="BB")
@example(text="xa->by", term="a->b")
@example(text="the discarted item", term="cart")
def test_every_present_term_is_found_by_the_full_text_query(text: str, term: str) -> None:
    """Recall of the index path: if a chunk holds the term, every run of the term has a
    candidate word (from the vocabulary of that chunk) among the chunk's own words."""
    runs = term_runs(term)
    if runs is None or not contains_term(text, term):
        return
    words = _index_words(text)
    index = WordIndex(words_of([text]))
    for run in runs:
        candidates = index.candidates(run)
        assert candidates is not None
        assert words & set(candidates), (text, term, run)


@settings(max_examples=300, deadline=None)
@given(st.text(_ALPHABET, max_size=30), st.text(_ALPHABET, min_size=1, max_size=8))
def test_present_means_substring(text: str, term: str) -> None:
    flags = 0 if is_case_sensitive(term) else re.IGNORECASE
    if contains_term(text, term):
        assert re.search(re.escape(term), text, flags)


# ---- tokens -------------------------------------------------------------------------------
KEY = token_key("/tmp/db", "fake")


def _token(offset: int = 10) -> PageToken:
    return PageToken("search_content", {"c": ["auth"], "t": [], "p": [], "m": 0.3}, offset, 7, "ab" * 8)


def test_token_round_trip_is_url_safe() -> None:
    text = encode_token(_token(), KEY)
    assert re.fullmatch(r"[A-Za-z0-9_-]+", text)
    assert decode_token(text, KEY, "search_content") == _token()


@pytest.mark.parametrize(
    "mangle",
    [
        lambda t: t[:-2],
        lambda t: t[:20] + ("A" if t[20] != "A" else "B") + t[21:],
        lambda t: "!!" + t,
        lambda t: "",
        lambda t: "x" * 9000,
    ],
)
def test_tampered_tokens_are_refused(mangle: object) -> None:
    text = mangle(encode_token(_token(), KEY))  # type: ignore[operator]
    with pytest.raises(ValidationError) as err:
        decode_token(text, KEY, "search_content")
    assert err.value.field == "continuation_token"


def test_tokens_are_bound_to_their_store_and_kind() -> None:
    text = encode_token(_token(), KEY)
    with pytest.raises(ValidationError):
        decode_token(text, token_key("/tmp/other", "fake"), "search_content")
    with pytest.raises(ValidationError):
        decode_token(text, KEY, "find_documents")


def test_head_digest_sees_results_and_scores_not_pages_or_ties() -> None:
    base = head_digest("", [("a", 0.5), ("b", 0.4)])
    assert base == head_digest(head_digest("", [("a", 0.5)]), [("b", 0.4)])  # any page size
    assert base == head_digest("", [("b", 0.4), ("a", 0.5)])  # results of equal rank in any order
    assert base != head_digest("", [("a", 0.5), ("b", 0.41)])
    assert base != head_digest("", [("a", 0.5), ("c", 0.4)])
    assert base != head_digest("", [("a", 0.5)])


# ---- key phrases and summaries -------------------------------------------------------------
def _doc(path: str, text: str) -> tuple[tuple[str, ...], str]:
    chunks = chunk_file(path, text.encode(), ChunkerConfig()).chunks
    return document_keywords(path, text, chunks), document_summary(path, text, chunks)


PY = '''"""Token refresh for user sessions.

Longer explanation that is not part of the summary.
"""

class SessionStore:
    def refresh_token(self, token):
        return self.rotate_token(token)

    def rotate_token(self, token):
        return token[::-1]

    def expire_sessions(self, now):
        return [s for s in self.sessions if s.expires_at < now]
'''


def test_python_keywords_and_docstring_summary() -> None:
    keywords, summary = _doc("auth/session_store.py", PY)
    assert 5 <= len(keywords) <= 7
    assert {"session store", "refresh token"} <= set(keywords)
    assert len(set(keywords)) == len(keywords)
    assert summary == "Token refresh for user sessions."


def test_markdown_summary_is_the_first_paragraph_under_the_heading() -> None:
    text = (
        "# Guide\n\n![badge](x.svg)\n\nShopfront sells things.\nIt is small.\n\n## Install\n\npip install\n"
    )
    keywords, summary = _doc("docs/guide.md", text)
    assert summary == "Shopfront sells things. It is small."
    assert "guide" in keywords


def test_licence_headers_are_skipped_and_names_fill_in() -> None:
    text = (
        "// Copyright 2024 Someone. Licensed under MIT.\n\npackage web\n\nfunc Serve() {}\n\nfunc Stop() {}\n"
    )
    _, summary = _doc("web/serve.go", text)
    assert "Copyright" not in summary
    assert summary.startswith("Defines Serve")


def test_long_summaries_are_cut_at_a_word() -> None:
    _, summary = _doc("a.py", '"""' + "word " * 200 + '"""\n')
    assert len(summary) <= 301
    assert summary.endswith("…")


@pytest.mark.timeout(20)
def test_summaries_of_blank_heavy_files_are_instant() -> None:
    """Files whose comments were blanked (long runs of spaces and newlines) once sent the
    docstring pattern into exponential backtracking and hung indexing."""
    import time

    blank = "   \n" * 4000 + "  \n\n\t\n" * 500
    cases = {
        "src/lib.rs": blank + "pub fn parse() -> u32 {\n    1\n}\n",
        "pkg/mod.py": "#!/usr/bin/env python\n# header\n" + blank + 'def f():\n    """Doc."""\n',
        "pkg/doc.py": "# licence line\n\n" + '"""Parse the things.\n\nMore."""\nx = 1\n' + blank,
    }
    started = time.perf_counter()
    summaries = {path: _doc(path, text)[1] for path, text in cases.items()}
    assert time.perf_counter() - started < 2.0
    assert summaries["pkg/doc.py"] == "Parse the things."
