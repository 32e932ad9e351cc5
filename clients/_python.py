"""openapi-python-client's client, and ``mypy --strict`` over it."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from clients._report import Report
from clients._toolchain import CLIENTS, run

__all__ = ["PACKAGE", "check_python", "generate_python"]

#: The generated package's folder name (``import lode_client``).
PACKAGE = "lode_client"
_MYPY_ERROR = re.compile(r"^(?P<where>\S.*?:\d+(?::\d+)?): error: (?P<message>.*)$")
#: Errors in what the generator writes the same for every document, not counted (shown as
#: ignored). openapi-python-client 0.29.1's client.py template passes ``*args: object`` on to
#: httpx's typed ``__exit__``/``__aexit__`` (3 errors each in Client, AsyncClient and their
#: authenticated twins: 12); no document changes that file.
_TEMPLATE_ERRORS = re.compile(
    r"^lode_client/client\.py:\d+: Argument 1 to \"__a?exit__\" of \"(Async)?Client\" "
    r"has incompatible type \"\*tuple\[object, \.\.\.\]\""
)


def generate_python(spec: Path, out: Path) -> Report:
    """Generate the client into ``out/lode_client`` with the generator's defaults (no
    metadata files); each problem it reports is an error or a warning by its level."""
    out.mkdir(parents=True, exist_ok=True)
    ran = run([sys.executable, CLIENTS / "_python_client.py", spec, out / PACKAGE], cwd=out)
    try:
        found = json.loads(ran.stdout.strip().splitlines()[-1]) if ran.returncode == 0 else None
    except (json.JSONDecodeError, IndexError):
        found = None
    if not isinstance(found, list):
        return Report("openapi-python-client: generate", (f"exited {ran.returncode}",), (), ran.output)
    lines = {
        level: tuple(" ".join(f"{e['header']} {e['detail']}".split()) for e in found if e["level"] == level)
        for level in ("ERROR", "WARNING")
    }
    return Report("openapi-python-client: generate", lines["ERROR"], lines["WARNING"], ran.output)


def check_python(out: Path) -> Report:
    """``mypy --strict`` over the generated package, with no config file but its own."""
    config = out / "mypy.ini"
    config.write_text("[mypy]\nstrict = True\n")
    args: list[str | Path] = [
        "-m",
        "mypy",
        "--strict",
        "--config-file",
        config,
        "--cache-dir",
        out / ".mypy_cache",
    ]
    ran = run([sys.executable, *args, "--no-color-output", "--no-error-summary", PACKAGE], cwd=out)
    found = [f"{m['where']}: {m['message']}" for m in map(_MYPY_ERROR.match, ran.stdout.splitlines()) if m]
    ignored = tuple(e for e in found if _TEMPLATE_ERRORS.match(e))
    errors = tuple(e for e in found if e not in ignored)
    if ran.returncode != 0 and not found:
        errors = (f"mypy exited {ran.returncode}: {ran.output.strip()[:2000]}",)
    return Report("openapi-python-client: mypy --strict", errors, (), ran.output, ignored)
