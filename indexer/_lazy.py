"""Packages that import their public names on first use (PEP 562), so that ``lode --help``
and the CLI's light paths do not pay for the search engine, LanceDB or the model."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from typing import Any

__all__ = ["load_export"]


def load_export(package: str, exports: Mapping[str, str], name: str) -> Any:
    """``package.name``, imported from the submodule ``exports`` names for it (and kept on
    the package, so the next access is a plain attribute)."""
    module = exports.get(name)
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    setattr(sys.modules[package], name, value)
    return value
