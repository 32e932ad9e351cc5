"""Examples of discovery: the request, the answer, and one input per stage."""

from __future__ import annotations

from typing import Any

__all__ = ["DISCOVER", "DISCOVER_REQUEST", "STAGE_INPUTS", "STAGE_RESPONSE"]

_CITE = "shop:README.md:L3-L4"
_BULLET: dict[str, Any] = {
    "text": "Shopfront is a tiny example shop used to test lode: a cart, a price calculator and an HTTP "
    "request parser, written in several languages.",
    "citation": _CITE,
    "category": "definition",
    "score": 1.41,
    "project": "shop",
    "file_path": "README.md",
    "start_line": 3,
    "end_line": 4,
    "kind": "prose",
    "chunk_id": "01a2007c-d35a-73f7-abb6-264c29371921",
}
_CHUNK: dict[str, Any] = {
    "project": "shop",
    "file_path": "README.md",
    "content": "# Shopfront\n\nShopfront is a tiny example shop…",
    "start_line": 1,
    "end_line": 4,
    "chunk_index": 0,
    "score": 1.5,
    "similarity": 0.62,
    "id": "01a2007c-d35a-73f7-abb6-264c29371921",
    "file_id": "0b9c8d7e-6f5a-5b4c-8d3e-2f1a0b9c8d7e",
    "project_id": "6a1f3c52-1b7e-4f0e-9d7a-2f3e4c5b6a70",
    "language": "markdown",
    "node_type": "section",
    "node_name": "Shopfront",
    "origin": "broad",
    "citation": "shop:README.md:L1-L4",
}
_PLAN: dict[str, Any] = {
    "sections": [{"title": "Definition", "category": "definition", "priority": 1, "bullets": [_BULLET]}],
    "total_bullets": 1,
    "sources": ["shop:README.md"],
    "omitted": 0,
}

DISCOVER_REQUEST: dict[str, Any] = {
    "question": "what is Shopfront",
    "include": ["shop*"],
    "max_tokens": 2000,
    "config": {"broad": {"mmr_lambda": 0.7}},
}
DISCOVER: dict[str, Any] = {
    "question": "what is Shopfront",
    "answer_prompt": "# Evidence for: what is Shopfront\n\n…\n### Definition\n\n"
    f"1. Shopfront is a tiny example shop… [{_CITE}]\n",
    "plan": _PLAN,
    "bullets": [_BULLET],
    "chunks": [_CHUNK],
    "metrics": {
        "stage_ms": {
            "filter_projects": 0.4,
            "score_projects": 0.1,
            "expand_queries": 0.1,
            "embed_queries": 38.0,
            "broad_discovery": 61.2,
            "semantic_focus": 22.5,
            "promote_readme": 0.3,
            "compress_evidence": 4.1,
            "build_answer_plan": 0.1,
            "render_prompt": 1.2,
        },
        "total_ms": 128.0,
        "projects_searched": 1,
        "projects": ["shop"],
        "focus_projects": ["shop"],
        "queries": ["what is Shopfront", "Shopfront definition"],
        "chunks_found": 21,
        "chunks_after_threshold": 12,
        "chunks_after_dedup": 11,
        "chunks_selected": 11,
        "focus_chunks": 8,
        "context_chunks": 9,
        "chunks": 24,
        "bullets": 9,
        "prompt_tokens": 412,
        "dropped_bullets": 0,
    },
    "warnings": [],
}
#: One example request body per stage.
STAGE_INPUTS: dict[str, dict[str, Any]] = {
    "filter_projects": {"question": "O que é o shop", "include": ["shop*"], "exclude": ["*-test"]},
    "score_projects": {"question": "what is shop", "projects": ["shop"]},
    "expand_queries": {"question": "what is shop", "config": {"expansion": {"max_expansions": 4}}},
    "broad_discovery": {"queries": ["what is shop", "shop definition"], "projects": ["shop"]},
    "semantic_focus": {"queries": ["what is shop"], "question": "what is shop", "projects": ["shop"]},
    "promote_readme": {"chunks": [_CHUNK]},
    "compress_evidence": {"question": "what is shop", "chunks": [_CHUNK]},
    "build_answer_plan": {"bullets": [_BULLET]},
    "render_prompt": {
        "question": "what is shop",
        "plan": _PLAN,
        "config": {"render": {"format_style": "plain"}},
    },
}
STAGE_RESPONSE: dict[str, Any] = {
    "stage": "expand_queries",
    "took_ms": 0.1,
    "result": {"queries": ["what is shop", "shop definition", "shop features", "shop architecture"]},
}
