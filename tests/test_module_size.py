"""No module of lode's packages (``indexer/``, ``server/``) over 400 lines (issue 40): a
module that grows past it holds two concerns, and is cut by domain (``docs/architecture.md``)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("indexer", "server")
MAX_LINES = 400


def _sizes() -> dict[str, int]:
    return {
        str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
    }


def test_the_packages_have_modules() -> None:
    sizes = _sizes()
    assert "indexer/tasks.py" in sizes
    assert "server/app.py" in sizes
    assert len(sizes) > 100


def test_no_module_is_over_400_lines() -> None:
    over = {name: lines for name, lines in _sizes().items() if lines > MAX_LINES}
    assert over == {}
