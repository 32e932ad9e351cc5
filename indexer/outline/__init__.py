"""Outline navigation: a table of contents of a project's docs and code, navigable without
an LLM (``ls``, ``cat``, ``find``, ``grep``, ``locate``, ``plan``).

The tree is project → directories → files → code units by scope (class → method) or
document sections by heading, built from the chunks already in the index and rebuilt
when the index changes. Node ids are stable strings; see ``indexer.outline._model``.
"""

from indexer.outline._cache import OutlineCache
from indexer.outline._limits import LIMITS
from indexer.outline._model import (
    Cue,
    FindResult,
    GrepMatch,
    GrepResult,
    ListedNode,
    Listing,
    LocateResult,
    NodeInfo,
    NodeText,
    OutlineNode,
    PlanPrompt,
)
from indexer.outline._outline import Outline
from indexer.outline._plan import INTENTS, classify_intent
from indexer.outline._tree import ROOT_ID

__all__ = [
    "INTENTS",
    "LIMITS",
    "ROOT_ID",
    "Cue",
    "FindResult",
    "GrepMatch",
    "GrepResult",
    "ListedNode",
    "Listing",
    "LocateResult",
    "NodeInfo",
    "NodeText",
    "Outline",
    "OutlineCache",
    "OutlineNode",
    "PlanPrompt",
    "classify_intent",
]
