"""Opening LanceDB: without the REST client it never uses here, with bounded caches.

``lancedb`` imports ``lance_namespace``, which imports the models of
``lance_namespace_urllib3_client``; importing any part of that package first runs its
``__init__``, which imports every REST API module (pydantic validators for hundreds of
methods), most of what ``lode search`` without a server spent before its first query.
lode opens local folders and object storage directly, never a REST namespace.
``defer_rest_client`` registers the package without running its ``__init__`` (its
submodules, such as the models, import as usual); the first use of a name the
``__init__`` defines runs it then, so nothing is lost.

LanceDB's connection keeps caches (a ``Session``: opened index data, table metadata) for
as long as the store is open, bounded here: with LanceDB's defaults it kept every
version's entries, and each write and optimize makes new ones, so a writer's connection
grew all through phase 2 (see docs/performance.md, "Memory and disk"). The search readers (pylance) start
afresh after each optimize (``Maintenance.optimize``), their caches with them.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import types
from datetime import timedelta
from pathlib import Path
from typing import Any

from indexer.store._access import StoreAccess

__all__ = ["CONNECTION_CACHE_BYTES", "connect", "connection_session", "defer_rest_client", "load_lancedb"]

#: Each of the two caches (index data, metadata) of the store's LanceDB connection: more
#: than its writes and the reads made through LanceDB need.
CONNECTION_CACHE_BYTES = 32 << 20

_PACKAGE = "lance_namespace_urllib3_client"


class _DeferredPackage(types.ModuleType):
    """A package whose ``__init__`` runs on the first lookup of a name it defines."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        spec = self.__spec__
        self.__class__ = types.ModuleType  # type: ignore[assignment]  # once: its own names from now on
        if spec is not None and spec.loader is not None:
            spec.loader.exec_module(self)
        return getattr(self, name)


def defer_rest_client() -> None:
    """Register the REST client package so that importing lancedb skips its API modules
    (a no-op once it is imported, or when it is not installed)."""
    if _PACKAGE in sys.modules:
        return
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or spec.submodule_search_locations is None:
        return
    module = _DeferredPackage(_PACKAGE)
    module.__spec__ = spec
    module.__file__ = spec.origin
    module.__path__ = list(spec.submodule_search_locations)
    module.__package__ = _PACKAGE
    module.__loader__ = spec.loader
    sys.modules[_PACKAGE] = module


def load_lancedb() -> Any:
    """The lancedb module, imported without its REST client's modules, its log quiet."""
    os.environ.setdefault("LANCEDB_LOG", "error")
    defer_rest_client()
    import lancedb

    return lancedb


def connection_session() -> Any:
    """Bounded caches for the store's LanceDB connection (``CONNECTION_CACHE_BYTES`` each)."""
    return load_lancedb().Session(
        index_cache_size_bytes=CONNECTION_CACHE_BYTES, metadata_cache_size_bytes=CONNECTION_CACHE_BYTES
    )


def connect(path: Path | str, access: StoreAccess, session: Any = None) -> Any:
    """A LanceDB connection to the store at ``path`` (``session``: its caches)."""
    return load_lancedb().connect(
        str(path),  # a folder's path, or the object-storage URI
        read_consistency_interval=timedelta(seconds=access.read_consistency),
        storage_options=access.lance_options(),
        session=session,
    )
