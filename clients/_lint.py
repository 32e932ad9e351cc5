"""``redocly lint`` with its recommended rules, its findings counted by severity."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from clients._report import Report
from clients._toolchain import node_tool, run

__all__ = ["lint_document"]


def _problem(problem: dict[str, Any]) -> str:
    """``rule: message (at pointer)``."""
    where = [loc.get("pointer", "") for loc in problem.get("location", [])]
    at = f" (at {where[0]})" if where and where[0] else ""
    return f"{problem.get('ruleId', '?')}: {problem.get('message', '')}{at}"


def lint_document(spec: Path, work: Path) -> Report:
    """Lint the document with Redocly's ``recommended`` rules (a config of its own in ``work``)."""
    work.mkdir(parents=True, exist_ok=True)
    config = work / "redocly.yaml"
    config.write_text("extends:\n  - recommended\n")
    args: list[str | Path] = [node_tool("redocly"), "lint", spec, "--config", config, "--format", "json"]
    ran = run([*args, "--max-problems", "10000"], cwd=work)
    try:
        found = json.loads(ran.stdout)
    except json.JSONDecodeError:
        return Report("redocly lint", (f"exited {ran.returncode}, no JSON report",), (), ran.output)
    problems = found.get("problems", [])
    errors = tuple(_problem(p) for p in problems if p.get("severity") == "error")
    warnings = tuple(_problem(p) for p in problems if p.get("severity") == "warn")
    return Report("redocly lint", errors, warnings, ran.output)
