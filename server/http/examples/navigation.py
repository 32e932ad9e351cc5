"""Examples of the outline and symbol routes, one answer per route."""

from __future__ import annotations

from typing import Any

__all__ = ["EDITOR", "OUTLINE", "SYMBOLS"]

_NODE = {
    "id": "docs/guide.md#User guide/Sessions",
    "title": "Sessions",
    "kind": "section",
    "depth": 4,
    "path": "docs/guide.md",
    "parent": "docs/guide.md#User guide",
    "breadcrumb": "shop/docs/guide.md/User guide/Sessions",
    "start_line": 7,
    "end_line": 9,
    "summary": "Session tokens expire one hour after they were last refreshed.",
    "topic_tags": ["sessions", "tokens", "expire", "refreshed", "hour"],
    "leaf_count": 1,
    "child_count": 0,
}
_ROOT = {
    **_NODE,
    "id": ".",
    "title": "shop",
    "kind": "project",
    "depth": 0,
    "path": ".",
    "parent": None,
    "breadcrumb": "shop",
    "start_line": 0,
    "end_line": 0,
    "leaf_count": 25,
    "child_count": 5,
    "summary": "Shopfront is a tiny example shop used to test lode.",
    "topic_tags": ["cart", "session"],
}
_LISTED = {
    "id": "src",
    "title": "src",
    "kind": "directory",
    "summary": "",
    "leaf_count": 19,
    "has_children": True,
    "start_line": 0,
    "end_line": 0,
    "children": [],
}

#: One example answer per route.
OUTLINE: dict[str, Any] = {
    "ls": {"node": _ROOT, "children": [_LISTED], "total_children": 5, "truncated": False},
    "cat": {
        "node": _NODE,
        "text": "    7  ## Sessions\n    8  \n    9  Session tokens expire one hour after…",
        "start_line": 7,
        "end_line": 9,
        "truncated": False,
    },
    "find": {"title": "*session*", "nodes": [_NODE], "total": 1, "truncated": False},
    "grep": {
        "pattern": "expire",
        "node": ".",
        "files_searched": 9,
        "truncated": False,
        "matches": [
            {
                "node": _NODE["id"],
                "title": "Sessions",
                "path": "docs/guide.md",
                "line": 9,
                "preview": "Session tokens expire one hour after they were last refreshed.",
            }
        ],
    },
    "locate": {
        "question": "when do session tokens expire",
        "fallback": None,
        "cues": [
            {
                "node": _NODE["id"],
                "title": "Sessions",
                "kind": "section",
                "path": "docs/guide.md",
                "breadcrumb": _NODE["breadcrumb"],
                "confidence": 0.97,
                "reason": "BM25 5.15; matched: session, token, expir",
            }
        ],
    },
    "locate_request": {"question": "when do session tokens expire"},
    "plan_request": {
        "question": "where are session tokens refreshed",
        "visited": ["docs/guide.md"],
        "evidence": ["tokens expire one hour after a refresh"],
        "missing": "the refresh code",
    },
    "plan": {
        "intent": "factual",
        "system": "You plan how to navigate the outline of the project 'shop'…",
        "user": "## Question\nwhen do session tokens expire\n\n## Intent\nfactual: …",
    },
}

_SYMBOL = {
    "id": "9f931ee84314082ae533eef9c570b4da",
    "project": "shop",
    "project_id": "0190a4b2-7c3e-7d51-9a2f-3b8c6e1d4f20",
    "file_path": "src/shop/cart.py",
    "language": "python",
    "name": "add_item",
    "qualified_name": "Cart.add_item",
    "kind": "method",
    "container": "Cart",
    "container_kind": "class",
    "scope_path": ["Cart", "add_item"],
    "signature": "def add_item(self, sku: str, quantity: int = 1) -> None",
    "start_line": 14,
    "end_line": 18,
    "chunk_id": "0190a4b2-8d11-7c42-b5e0-2f9a7c3d6e81",
    "proximity": "same_module",
    "uri": "file:///home/me/src/shop/src/shop/cart.py",
}
_SITE = {
    "id": "4c1f0b8e2d7a9e3f5b6c8d0a1e2f3a4b",
    "line": 9,
    "text": "cart.add_item(sku, 2)",
    "chunk_id": "0190a4b2-8d11-7c42-b5e0-2f9a7c3d6e99",
    "ranges": [{"start": {"line": 8, "character": 9}, "end": {"line": 8, "character": 17}}],
}

#: One example answer per route.
SYMBOLS: dict[str, Any] = {
    "list": {"name": "add_item", "match": "exact", "symbols": [_SYMBOL], "total": 1, "truncated": False},
    "detail": {
        "symbol": {**_SYMBOL, "proximity": "elsewhere"},
        "role": "definition",
        "text": "",
        "code": "    def add_item(self, sku: str, quantity: int = 1) -> None:\n        …",
        "truncated": False,
    },
    "references": {
        "name": "add_item",
        "definitions": [{**_SYMBOL, "proximity": "elsewhere"}],
        "callers": [
            {
                "project": "shop",
                "file_path": "src/shop/checkout.py",
                "language": "python",
                "container": "checkout",
                "container_kind": "function",
                "signature": "def checkout(cart: Cart, sku: str) -> int",
                "proximity": "elsewhere",
                "sites": [_SITE],
                "uri": "file:///home/me/src/shop/src/shop/checkout.py",
            }
        ],
        "total_sites": 1,
        "total_callers": 1,
        "truncated": False,
    },
}

#: One example answer per editor route.
EDITOR: dict[str, Any] = {
    "text": {
        "uri": "file:///home/me/src/shop/src/shop/cart.py",
        "project": "shop",
        "project_id": "0190a4b2-7c3e-7d51-9a2f-3b8c6e1d4f20",
        "path": "src/shop/cart.py",
        "start_line": 13,
        "end_line": 15,
        "total_lines": 42,
        "text": "    def add_item(self, sku: str, quantity: int = 1) -> None:\n"
        "        self.items[sku] += quantity\n",
        "content_hash": "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262",
    },
    "at": {
        "uri": "file:///home/me/src/shop/src/shop/checkout.py",
        "project": "shop",
        "project_id": "0190a4b2-7c3e-7d51-9a2f-3b8c6e1d4f20",
        "path": "src/shop/checkout.py",
        "position": {"line": 8, "character": 12},
        "name": "add_item",
        "range": {"start": {"line": 8, "character": 9}, "end": {"line": 8, "character": 17}},
        "definitions": [{**_SYMBOL, "proximity": "same_module"}],
        "total": 1,
        "truncated": False,
        "enclosing": {
            **_SYMBOL,
            "id": "5d2e8f7a6b4c3d2e1f0a9b8c7d6e5f4a",
            "file_path": "src/shop/checkout.py",
            "name": "checkout",
            "qualified_name": "checkout",
            "kind": "function",
            "container": "",
            "container_kind": "",
            "scope_path": ["checkout"],
            "signature": "def checkout(cart: Cart, sku: str) -> int",
            "start_line": 7,
            "end_line": 12,
            "chunk_id": "0190a4b2-8d11-7c42-b5e0-2f9a7c3d6e99",
            "proximity": "same_file",
            "uri": "file:///home/me/src/shop/src/shop/checkout.py",
        },
        "chunk": {
            "id": "0190a4b2-8d11-7c42-b5e0-2f9a7c3d6e99",
            "start_line": 7,
            "end_line": 12,
            "node_type": "function",
            "node_name": "checkout",
        },
    },
}
