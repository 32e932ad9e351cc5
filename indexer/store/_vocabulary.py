"""The chunk vocabulary: every word (alphanumeric run, lower case) of every chunk's text.

It turns an exact-term *substring* search into a full-text query. A chunk contains a term
only if, for each alphanumeric run of the term, some word of the chunk contains that run
(ends with it when the run opens the term, starts with it when it closes the term, equals
it when it is inside the term). The vocabulary lists the words that qualify; a full-text
query for those words (every word of a chunk's text is a token of its ``search_text``)
finds a superset of the chunks holding the term, which a substring check then narrows.

The table only grows (words of deleted chunks stay: a superset is still correct). Words
are recorded before the chunks that hold them are written, so an interrupted write leaves
extra words, never missing ones. A store made before the table existed gets it from its
chunks the first time the writer needs it (readers derive it in memory meanwhile).
"""

from __future__ import annotations

import bisect
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from indexer.store._lance._db import Db
from indexer.store._schema import CHUNKS, VOCABULARY, vocabulary_schema

__all__ = ["WORD", "TermRun", "Vocabulary", "WordIndex", "words_of"]

#: A word: a run of letters and digits (``_`` separates), as the full-text tokenizer cuts text.
WORD = re.compile(r"[^\W_]+")
#: Beyond this many candidate words for one run, a scan of the chunk text is cheaper than
#: the full-text query (each query word costs about a millisecond on 100k chunks).
MAX_QUERY_WORDS = 128
#: Separates the words of one batched tokenize call (any word the analyzer keeps as itself).
_SENTINEL = "lodesentinelqz"


@dataclass(frozen=True, slots=True)
class TermRun:
    """One alphanumeric run of an exact term, in lower case, and whether the text may extend
    it to the left (it opens the term) or to the right (it closes the term)."""

    text: str
    open_left: bool = False
    open_right: bool = False


def words_of(texts: Iterable[str]) -> set[str]:
    """The distinct lower-case alphanumeric runs of ``texts`` (``_`` separates runs)."""
    out: set[str] = set()
    for text in texts:
        out.update(WORD.findall(text.lower()))
    return out


class WordIndex:
    """A set of words with the lookups a term run needs: equal, prefix, suffix, infix."""

    def __init__(self, words: Iterable[str] = ()) -> None:
        self.words: set[str] = set(words)
        self._sorted: list[str] | None = None
        self._joined: str | None = None

    def add(self, words: Iterable[str]) -> None:
        """Add words (the sorted list is merged; the joined form is rebuilt when next needed)."""
        new = sorted(set(words) - self.words)
        if not new:
            return
        self.words.update(new)
        if self._sorted is not None:
            self._sorted = sorted(self._sorted + new)  # two sorted runs: a linear merge
        self._joined = None

    def candidates(self, run: TermRun, cap: int = MAX_QUERY_WORDS) -> list[str] | None:
        """The words a chunk holding ``run`` must contain one of; None when over ``cap``."""
        word = run.text
        if not run.open_left and not run.open_right:
            return [word] if word in self.words else []
        if not run.open_left:
            ordered = self._ordered()
            found: list[str] = []
            at = bisect.bisect_left(ordered, word)
            while at < len(ordered) and ordered[at].startswith(word):
                found.append(ordered[at])
                if len(found) > cap:
                    return None
                at += 1
            return found
        return self._containing(word + "\n" if not run.open_right else word, cap)

    def _ordered(self) -> list[str]:
        if self._sorted is None:
            self._sorted = sorted(self.words)
        return self._sorted

    def _containing(self, needle: str, cap: int) -> list[str] | None:
        if self._joined is None:
            self._joined = "\n" + "\n".join(self._ordered()) + "\n"
        joined = self._joined
        found: list[str] = []
        at = joined.find(needle, 1)
        while at != -1:
            start = joined.rfind("\n", 0, at) + 1
            end = joined.find("\n", at)
            found.append(joined[start:end])
            if len(found) > cap:
                return None
            at = joined.find(needle, end + 1)
        return found


