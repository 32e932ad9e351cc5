"""Every check in one run: the linter, each generator and its compiler, the driver's compile."""

from __future__ import annotations

import shutil
from pathlib import Path

from clients._drive import build_driver
from clients._lint import lint_document
from clients._python import check_python, generate_python
from clients._report import Report
from clients._typescript import TYPESCRIPT_GENERATORS, compile_typescript, generate_typescript

__all__ = ["GENERATORS", "check_all", "check_generator"]

#: The generators, by the name the reports and the tests use.
GENERATORS = ("openapi-python-client", *TYPESCRIPT_GENERATORS)


def check_generator(generator: str, spec: Path, work: Path) -> list[Report]:
    """Generate one client into ``work/GENERATOR`` and type-check it (mypy or tsc, strict);
    the compile step is skipped, and says so, when nothing was generated."""
    out = work / generator
    shutil.rmtree(out, ignore_errors=True)
    if generator == "openapi-python-client":
        generated = generate_python(spec, out)
        if not (out / "lode_client").is_dir():
            return [generated, Report(f"{generator}: mypy --strict", ("no client to check",))]
        return [generated, check_python(out)]
    generated = generate_typescript(generator, spec, out)
    if not any(out.rglob("*.ts")):
        return [generated, Report(f"{generator}: tsc --strict", ("no client to check",))]
    return [generated, compile_typescript(generator, out)]


def check_all(spec: Path, work: Path) -> list[Report]:
    """The linter's report, then each generator's two, then the driver's two."""
    reports = [lint_document(spec, work / "redocly")]
    for generator in GENERATORS:
        reports += check_generator(generator, spec, work)
    driver_reports, _script = build_driver(spec, work / "drive")
    return reports + driver_reports
