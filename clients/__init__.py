"""Generated clients, checked: lode's OpenAPI document linted by Redocly, and clients
generated from it by openapi-python-client, @hey-api/openapi-ts, openapi-typescript and
openapi-generator (typescript-fetch), each type-checked strictly (mypy, tsc); a small
TypeScript program drives a live server through one of them. The node tools are pinned in
``clients/package-lock.json`` (``npm ci``), the Python ones in ``constraints.txt``.
Run ``./scripts/clients``; tests/test_clients.py runs the same checks."""

from __future__ import annotations

from clients._checks import GENERATORS, check_all, check_generator
from clients._document import dump_document, write_document
from clients._drive import build_driver, run_driver
from clients._lint import lint_document
from clients._report import Report
from clients._toolchain import ToolchainError, ensure_node_modules, missing_programs

__all__ = [
    "GENERATORS",
    "Report",
    "ToolchainError",
    "build_driver",
    "check_all",
    "check_generator",
    "dump_document",
    "ensure_node_modules",
    "lint_document",
    "missing_programs",
    "run_driver",
    "write_document",
]
