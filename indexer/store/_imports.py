"""Importing lancedb without the REST client it never uses here.

``lancedb`` imports ``lance_namespace``, which imports the models of
``lance_namespace_urllib3_client``; importing any part of that package first runs its
``__init__``, which imports every REST API module (pydantic validators for hundreds of
methods): ~1.2 s of CPU, most of what ``lode search`` without a server spent before its
first query. lode opens local folders and object storage directly, never a REST namespace.
``defer_rest_client`` registers the package without running its ``__init__`` (its
submodules, such as the models, import as usual); the first use of a name the
``__init__`` defines runs it then, so nothing is lost.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from typing import Any

__all__ = ["defer_rest_client"]

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
