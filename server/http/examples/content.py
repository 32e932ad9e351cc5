"""Examples of the agent endpoints: search_content, find_documents, a document by path."""

from __future__ import annotations

from typing import Any

__all__ = ["CONTENT"]

_RESULT: dict[str, Any] = {
    "chunk_id": "01a2007c-d35a-73f7-abb6-264c29371921",
    "document_id": "src/auth/login_form.py",
    "project": "shop",
    "project_id": "6a1f3c52-1b7e-4f0e-9d7a-2f3e4c5b6a70",
    "content": "def login(user: str, password: str) -> Session:\n    session = Session(user)\n    ...",
    "relevance_score": 0.8421,
    "chunk_index": 5,
    "start_line": 40,
    "end_line": 61,
    "language": "python",
    "node_type": "function",
    "node_name": "login",
    "matched_terms": ["Session"],
    "document_keywords": ["login", "session token", "password hash", "form validation", "rate limit"],
    "uri": "file:///home/me/src/shop/src/auth/login_form.py",
    "matches": [
        {"start": {"line": 39, "character": 38}, "end": {"line": 39, "character": 45}},
        {"start": {"line": 40, "character": 14}, "end": {"line": 40, "character": 21}},
    ],
}
_HINTS: dict[str, Any] = {
    "next_actions": [
        "Read the whole file: get_document_data(project='shop', document_id='src/auth/login_form.py')",
        "More results: call search_content again with continuation_token=next_token",
    ],
    "related_queries": ["session token", "password hash", "rate limit"],
}
CONTENT: dict[str, Any] = {
    "search_content_request": {
        "semantic_concepts": ["authentication"],
        "exact_terms": ["Session"],
        "limit": 5,
    },
    "find_documents_request": {"query": "authentication", "limit": 5},
    "search_content": {
        "data": {
            "results": [_RESULT],
            "statistics": {
                "total_results": 47,
                "files_covered": ["src/auth/login_form.py", "src/auth/session.py"],
                "total_files": 2,
                "avg_relevance": 0.61,
                "search_interpretation": "Chunks about 'authentication' (by meaning); boosted ×1.5 for each "
                "exact term present: 'Session' (exact case) in shop; relevance ≥ 0.35.",
                "took_ms": 23.5,
            },
        },
        "status": {
            "success": True,
            "code": 200,
            "message": "Found 47 result(s) in 2 file(s)",
            "warnings": [],
        },
        "continuation": {"has_more": True, "next_token": "eyJkIjoiNGMxZ…"},
        "navigation_hints": _HINTS,
    },
    "find_documents": {
        "data": {
            "documents": [
                {
                    "document_id": "src/auth/session.py",
                    "project": "shop",
                    "project_id": _RESULT["project_id"],
                    "relevance_score": 0.97,
                    "summary": "Sessions: creation, refresh and expiry of login tokens.",
                    "document_keywords": ["session", "refresh token", "expiry", "login", "cookie"],
                    "languages": ["python"],
                    "primary_language": "python",
                    "chunk_count": 9,
                    "file_size": 4210,
                    "uri": "file:///home/me/src/shop/src/auth/session.py",
                }
            ],
            "statistics": {
                "total_results": 31,
                "avg_relevance": 0.42,
                "search_interpretation": "Files about 'authentication' in every project, by best chunks, "
                "vectors, words.",
                "took_ms": 31.0,
            },
        },
        "status": {"success": True, "code": 200, "message": "Found 31 file(s)", "warnings": []},
        "continuation": {"has_more": True, "next_token": "eyJkIjoiYTE5…"},
        "navigation_hints": _HINTS,
    },
    "document": {
        "document_id": "src/auth/session.py",
        "project": "shop",
        "project_id": _RESULT["project_id"],
        "languages": ["python"],
        "primary_language": "python",
        "chunk_count": 1,
        "file_size": 4210,
        "last_modified": 1795300000.0,
        "indexed_at": "2026-11-21T10:00:03Z",
        "keywords": ["session", "refresh token", "expiry", "login", "cookie"],
        "summary": "Sessions: creation, refresh and expiry of login tokens.",
        "chunks": [
            {
                "chunk_id": _RESULT["chunk_id"],
                "chunk_index": 0,
                "start_line": 1,
                "end_line": 3,
                "node_type": "block",
                "node_name": "",
                "content": '"""Sessions: creation, refresh and expiry of login tokens."""',
            }
        ],
        "text": None,
    },
}
