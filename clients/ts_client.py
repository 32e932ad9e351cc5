"""The TypeScript client package (``clients/typescript``, npm ``@lode/client``): its generated
part, ``src/generated/schema.ts``, is openapi-typescript's output for the document lode serves,
headed by that document's digest, so a test sees when it is stale.

``python -m clients.ts_client generate`` rewrites it; ``python -m clients.ts_client check``
exits 1 when it differs from what the served document generates."""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import re
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from clients._document import dump_document, write_document
from clients._toolchain import CLIENTS, Ran, ToolchainError, ensure_npm_packages, run

__all__ = [
    "SCHEMA",
    "TS_CLIENT",
    "client_lock",
    "document_digest",
    "main",
    "node_test_counts",
    "recorded_digest",
    "render_schema",
    "run_npm",
    "write_schema",
]

#: The npm package's folder.
TS_CLIENT = CLIENTS / "typescript"
#: The generated types, committed.
SCHEMA = TS_CLIENT / "src" / "generated" / "schema.ts"
_HEADER = "// lode OpenAPI document sha256: {digest}\n// Regenerate: python -m clients.ts_client generate\n"
_TAP = re.compile(r"^# (?P<what>tests|pass|fail|cancelled|skipped|todo) (?P<n>\d+)$", re.MULTILINE)
_DIGEST = re.compile(r"^// lode OpenAPI document sha256: (?P<digest>[0-9a-f]{64})$", re.MULTILINE)


def document_digest(document: dict[str, Any]) -> str:
    """sha256 of the document as canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def recorded_digest(schema: Path = SCHEMA) -> str | None:
    """The document digest a generated ``schema.ts`` names in its header (None if none)."""
    found = _DIGEST.search(schema.read_text(encoding="utf-8")[:500]) if schema.is_file() else None
    return found["digest"] if found else None


def node_test_counts(output: str) -> dict[str, int]:
    """The totals a ``node --test --test-reporter=tap`` run prints at its end (``# pass 7`` …)."""
    return {m["what"]: int(m["n"]) for m in _TAP.finditer(output)}


@contextmanager
def client_lock() -> Iterator[None]:
    """Held while the package's ``dist/`` is built or read: test files running side by side
    (pytest-xdist) must not read a declaration file another one is rewriting. Not reentrant."""
    folder = TS_CLIENT / "build"
    folder.mkdir(exist_ok=True)
    with (folder / ".dist.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def run_npm(args: list[str], env: dict[str, str] | None = None, timeout: float = 600) -> Ran:
    """Run ``npm ARGS`` in the package folder (holding ``client_lock``), its pinned packages
    installed first."""
    ensure_npm_packages(TS_CLIENT)
    with client_lock():
        return run(["npm", *args], cwd=TS_CLIENT, timeout=timeout, env=env)


def render_schema(document: dict[str, Any] | None = None) -> str:
    """What ``schema.ts`` holds for ``document`` (default: the served one): the digest
    header, then openapi-typescript's output with its default options."""
    document = document if document is not None else dump_document()
    ensure_npm_packages(TS_CLIENT)
    with tempfile.TemporaryDirectory(prefix="lode-ts-client-") as tmp:
        spec = write_document(Path(tmp) / "openapi.json", document)
        out = Path(tmp) / "schema.ts"
        generator = TS_CLIENT / "node_modules" / ".bin" / "openapi-typescript"
        ran = run([generator, spec, "--output", out], cwd=TS_CLIENT)
        if ran.returncode != 0 or not out.is_file():
            raise ToolchainError(f"openapi-typescript exited {ran.returncode}:\n{ran.output}")
        generated = out.read_text(encoding="utf-8")
    return _HEADER.format(digest=document_digest(document)) + generated


def write_schema(document: dict[str, Any] | None = None) -> Path:
    """Regenerate the committed ``schema.ts``; returns its path."""
    SCHEMA.parent.mkdir(parents=True, exist_ok=True)
    SCHEMA.write_text(render_schema(document), encoding="utf-8")
    return SCHEMA


def main(argv: list[str] | None = None) -> int:
    """``generate`` rewrites schema.ts; ``check`` exits 1 when it is stale."""
    parser = argparse.ArgumentParser(prog="python -m clients.ts_client", description=__doc__)
    parser.add_argument("action", choices=("generate", "check"))
    args = parser.parse_args(argv)
    try:
        if args.action == "generate":
            print(f"ts_client: wrote {write_schema()}")
            return 0
        stale = render_schema() != SCHEMA.read_text(encoding="utf-8")
    except ToolchainError as exc:
        print(f"ts_client: {exc}", file=sys.stderr)
        return 2
    if stale:
        print(f"ts_client: {SCHEMA} is stale: run python -m clients.ts_client generate", file=sys.stderr)
        return 1
    print(f"ts_client: {SCHEMA} is current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
