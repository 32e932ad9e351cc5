"""lode's HTTP and MCP shell: a thin Litestar app over the ``indexer`` API."""

from server.app import create_app

__all__ = ["create_app"]
