"""The closed sets of values the API takes or answers, as ``Literal`` types: the OpenAPI
document states them as enums, so a generated client has a union type (or an enum) for
each, not a ``string``. Each set is ``indexer``'s own constant written out (a test holds
them equal: tests/test_openapi_document.py); languages stay open text.
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "Granularity",
    "HealthStatus",
    "Match",
    "Mode",
    "NodeTypeName",
    "PromptFormat",
    "Proximity",
    "RoleName",
    "StageName",
    "SymbolKind",
    "SymbolRole",
    "TaskKind",
    "TaskPhase",
    "TaskStatus",
    "WatchState",
]

#: A node type of the shared vocabulary (``indexer.models.NODE_TYPES``).
NodeTypeName = Literal[
    "block", "class", "constant", "constructor", "enum", "function", "impl", "interface", "macro",
    "method", "module", "namespace", "section", "struct", "test", "text", "trait", "type", "variable",
]  # fmt: skip
#: What code is for (``indexer.roles.ROLES``).
RoleName = Literal[
    "implementation", "test", "docs", "example", "config", "changelog", "generated", "vendored", "build"
]
#: How a symbol name matches (``indexer.symbols.MATCHES``).
Match = Literal["exact", "prefix", "glob", "fuzzy"]
#: How near a symbol is to ``from_path`` (``indexer.symbols.PROXIMITIES``).
Proximity = Literal["same_file", "same_module", "imported", "elsewhere"]
#: A row of the symbol index: a definition or a reference site (``indexer.models.SYMBOL_ROLES``).
SymbolRole = Literal["definition", "reference"]
#: A symbol's kind: a definition's node type, or ``reference`` for a reference site.
SymbolKind = Literal[
    "block", "class", "constant", "constructor", "enum", "function", "impl", "interface", "macro",
    "method", "module", "namespace", "section", "struct", "test", "text", "trait", "type", "variable",
    "reference",
]  # fmt: skip
#: A task's status (``indexer._runs.TASK_STATUSES``).
TaskStatus = Literal["queued", "running", "done", "failed", "cancelled"]
#: A task's phase: queued, chunk (the lexical phase), embed (vectors), or its final status.
TaskPhase = Literal["queued", "chunk", "embed", "done", "failed", "cancelled"]
#: What a task does.
TaskKind = Literal["index", "delete"]
#: A project watcher's state.
WatchState = Literal["watching", "polling", "stopped", "error"]
#: How the server is: ok, starting (the model loads) or degraded.
HealthStatus = Literal["ok", "starting", "degraded"]
#: Search granularity.
Granularity = Literal["document", "chunk"]
#: Search mode.
Mode = Literal["hybrid", "semantic", "lexical"]
#: A discovery stage, in pipeline order (``indexer.search.discover.STAGES``).
StageName = Literal[
    "filter_projects", "score_projects", "expand_queries", "broad_discovery", "semantic_focus",
    "promote_readme", "compress_evidence", "build_answer_plan", "render_prompt",
]  # fmt: skip
#: How discovery renders its prompt (``indexer.search.discover.FORMATS``).
PromptFormat = Literal["markdown", "plain", "json"]
