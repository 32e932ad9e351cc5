"""The live check: ``drive/live.ts``, compiled with ``tsc --strict`` against the client
openapi-typescript generates (called through openapi-fetch), run by node against a server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from clients._report import Report
from clients._toolchain import CLIENTS, NODE_MODULES, ToolchainError, run
from clients._typescript import compile_typescript, generate_typescript

__all__ = ["build_driver", "run_driver"]

#: Compiled for node (ES modules), strict, emitting JavaScript beside the sources in dist/.
_TSCONFIG: dict[str, object] = {
    "compilerOptions": {
        "strict": True,
        "target": "ES2022",
        "lib": ["ES2022", "DOM"],
        "module": "NodeNext",
        "moduleResolution": "NodeNext",
        "outDir": "dist",
        "skipLibCheck": True,
        "types": ["node"],
    },
    "include": ["*.ts"],
}


def build_driver(spec: Path, work: Path) -> tuple[list[Report], Path]:
    """Generate the schema into ``work``, compile ``live.ts`` against it; the reports of
    both steps and the script node runs (``work/dist/live.js``)."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    generated = generate_typescript("openapi-typescript", spec, work)
    shutil.copy(CLIENTS / "drive" / "live.ts", work / "live.ts")
    (work / "package.json").write_text('{"type": "module", "private": true}\n')
    (work / "node_modules").symlink_to(NODE_MODULES, target_is_directory=True)
    compiled = compile_typescript("drive/live.ts", work, _TSCONFIG)
    return [generated, compiled], work / "dist" / "live.js"


def run_driver(script: Path, base_url: str, folder: Path, timeout: float = 120) -> dict[str, Any]:
    """Run the compiled driver against the server at ``base_url`` on ``folder``; what it found."""
    ran = run(["node", script, base_url, folder], cwd=script.parent, timeout=timeout)
    if ran.returncode != 0:
        raise ToolchainError(f"node {script.name} exited {ran.returncode}:\n{ran.output}")
    found: dict[str, Any] = json.loads(ran.stdout.strip().splitlines()[-1])
    return found
