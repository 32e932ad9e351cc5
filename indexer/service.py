"""``lode serve`` as a per-user background service: a systemd ``--user`` unit on Linux, a
launchd agent on macOS.

The service runs ``lode serve`` on the user's index with every registered project watched,
starts at login, restarts after a failure, and logs to journald (Linux) or
``~/Library/Logs/lode/`` (macOS). ``install`` writes the file and enables the service,
``uninstall`` disables it and removes the file (the index stays), ``start``/``stop`` run
it, ``status`` says whether it is installed and running and what the running server says
(through its discovery file, ``indexer.discovery``), ``logs`` shows its log. Every step is
idempotent, and a missing service manager is one line (a ``ServiceError``).
"""

from __future__ import annotations

import os
import plistlib
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from indexer.errors import ServiceError

__all__ = [
    "LAUNCHD_LABEL",
    "SYSTEMD_UNIT",
    "ServiceManager",
    "launchd_plist",
    "serve_command",
    "service_manager",
    "systemd_unit",
]

#: The systemd user unit's name.
SYSTEMD_UNIT = "lode.service"
#: The launchd agent's label (and its plist's name).
LAUNCHD_LABEL = "dev.lode.server"
#: Longest a service manager's command may take.
_COMMAND_SECONDS = 60
#: Characters systemd's command-line parsing treats specially inside ``ExecStart``.
_SYSTEMD_SPECIAL = re.compile(r"[\s\"'\\;]")


def serve_command(db: Path | str | None = None, port: int | None = None) -> list[str]:
    """The command line the service runs: this Python's ``lode serve`` (the same
    installation that installed it), on ``db`` and ``port`` when given."""
    command = [sys.executable, "-m", "server", "serve"]
    if db is not None:
        command += ["--db", str(db)]
    if port is not None:
        command += ["--port", str(port)]
    return command


def _systemd_word(word: str) -> str:
    """``word`` as one word of a systemd command line (quoted when it must be; ``%`` and
    ``$`` doubled, as systemd would expand them)."""
    word = word.replace("%", "%%").replace("$", "$$")
    if not _SYSTEMD_SPECIAL.search(word) and word:
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


def systemd_unit(command: Sequence[str]) -> str:
    """The text of lode's systemd user unit running ``command``."""
    return f"""[Unit]
Description=lode: local code search for this user (lode serve)
Documentation=man:systemd.service(5)

[Service]
Type=simple
ExecStart={" ".join(_systemd_word(w) for w in command)}
Environment=PYTHONUNBUFFERED=1
# SIGTERM stops lode cleanly (its writer finishes or rolls back); a failure is retried
Restart=on-failure
RestartSec=5
TimeoutStopSec=60

[Install]
WantedBy=default.target
"""


def launchd_plist(command: Sequence[str], log_dir: Path) -> dict[str, Any]:
    """lode's launchd agent running ``command`` (as ``plistlib`` writes it)."""
    return {
        "Label": LAUNCHD_LABEL,
        "ProgramArguments": list(command),
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},  # restarted after a failure, not a stop
        "EnvironmentVariables": {"PYTHONUNBUFFERED": "1"},
        "StandardOutPath": str(log_dir / "server.log"),
        "StandardErrorPath": str(log_dir / "server.log"),
        "ProcessType": "Background",
    }


