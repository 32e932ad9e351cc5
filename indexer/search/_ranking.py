"""Ranking: the weights and priors a search ranks by, the fusion of its candidate lists,
the order of a file's own chunks, and the hit a ranked chunk becomes."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from indexer.models import ChunkView, FileChunk, Symbol
from indexer.search._fusion import Ranked, Scored, fuse, fuse_scores
from indexer.search._lexical import is_name_query, named_identifiers
from indexer.search._priors import HEADER_PRIOR, REPORT_PRIOR, ROLE_PRIOR, Folded, is_bug_report
from indexer.search._results import ChunkHit
from indexer.store import Candidate

__all__ = [
    "DEFINITION_LIST",
    "IDENTIFIER_WEIGHT",
    "NAME_WEIGHTS",
    "REPORT_WEIGHTS",
    "WEIGHTS",
    "Ranking",
    "RankingConfig",
    "definition_score",
    "fuse_chunks",
    "query_terms",
    "rank_within_file",
    "to_hit",
]

_WORD = re.compile(r"[a-z0-9]+")
#: Weights of the chunk candidate lists, tuned on the quality benchmark's corpora.
WEIGHTS = {"semantic": 0.7, "lexical": 0.4, "name": 0.2}
#: The weights for a query naming something (identifiers only, or one word), tuned on the
#: whole-repository benchmark's identifier queries.
NAME_WEIGHTS = {"semantic": 0.2, "lexical": 0.4, "name": 0.2}
#: The weights for a bug report, tuned on the whole-repository benchmark's bug reports
#: (``benchmarks/tune_ranking.py``; figures in docs/quality-benchmark.md).
REPORT_WEIGHTS = {"semantic": 0.4, "lexical": 0.6, "name": 0.2}


@dataclass(frozen=True, slots=True)
class RankingConfig:
    """How candidates become a ranking (tuned on ``benchmarks/bench_repo_quality``)."""

    role_prior: Mapping[str, float] = field(default_factory=lambda: dict(ROLE_PRIOR))
    """The score of a chunk of each role is scaled by this unless the query asks for it."""
    header_prior: float = HEADER_PRIOR
    """A container's header chunk is scaled by this unless the query names the container."""
    report_prior: float = REPORT_PRIOR
    """A bug report's other roles (tests, docs…) are scaled by this beside ``role_prior``."""
    fold_units: bool = True
    """Show a unit split into pieces once (its best piece)."""
    document_signal_weight: float = 0.0
    """Weight of the whole-document lists (the file's mean vector, BM25 over the whole file)
    next to files ordered by their best chunk: 0, as files ranked by their best chunk beat
    every mix tried (+0.18 file MRR@10 on doc-comment queries, +0.28 on identifiers)."""
    weights: Mapping[str, float] | None = None
    """Weights of the chunk candidate lists (semantic, lexical, name); None: ``WEIGHTS``."""
    name_weights: Mapping[str, float] | None = field(default_factory=lambda: dict(NAME_WEIGHTS))
    """The weights for a query that names something (identifiers only, or one word): the
    vector list counts less (hybrid fell 0.03 MRR below lexical on identifier queries);
    None: ``weights``."""

    report_weights: Mapping[str, float] | None = field(default_factory=lambda: dict(REPORT_WEIGHTS))
    """The weights for a bug report (``is_bug_report``): the words count more than the
    vector, which the model makes of the report's first 256 tokens only and which its
    prose dilutes, while its names, messages and frames are the code's own words; None:
    ``weights``."""

    def weights_for(self, query: str) -> Mapping[str, float] | None:
        """The list weights for ``query``."""
        if self.name_weights is not None and is_name_query(query):
            return self.name_weights
        if self.report_weights is not None and is_bug_report(query):
            return self.report_weights
        return self.weights


@dataclass(frozen=True, slots=True)
class Ranking:
    """The ranked chunk pool, and the units whose other pieces were folded into one."""

    ranked: list[tuple[Candidate, float]]
    folded: dict[str, Folded] = field(default_factory=dict)
    file_of: dict[str, str] = field(default_factory=dict)
    """Candidate key → its file's id (for every candidate whose facts were read)."""


#: Weight of the exact-identifier list: strong for a query that names something
#: (``parseDocument``, ``render``), light when a sentence merely mentions an identifier.
IDENTIFIER_WEIGHT = (1.0, 0.1)
#: The candidate list of the chunks defining a name of the query, from the symbol index: it
#: adds them to the pool (the lexical and vector lists can miss them) and ranks them in the
#: identifier list, not as a list of its own.
DEFINITION_LIST = "definition"


#: Definitions that add to a unit defined elsewhere (an ``impl`` block of a Rust type).
_ADDING_KINDS = frozenset({"impl", "extension"})
#: Kinds whose one-line definition is a declaration (an interface's method, a prototype).
_CALLABLE_KINDS = frozenset({"function", "method", "constructor"})


