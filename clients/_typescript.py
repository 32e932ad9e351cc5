"""The TypeScript generators (@hey-api/openapi-ts, openapi-typescript, openapi-generator's
typescript-fetch) and ``tsc --strict`` over what they write."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from clients._report import Report
from clients._toolchain import Ran, node_tool, python_tool, run

__all__ = ["TYPESCRIPT_GENERATORS", "compile_typescript", "generate_typescript"]

#: Every generated client compiles under these (the generators write for browsers and bundlers).
_TSCONFIG: dict[str, object] = {
    "compilerOptions": {
        "strict": True,
        "noEmit": True,
        "target": "ES2022",
        "lib": ["ES2022", "DOM", "DOM.Iterable"],
        "module": "ESNext",
        "moduleResolution": "Bundler",
        "skipLibCheck": True,
        "types": [],
    },
    "include": ["**/*.ts"],
}
_TSC_ERROR = re.compile(r"^(?P<where>\S.*?\(\d+,\d+\)): error (?P<code>TS\d+): (?P<message>.*)$")
#: A log line's level word as each tool prints it (openapi-generator: ``[main] WARN  o.o.c...``).
_WARNING = re.compile(r"\bwarn(ing)?s?\b|⚠", re.IGNORECASE)
_ERROR = re.compile(r"\berror\b|\bexception\b|✘|✖", re.IGNORECASE)
#: Warnings a tool prints whatever the document says: not counted, shown as ignored.
_ABOUT_THE_TOOL = (
    # openapi-generator, for every OpenAPI 3.1 document (Litestar writes 3.1 only)
    re.compile(r"OpenAPI 3\.1 support is still in beta"),
)


def _hey_api(spec: Path, out: Path) -> Ran:
    args: list[str | Path] = [node_tool("openapi-ts"), "--input", spec, "--output", out]
    return run([*args, "--client", "@hey-api/client-fetch", "--no-log-file"], cwd=out.parent)


def _openapi_typescript(spec: Path, out: Path) -> Ran:
    out.mkdir(parents=True, exist_ok=True)
    return run([node_tool("openapi-typescript"), spec, "--output", out / "schema.ts"], cwd=out.parent)


def _openapi_generator(spec: Path, out: Path) -> Ran:
    args: list[str | Path] = [python_tool("openapi-generator-cli"), "generate", "--input-spec", spec]
    args += ["--generator-name", "typescript-fetch", "--output", out]
    return run(args, cwd=out.parent)


#: Each TypeScript generator, run with its defaults on the document into a folder.
TYPESCRIPT_GENERATORS: dict[str, Callable[[Path, Path], Ran]] = {
    "hey-api": _hey_api,
    "openapi-typescript": _openapi_typescript,
    "openapi-generator": _openapi_generator,
}


def _lines(text: str, pattern: re.Pattern[str]) -> tuple[str, ...]:
    return tuple(line.strip() for line in text.splitlines() if pattern.search(line))


def generate_typescript(generator: str, spec: Path, out: Path) -> Report:
    """Run one TypeScript generator; every line it logs at warning or error level counts."""
    out.parent.mkdir(parents=True, exist_ok=True)
    ran = TYPESCRIPT_GENERATORS[generator](spec, out)
    errors = _lines(ran.output, _ERROR)
    warnings = [line for line in _lines(ran.output, _WARNING) if line not in errors]
    ignored = tuple(line for line in warnings if any(p.search(line) for p in _ABOUT_THE_TOOL))
    if ran.returncode != 0 and not errors:
        errors = (f"exited {ran.returncode}",)
    if ran.returncode == 0 and not any(out.rglob("*.ts")):
        errors += (f"wrote no TypeScript into {out}",)
    kept = tuple(line for line in warnings if line not in ignored)
    return Report(f"{generator}: generate", errors, kept, ran.output, ignored)


def compile_typescript(tool: str, folder: Path, tsconfig: dict[str, object] | None = None) -> Report:
    """``tsc --strict`` over a folder (its own tsconfig.json written first); one error a line."""
    (folder / "tsconfig.json").write_text(json.dumps(tsconfig or _TSCONFIG, indent=1) + "\n")
    args: list[str | Path] = [node_tool("tsc"), "--project", folder / "tsconfig.json", "--strict"]
    ran = run([*args, "--pretty", "false"], cwd=folder)
    errors = tuple(
        f"{m['where']}: {m['code']} {m['message']}"
        for m in map(_TSC_ERROR.match, ran.stdout.splitlines())
        if m is not None
    )
    if ran.returncode != 0 and not errors:
        errors = (f"tsc exited {ran.returncode}: {ran.output.strip()[:2000]}",)
    return Report(f"{tool}: tsc --strict", errors, (), ran.output)
