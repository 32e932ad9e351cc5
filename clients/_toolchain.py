"""The programs the checks run: node packages from ``clients/package-lock.json`` (installed
once by ``npm ci``, again only when the lock file changes), Python tools beside the running
interpreter, Java for openapi-generator; and one way to run them."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CLIENTS",
    "NODE_MODULES",
    "Ran",
    "ToolchainError",
    "ensure_node_modules",
    "ensure_npm_packages",
    "missing_programs",
    "node_tool",
    "python_tool",
    "run",
]

#: This folder: package.json, package-lock.json and (after ``npm ci``) node_modules.
CLIENTS = Path(__file__).resolve().parent
#: Where ``npm ci`` installs the node packages.
NODE_MODULES = CLIENTS / "node_modules"
#: What the node tools must not do at run time: phone home or look for updates.
_QUIET_ENV = {
    "REDOCLY_TELEMETRY": "off",
    "REDOCLY_SUPPRESS_UPDATE_NOTICE": "true",
    "NO_UPDATE_NOTIFIER": "1",
    "npm_config_update_notifier": "false",
    "npm_config_fund": "false",
    "npm_config_audit": "false",
    "NO_COLOR": "1",
    "FORCE_COLOR": "0",
}


class ToolchainError(Exception):
    """A program the checks need is missing or could not be installed."""


@dataclass(frozen=True)
class Ran:
    """A finished program: its exit code and what it printed (stdout, then stderr)."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        """stdout and stderr together."""
        return self.stdout + self.stderr


def missing_programs() -> list[str]:
    """The programs on PATH the checks need (node, npm, java) that are not there."""
    return [name for name in ("node", "npm", "java") if shutil.which(name) is None]


def _lock_digest(folder: Path) -> str:
    """The lock file's and package.json's digest: node_modules is current when it matches."""
    digest = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        digest.update((folder / name).read_bytes())
    return digest.hexdigest()


def ensure_npm_packages(folder: Path) -> None:
    """Install a node package folder's pinned packages (``npm ci``) into ``folder/node_modules``
    unless they match its lock file already."""
    want = _lock_digest(folder)
    stamp = folder / "node_modules" / ".lode-lock-sha256"
    if stamp.is_file() and stamp.read_text().strip() == want:
        return
    if shutil.which("npm") is None:
        raise ToolchainError("npm is not on PATH: the client checks need Node.js 20 and npm")
    folder.joinpath("build").mkdir(exist_ok=True)
    with (folder / "build" / ".npm-ci.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two test processes: one installs, the other waits
        if stamp.is_file() and stamp.read_text().strip() == want:
            return
        ran = run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=folder, timeout=900)
        if ran.returncode != 0:
            raise ToolchainError(f"npm ci in {folder} failed ({ran.returncode}):\n{ran.output}")
        stamp.write_text(want + "\n")


def ensure_node_modules() -> None:
    """Install the checks' pinned node packages (``clients/node_modules``, by ``npm ci``)."""
    ensure_npm_packages(CLIENTS)


def node_tool(name: str) -> Path:
    """An installed node package's program (``clients/node_modules/.bin/NAME``)."""
    path = NODE_MODULES / ".bin" / name
    if not path.exists():
        raise ToolchainError(f"{path} is missing: run `npm ci --prefix {CLIENTS}`")
    return path


def python_tool(name: str) -> Path:
    """A Python console script beside the running interpreter (the venv's ``bin/NAME``)."""
    path = Path(sys.executable).with_name(name)
    if not path.exists():
        raise ToolchainError(f"{path} is missing: run ./scripts/setup")
    return path


def run(args: list[str | Path], cwd: Path, timeout: float = 600, env: dict[str, str] | None = None) -> Ran:
    """Run a program to its end in ``cwd`` (the venv's bin first on PATH, the node tools quiet)."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    full_env = {**os.environ, **_QUIET_ENV, "PATH": path, **(env or {})}
    argv = tuple(str(a) for a in args)
    try:
        done = subprocess.run(
            argv, cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise ToolchainError(f"{' '.join(argv)} ran over {timeout:.0f} s") from exc
    return Ran(argv, done.returncode, done.stdout, done.stderr)