def definition_score(symbol: Symbol) -> float:
    """How surely a definition is *the* one a name asks for: 1 for a type or a callable with
    a body, 0.5 for an ``impl`` block or a one-line declaration of a callable (an interface
    method, the implementation's body is elsewhere)."""
    if symbol.kind in _ADDING_KINDS:
        return 0.5
    if symbol.kind in _CALLABLE_KINDS and symbol.end_line <= symbol.start_line:
        return 0.5
    return 1.0


def fuse_chunks(
    query: str, found: dict[str, list[Candidate]], weights: Mapping[str, float] | None = None
) -> list[tuple[Candidate, float]]:
    """Fuse the chunk candidate lists (semantic, lexical, name) and the identifier list
    (the chunks defining a name of the query, and those named so)."""
    weights = WEIGHTS if weights is None else weights
    lists: dict[str, Scored] = {}
    pool: dict[str, Candidate] = {}
    for name, candidates in found.items():
        if name != DEFINITION_LIST:
            lists[name] = Scored([(c.key, c.score) for c in candidates], weights.get(name, 0.5))
        for c in candidates:
            pool.setdefault(c.key, c)
    names, naming = named_identifiers(query), is_name_query(query)
    defining = {c.key: c.score for c in found.get(DEFINITION_LIST, ())}
    ident = _identifier_list(names, list(pool.values()), defining, include_definitions=naming)
    if ident:
        weight = IDENTIFIER_WEIGHT[0] if naming else IDENTIFIER_WEIGHT[1]
        lists["identifier"] = Scored(ident, weight)
    return [(pool[i], score) for i, score in fuse_scores(lists)]


def query_terms(text: str) -> set[str]:
    """The lower-case words of ``text`` a chunk's term overlap is counted on."""
    return set(_WORD.findall(text.lower()))


def rank_within_file(
    items: list[FileChunk], qvec: np.ndarray | None, terms: set[str], mode: str
) -> list[tuple[FileChunk, float]]:
    """A file's own chunks ranked by vector similarity and term overlap with the query."""
    lists: dict[str, Ranked] = {}
    by_id = {c.id: c for c in items}
    embedded = [c for c in items if c.vector is not None]
    if qvec is not None and embedded:
        sims = np.stack([c.vector for c in embedded]) @ qvec
        order = sorted(range(len(embedded)), key=lambda i: (-float(sims[i]), embedded[i].chunk_index))
        lists["semantic"] = Ranked([embedded[i].id for i in order])
    if mode != "semantic":
        overlap = {c.id: len(terms & set(_WORD.findall(c.content.lower()))) for c in items}
        matching = sorted(
            (c for c in items if overlap[c.id] > 0), key=lambda c: (-overlap[c.id], c.chunk_index)
        )
        lists["lexical"] = Ranked([c.id for c in matching])
    fused = fuse(lists)
    ranked_ids = {i for i, _ in fused}
    rest = sorted((c for c in items if c.id not in ranked_ids), key=lambda c: c.chunk_index)
    return [(by_id[i], s) for i, s in fused] + [(c, 0.0) for c in rest]


def _identifier_list(
    idents: tuple[str, ...], pool: list[Candidate], defining: Mapping[str, float], include_definitions: bool
) -> list[tuple[str, float]]:
    """Candidates the symbol index says define a name of the query (``defining``: their
    ``definition_score``), else named exactly so (score 1), and, for a query naming
    something, candidates whose chunk mentions one among its definitions (score 0.5)."""
    if not idents:
        return []
    wanted = set(idents)
    out: list[tuple[str, float]] = []
    for c in pool:
        if c.key in defining:
            out.append((c.key, defining[c.key]))
        elif c.node_name in wanted:
            out.append((c.key, 1.0))
        elif include_definitions and wanted & set(c.definitions):
            out.append((c.key, 0.5))
    return out


def to_hit(view: ChunkView, score: float, names: dict[str, str], folded: Folded | None = None) -> ChunkHit:
    """A search hit from a chunk's view and its score (and its unit, when other pieces of
    it were folded into it)."""
    return ChunkHit(
        id=view.id,
        file_id=view.file_id,
        file_path=view.file_path,
        project_id=view.project_id,
        project=names.get(view.project_id, ""),
        chunk_index=view.chunk_index,
        content=view.content,
        start_line=view.start_line,
        end_line=view.end_line,
        language=view.language,
        node_type=view.node_type,
        node_name=view.node_name,
        role=view.role,
        parent_context=view.parent_context,
        scope_path=view.scope_path,
        relevance_score=round(score, 6),
        unit_start_line=folded.start_line if folded else (view.unit_start_line or view.start_line),
        unit_end_line=folded.end_line if folded else (view.unit_end_line or view.end_line),
        folded_pieces=folded.pieces if folded else 0,
    )