@dataclass(frozen=True, slots=True)
class ServiceManager:
    """One platform's service manager: where lode's file goes and the commands it takes."""

    kind: str
    """``systemd`` or ``launchd``."""
    path: Path
    """lode's unit file or plist."""
    log_dir: Path | None = None
    """launchd: the folder of the agent's log (systemd logs to journald)."""

    def render(self, command: Sequence[str]) -> bytes:
        """The file's content for ``command``."""
        if self.kind == "systemd":
            return systemd_unit(command).encode()
        assert self.log_dir is not None
        return plistlib.dumps(launchd_plist(command, self.log_dir))

    def installed(self) -> bool:
        """True when lode's file is there."""
        return self.path.is_file()

    def install(self, command: Sequence[str]) -> bool:
        """Write the file (True when it changed) and enable and start the service."""
        text = self.render(command)
        changed = not self.installed() or self.path.read_bytes() != text
        if changed:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_bytes(text)
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
        if self.kind == "systemd":
            self._run("daemon-reload", written=True)
            self._run("enable", SYSTEMD_UNIT, written=True)
            self._run("restart" if changed else "start", SYSTEMD_UNIT, written=True)
        else:
            self._launchctl("bootout", quiet=True)  # a changed plist is loaded again
            self._launchctl("bootstrap", written=True)
        return changed

    def uninstall(self) -> bool:
        """Stop and disable the service and remove its file (the index stays); True when
        there was one."""
        if not self.installed():
            return False
        if self.kind == "systemd":
            self._run("disable", "--now", SYSTEMD_UNIT, quiet=True)
        else:
            self._launchctl("bootout", quiet=True)
        self.path.unlink()
        if self.kind == "systemd":
            self._run("daemon-reload", quiet=True)
        return True

    def start(self) -> None:
        """Start the installed service."""
        self._require_installed()
        if self.kind == "systemd":
            self._run("start", SYSTEMD_UNIT)
        else:
            self._launchctl("bootstrap")

    def stop(self) -> None:
        """Stop the service (it starts again at the next login, or with ``start``)."""
        self._require_installed()
        if self.kind == "systemd":
            self._run("stop", SYSTEMD_UNIT)
        else:
            self._launchctl("bootout", quiet=True)

    def state(self) -> str:
        """What the service manager says: ``active``, ``inactive``, ``failed``…, or
        ``unknown`` when it cannot be asked."""
        if self.kind == "systemd":
            done = _call(["systemctl", "--user", "is-active", SYSTEMD_UNIT])
            word = done.stdout.strip() if done is not None else ""
            return word or "unknown"  # nothing said: its user manager does not answer
        done = _call(["launchctl", "print", f"gui/{os.getuid()}/{LAUNCHD_LABEL}"])
        if done is None:
            return "unknown"
        return "active" if done.returncode == 0 and "state = running" in done.stdout else "inactive"

    def logs_command(self, lines: int, follow: bool) -> list[str]:
        """The command that shows the service's log."""
        if self.kind == "systemd":
            return [
                "journalctl", "--user", "-u", SYSTEMD_UNIT, "-n", str(lines), "--no-pager",
                *(["-f"] if follow else []),
            ]  # fmt: skip
        assert self.log_dir is not None
        return ["tail", "-n", str(lines), *(["-F"] if follow else []), str(self.log_dir / "server.log")]

    def _require_installed(self) -> None:
        if not self.installed():
            raise ServiceError(f"lode's service is not installed ({self.path}): run `lode service install`")

    def _run(self, *args: str, written: bool = False, quiet: bool = False) -> None:
        """``systemctl --user ARGS``; a failure is one line (none with ``quiet``)."""
        _checked(["systemctl", "--user", *args], self.path if written else None, quiet)

    def _launchctl(self, verb: str, written: bool = False, quiet: bool = False) -> None:
        domain = f"gui/{os.getuid()}"
        target = [domain, str(self.path)] if verb == "bootstrap" else [f"{domain}/{LAUNCHD_LABEL}"]
        _checked(["launchctl", verb, *target], self.path if written else None, quiet)


def _call(command: list[str]) -> subprocess.CompletedProcess[str] | None:
    """Run a service manager's command; None when it is not installed at all."""
    if shutil.which(command[0]) is None:
        return None
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=_COMMAND_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None


def _checked(command: list[str], written: Path | None, quiet: bool) -> None:
    """Run ``command``; unless ``quiet``, a failure raises one line saying why (and that
    the file was written, when it was)."""
    done = _call(command)
    if quiet or (done is not None and done.returncode == 0):
        return
    shown = " ".join(command[:3])
    if done is None:
        why = f"`{command[0]}` is not installed here"
    else:
        reason = (done.stderr or done.stdout).strip().splitlines()
        why = f"`{shown}` failed: {reason[-1] if reason else f'exit {done.returncode}'}"
        if "bus" in why.lower() or "xdg_runtime_dir" in why.lower():
            why = f"systemd's user manager is not running here ({why})"
    kept = f"; {written} is written, enable it once that works" if written is not None else ""
    raise ServiceError(f"{why}{kept} (or run `lode serve` in a terminal)")


def service_manager(platform: str | None = None, home: Path | None = None) -> ServiceManager:
    """The service manager of ``platform`` (default: this one's) for the user of ``home``
    (default: ``~``): systemd on Linux, launchd on macOS."""
    platform = sys.platform if platform is None else platform
    if platform.startswith("linux"):
        import platformdirs.unix

        # $XDG_CONFIG_HOME, else ~/.config: where systemd looks for the user's own units
        config = home / ".config" if home is not None else Path(platformdirs.unix.Unix().user_config_dir)
        return ServiceManager("systemd", config / "systemd" / "user" / SYSTEMD_UNIT)
    home = Path.home() if home is None else home
    if platform == "darwin":
        return ServiceManager(
            "launchd",
            home / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist",
            log_dir=home / "Library" / "Logs" / "lode",
        )
    raise ServiceError(f"lode knows no per-user service manager on {platform}: run `lode serve` instead")
