"""lode's HTTP and MCP shell: a thin Litestar app over the ``indexer`` API.

``create_app`` is imported on first use: ``lode`` (whose entry point lives in
``server.cli``) does not load Litestar to print its help or run a search."""

from typing import TYPE_CHECKING, Any

from indexer._lazy import load_export

if TYPE_CHECKING:
    from server.app import create_app

__all__ = ["create_app"]

_EXPORTS = {"create_app": "server.app"}


def __getattr__(name: str) -> Any:
    """Import ``create_app`` on first use."""
    return load_export(__name__, _EXPORTS, name)
