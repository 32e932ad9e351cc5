"""``python -m clients [--spec FILE] [--work DIR]``: lint lode's OpenAPI document, generate
each client from it and type-check it; one report per tool (errors and warnings, one a
line); exit 1 if any tool reported one, 2 if a tool is missing."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from clients._checks import check_all
from clients._document import write_document
from clients._toolchain import ToolchainError, ensure_node_modules, missing_programs

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run every check and print its report; the exit code says whether all were clean."""
    parser = argparse.ArgumentParser(prog="python -m clients", description=__doc__)
    parser.add_argument("--spec", type=Path, help="check this OpenAPI document, not the app's")
    parser.add_argument("--work", type=Path, help="write the clients here (default: a new temporary folder)")
    args = parser.parse_args(argv)
    missing = missing_programs()
    if missing:
        print(f"clients: missing on PATH: {', '.join(missing)}", file=sys.stderr)
        return 2
    work = (args.work or Path(tempfile.mkdtemp(prefix="lode-clients-"))).resolve()
    try:
        ensure_node_modules()
        spec = args.spec.resolve() if args.spec else write_document(work / "openapi.json")
        reports = check_all(spec, work)
    except ToolchainError as exc:
        print(f"clients: {exc}", file=sys.stderr)
        return 2
    for report in reports:
        print(report.render(), end="\n\n")
    print("\n".join(r.summary() for r in reports))
    print(f"clients: document {spec}, clients in {work}")
    return 0 if all(r.clean for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
