"""Examples of the service, project, task, search, document and chunk routes."""

from __future__ import annotations

from typing import Any

__all__ = [
    "CHECK",
    "CHUNK",
    "DOCUMENT",
    "FILES",
    "HEALTH",
    "PROJECT",
    "PROJECT_CREATED",
    "SEARCH",
    "SEARCH_DOCUMENTS",
    "SEARCH_REQUEST",
    "STATUS",
    "TASK",
]

_PID = "6a1f3c52-1b7e-4f0e-9d7a-2f3e4c5b6a70"
_FID = "0b9c8d7e-6f5a-5b4c-8d3e-2f1a0b9c8d7e"
_CID = "01a2007c-d35a-73f7-abb6-264c29371921"

TASK: dict[str, Any] = {
    "id": "01a2007c-d35a-73f7-abb6-264c29371000",
    "project_id": _PID,
    "kind": "index",
    "status": "running",
    "phase": "embed",
    "paths": [],
    "full": False,
    "files_total": 412,
    "files_done": 412,
    "chunks_done": 3120,
    "chunks_total": 3120,
    "chunks_embedded": 1480,
    "percent": 57.9,
    "eta_seconds": 41.2,
    "errors": [],
    "message": "",
    "created_at": "2026-11-21T10:00:00Z",
    "started_at": "2026-11-21T10:00:00Z",
    "finished_at": None,
}

DELETE_TASK: dict[str, Any] = {
    **TASK,
    "kind": "delete",
    "status": "queued",
    "phase": "queued",
    "files_total": 0,
    "files_done": 0,
    "chunks_done": 0,
    "chunks_total": 0,
    "chunks_embedded": 0,
    "percent": 0.0,
    "eta_seconds": None,
    "started_at": None,
}

PROJECT: dict[str, Any] = {
    "id": _PID,
    "name": "shop",
    "root": "/home/me/src/shop",
    "include": [],
    "exclude": ["*.min.js"],
    "files": 412,
    "chunks": 3120,
    "semantic_coverage": 0.4744,
    "implementation_coverage": 0.8125,
    "created_at": "2026-11-21T10:00:00Z",
    "last_indexed_at": "2026-11-21T10:00:04Z",
    "current_task": TASK,
    "watch": {"state": "watching", "pending_events": 0, "last_update_at": None, "last_error": None},
}

PROJECT_CREATED: dict[str, Any] = {"project": PROJECT, "task_id": TASK["id"]}

_HIT: dict[str, Any] = {
    "id": _CID,
    "file_id": _FID,
    "file_path": "src/web/request.py",
    "project_id": _PID,
    "project": "shop",
    "chunk_index": 1,
    "content": "def parse_request(raw: bytes) -> Request:\n    ...",
    "start_line": 12,
    "end_line": 30,
    "language": "python",
    "node_type": "function",
    "node_name": "parse_request",
    "parent_context": "",
    "scope_path": ["parse_request"],
    "relevance_score": 0.9672,
    "uri": "file:///home/me/src/shop/src/web/request.py",
    "matches": [
        {"start": {"line": 11, "character": 4}, "end": {"line": 11, "character": 9}},
        {"start": {"line": 11, "character": 10}, "end": {"line": 11, "character": 17}},
    ],
    "role": "implementation",
    "unit_start_line": 12,
    "unit_end_line": 30,
    "folded_pieces": 0,
}

SEARCH_REQUEST: dict[str, Any] = {
    "query": "parse http request",
    "granularity": "chunk",
    "languages": ["python"],
    "node_types": ["method"],
    "limit": 5,
}
SEARCH: dict[str, Any] = {
    "query": "parse http request",
    "mode": "hybrid",
    "granularity": "chunk",
    "offset": 0,
    "limit": 5,
    "total": 87,
    "has_more": True,
    "groups": [
        {
            "file_id": _FID,
            "file_path": "src/web/request.py",
            "project_id": _PID,
            "project": "shop",
            "total_relevance": 0.9672,
            "chunks": [_HIT],
            "uri": _HIT["uri"],
        }
    ],
    "semantic_coverage": {_PID: 1.0},
    "warnings": [],
    "took_ms": 21.4,
}

SEARCH_DOCUMENTS: dict[str, Any] = {
    "query": "parse http request",
    "mode": "hybrid",
    "granularity": "document",
    "offset": 0,
    "limit": 5,
    "total": 14,
    "has_more": True,
    "documents": [
        {
            "id": _FID,
            "file_path": "src/web/request.py",
            "project_id": _PID,
            "project": "shop",
            "relevance_score": 0.9672,
            "chunk_count": 4,
            "languages": ["python"],
            "primary_language": "python",
            "chunks": [_HIT],
            "role": "implementation",
            "uri": "file:///home/me/src/shop/src/web/request.py",
        }
    ],
    "semantic_coverage": {_PID: 1.0},
    "warnings": [],
    "took_ms": 18.9,
}

_HIT_ONLY = (
    "project",
    "relevance_score",
    "role",
    "unit_start_line",
    "unit_end_line",
    "folded_pieces",
    "uri",
    "matches",
)
_CHUNK_META = {k: v for k, v in _HIT.items() if k not in _HIT_ONLY}
CHUNK: dict[str, Any] = {
    **_CHUNK_META,
    "chunk_hash": "5f1e0c3b9a...",
    "start_byte": 211,
    "end_byte": 884,
    "definitions": ["parse_request", "raw"],
    "references": ["Request", "partition"],
    "embedded": True,
}

DOCUMENT: dict[str, Any] = {
    "id": _FID,
    "project_id": _PID,
    "file_path": "src/web/request.py",
    "content_hash": "9d2f4c1e7b...",
    "file_size": 2048,
    "last_modified": 1795300000.0,
    "indexed_at": "2026-11-21T10:00:03Z",
    "languages": ["python"],
    "primary_language": "python",
    "chunk_count": 4,
    "keywords": ["parse request", "http", "header"],
    "summary": "Parsing raw HTTP requests.",
    "content": None,
    "chunks": None,
}

FILES: dict[str, Any] = {
    "files": [
        {
            "id": _FID,
            "path": "src/web/request.py",
            "language": "python",
            "languages": ["python"],
            "chunk_count": 4,
            "file_size": 2048,
            "indexed_at": "2026-11-21T10:00:03Z",
        }
    ],
    "total": 412,
    "offset": 0,
    "limit": 1,
}

HEALTH: dict[str, Any] = {
    "status": "ok",
    "store_open": True,
    "model_loaded": True,
    "worker_alive": True,
    "version": "0.1.0",
    "search_processes": 1,
    "role": "writer",
    "index_version": 42,
    "reason": None,
}

STATUS: dict[str, Any] = {
    "version": "0.1.0",
    "db": "/home/me/.local/share/lode/index",
    "model_id": "all-MiniLM-L6-v2",
    "dimension": 384,
    "documents": 412,
    "chunks": 3120,
    "chunks_embedded": 1480,
    "embedding_cache": 1480,
    "file_errors": 0,
    "queue": {"running": 1, "done": 3},
    "projects": [PROJECT],
    "worker_error": None,
}

CHECK: dict[str, Any] = {
    "ok": True,
    "problems": [],
    "rows": {"meta": 3, "projects": 1, "code_documents": 412, "code_chunks": 5031, "embedding_cache": 5031},
    "indexes": {"code_chunks.search_text_idx": "ok", "code_chunks.embedding_idx": "ok"},
    "seconds": 0.84,
}