class Vocabulary:
    """The ``chunk_vocabulary`` table and the in-memory word index built from it."""

    def __init__(self, db: Db) -> None:
        self._db = db
        self._vocab_lock = threading.Lock()
        self._vocab: WordIndex | None = None
        self._vocab_key: Any = None
        self._indexable: dict[str, bool] = {}

    def _vocab_table(self) -> Any | None:
        db = self._db
        table = db.tables.get(VOCABULARY)
        if table is None and VOCABULARY in set(db.conn.list_tables().tables):
            table = db.tables[VOCABULARY] = db.conn.open_table(VOCABULARY)
        return table

    def ensure(self) -> None:
        """Create the vocabulary table if missing, from the words of every stored chunk."""
        with self._db.write_lock:
            if self._vocab_table() is not None:
                return
            words = sorted(self._chunk_words())
            data = pa.table({"word": words}, schema=vocabulary_schema())
            self._db.tables[VOCABULARY] = self._db.conn.create_table(VOCABULARY, data=data)

    def _chunk_words(self) -> set[str]:
        chunks = self._db.table(CHUNKS)
        if not chunks.count_rows():
            return set()
        batches = chunks.search().select(["content"]).limit(None).to_batches()
        return words_of(text or "" for batch in batches for text in batch.column("content").to_pylist())

    def record(self, words: set[str]) -> None:
        """Add the words of chunks about to be written (call before writing them)."""
        self.ensure()
        index = self._word_index()
        with self._vocab_lock:
            new = sorted(words - index.words)
        if not new:
            return
        table = self._db.table(VOCABULARY)
        before = self._vocab_key
        result = table.add(pa.table({"word": new}, schema=vocabulary_schema()))
        version = getattr(result, "version", None)
        with self._vocab_lock:
            if isinstance(before, int) and version == before + 1:
                index.add(new)
                self._vocab_key = version
            else:  # another writer appended meanwhile (or an unknown version): reload next time
                self._vocab = None

    def _word_index(self) -> WordIndex:
        """The current vocabulary (reloaded when another process added to it)."""
        table = self._vocab_table()
        key = table.version if table is not None else ("derived", self._db.table(CHUNKS).version)
        with self._vocab_lock:
            if self._vocab is not None and self._vocab_key == key:
                return self._vocab
            if table is not None:
                words: Iterable[str] = table.to_arrow()["word"].to_pylist()
            else:  # a store older than the table: derived here, saved by the writer
                words = self._chunk_words()
            self._vocab = WordIndex(words)
            self._vocab_key = key
            return self._vocab

    def term_words(self, runs: Iterable[TermRun], tokenize: Any) -> list[list[str]] | None:
        """Per run, the vocabulary words a chunk holding the term has one of; [] when no
        chunk can hold it; None when the full-text index cannot answer (too many words, or
        a word it does not index, such as a stop word or an over-long one)."""
        index = self._word_index()
        out: list[list[str]] = []
        with self._vocab_lock:
            for run in runs:
                found = index.candidates(run)
                if found is None:
                    return None
                out.append(found)
        if any(not words for words in out):
            return []
        if not self._all_indexable({w for words in out for w in words}, tokenize):
            return None
        return out

    def _all_indexable(self, words: set[str], tokenize: Any) -> bool:
        """Whether the full-text analyzer keeps each word as exactly one token."""
        unknown = sorted(w for w in words if w not in self._indexable)
        if unknown:
            marker = tokenize(_SENTINEL)
            if marker is None or len(marker) != 1:
                return False
            tokens = tokenize(" ".join(f"{w} {_SENTINEL}" for w in unknown))
            if tokens is None:
                return False
            groups: list[list[str]] = [[]]
            for token in tokens:
                if token == marker[0]:
                    groups.append([])
                else:
                    groups[-1].append(token)
            if len(groups) != len(unknown) + 1 or groups[-1]:
                return False  # the analyzer cut the words differently: do not trust the index
            for word, group in zip(unknown, groups, strict=False):
                self._indexable[word] = len(group) == 1
        return all(self._indexable[w] for w in words)
