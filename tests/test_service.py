"""``lode service``: the systemd user unit (checked by ``systemd-analyze verify``), the
launchd plist (a plistlib round trip), and install/status/uninstall against a temporary
home, with systemd's user manager absent (as here) or answering (a stand-in
``systemctl`` that records its calls)."""

from __future__ import annotations

import json
import os
import plistlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from live import serve_in_thread

from indexer.cli import cli
from indexer.config import load_config
from indexer.discovery import load_or_create_token, remove_server_record, write_server_record
from indexer.embed import FakeEmbedder
from indexer.errors import ServiceError
from indexer.service import LAUNCHD_LABEL, launchd_plist, serve_command, service_manager, systemd_unit

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="systemd is Linux's")
#: A database path systemd would misread unquoted: a space, a quote, % and $ specifiers.
AWKWARD_DB = '/tmp/my index/"lode" 100%$HOME'


def _user_manager_answers() -> bool:
    if shutil.which("systemctl") is None:
        return False
    done = subprocess.run(
        ["systemctl", "--user", "is-system-running"], capture_output=True, text=True, timeout=30, check=False
    )
    return done.stdout.strip() not in ("", "offline")


@pytest.mark.skipif(
    shutil.which("systemd-analyze") is None, reason="systemd-analyze is absent (Debian: systemd)"
)
def test_the_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    units = tmp_path / "home" / ".config" / "systemd" / "user"
    units.mkdir(parents=True)
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    unit = units / "lode.service"
    unit.write_text(systemd_unit(serve_command(AWKWARD_DB, 7371)))
    env = {**os.environ, "HOME": str(tmp_path / "home"), "XDG_RUNTIME_DIR": str(runtime)}
    env.pop("XDG_CONFIG_HOME", None)
    done = subprocess.run(
        ["systemd-analyze", "--user", "verify", str(unit)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    text = unit.read_text()
    assert "Restart=on-failure" in text
    assert "WantedBy=default.target" in text
    assert f'"--db" "{AWKWARD_DB}"' not in text  # one word, quoted, specifiers doubled:
    assert '"/tmp/my index/\\"lode\\" 100%%$$HOME"' in text
    # a broken unit is caught by the same check (the check can fail)
    unit.write_text(text.replace("Restart=on-failure", "Restart=sometimes"))
    broken = subprocess.run(
        ["systemd-analyze", "--user", "verify", str(unit)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert "restart specifier" in broken.stderr


def test_the_launchd_plist_round_trips(tmp_path: Path) -> None:
    manager = service_manager("darwin", home=tmp_path)
    assert manager.path == tmp_path / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"
    command = serve_command(AWKWARD_DB, 7371)
    data = plistlib.loads(manager.render(command))
    assert data == launchd_plist(command, tmp_path / "Library" / "Logs" / "lode")
    assert data["Label"] == LAUNCHD_LABEL
    assert data["ProgramArguments"] == [
        sys.executable,
        "-m",
        "server",
        "serve",
        "--db",
        AWKWARD_DB,
        "--port",
        "7371",
    ]
    assert data["RunAtLoad"] is True
    assert data["KeepAlive"] == {"SuccessfulExit": False}
    assert data["StandardErrorPath"] == str(tmp_path / "Library" / "Logs" / "lode" / "server.log")
    assert manager.logs_command(10, follow=False)[-1] == data["StandardErrorPath"]


def test_an_unknown_platform_is_one_line() -> None:
    with pytest.raises(ServiceError, match="no per-user service manager on sunos5"):
        service_manager("sunos5")


def _invoke(home: Path, *args: str, path: str | None = None) -> Result:
    env = {"HOME": str(home), "XDG_CONFIG_HOME": None, **({"PATH": path} if path else {})}
    return CliRunner().invoke(cli, ["service", *args], env=env)


def _one_line(result: Result) -> str:
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    return lines[0]


@linux_only
@pytest.mark.skipif(_user_manager_answers(), reason="a real systemd user manager answers here")
def test_without_a_user_manager_each_command_says_so_in_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    unit = home / ".config" / "systemd" / "user" / "lode.service"
    installed = _invoke(home, "install")
    assert installed.exit_code == 2
    line = _one_line(installed)
    assert line.startswith("lode: error: ")
    assert "systemd's user manager is not running here" in line or "is not installed here" in line
    assert f"{unit} is written" in line
    assert unit.read_text() == systemd_unit(serve_command())
    status = _invoke(home, "status", "--json")
    assert status.exit_code == 0, status.output
    answer = json.loads(status.output)
    assert answer == {
        "manager": "systemd",
        "file": str(unit),
        "installed": True,
        "state": "unknown",
        "server": None,
    }
    text = _invoke(home, "status")
    assert "server: none running — start one with `lode serve <folder>`" in text.output
    for command in ("start", "stop"):
        result = _invoke(home, command)
        assert result.exit_code == 2
        assert "(or run `lode serve` in a terminal)" in _one_line(result)
    removed = _invoke(home, "uninstall")
    assert removed.exit_code == 0, removed.output
    assert not unit.exists()
    assert "was not installed" in _invoke(home, "uninstall").output  # idempotent
    stopped = _invoke(home, "stop")
    assert stopped.exit_code == 2
    assert "not installed" in _one_line(stopped)


@linux_only
def test_with_a_user_manager_install_is_idempotent_and_uninstall_leaves_the_index(tmp_path: Path) -> None:
    """A stand-in ``systemctl`` first on PATH records what lode asks of the manager."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls"
    stub = bin_dir / "systemctl"
    stub.write_text(f'#!/bin/sh\necho "$*" >> {calls}\n[ "$2" = is-active ] && echo active\nexit 0\n')
    stub.chmod(0o755)
    path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    home = tmp_path / "home"
    index = tmp_path / "db"
    index.mkdir()

    def recorded() -> list[str]:
        lines = calls.read_text().splitlines() if calls.exists() else []
        calls.unlink(missing_ok=True)
        return lines

    first = _invoke(home, "install", "--db", str(index), "--port", "7390", path=path)
    assert first.exit_code == 0, first.output
    assert "service installed" in first.output
    assert recorded() == ["--user daemon-reload", "--user enable lode.service", "--user restart lode.service"]
    unit = home / ".config" / "systemd" / "user" / "lode.service"
    assert f"--db {index} --port 7390" in unit.read_text()
    again = _invoke(home, "install", "--db", str(index), "--port", "7390", path=path)
    assert "already installed" in again.output
    assert recorded() == ["--user daemon-reload", "--user enable lode.service", "--user start lode.service"]
    assert _invoke(home, "stop", path=path).exit_code == 0
    assert _invoke(home, "start", path=path).exit_code == 0
    assert recorded() == ["--user stop lode.service", "--user start lode.service"]
    status = json.loads(_invoke(home, "status", "--json", path=path).output)
    assert (status["installed"], status["state"]) == (True, "active")
    assert recorded() == ["--user is-active lode.service"]
    removed = _invoke(home, "uninstall", path=path)
    assert removed.exit_code == 0, removed.output
    assert recorded() == ["--user disable --now lode.service", "--user daemon-reload"]
    assert not unit.exists()
    assert index.is_dir()


def test_status_shows_the_running_server_its_login_link_and_indexing(tmp_path: Path) -> None:
    runtime = tmp_path / "run"
    config = load_config(env={}, overrides={"db": tmp_path / "db", "runtime_dir": runtime, "enabled": False})
    token, token_file = load_or_create_token(config)
    keyed = load_config(
        env={}, overrides={"db": tmp_path / "db", "runtime_dir": runtime, "enabled": False, "api_key": token}
    )
    with serve_in_thread(keyed, FakeEmbedder()) as base:
        write_server_record(keyed, base, auth="bearer", token_file=token_file, version="9.9")
        try:
            env = {"HOME": str(tmp_path / "home"), "LODE_RUNTIME_DIR": str(runtime)}
            result = CliRunner().invoke(cli, ["service", "status", "--json"], env=env)
            assert result.exit_code == 0, result.output
            server = json.loads(result.output)["server"]
            assert (server["url"], server["pid"], server["auth"]) == (base, os.getpid(), "bearer")
            assert server["login_link"] == f"{base}/#token={token}"
            assert server["uptime_seconds"] >= 0
            assert server["indexing"]["projects"] == 0
            assert "error" not in server["indexing"]
            text = CliRunner().invoke(cli, ["service", "status"], env=env).output
            assert f"server: {base} pid {os.getpid()}" in text
            assert "indexing: 0 running, 0 queued; 0 projects" in text
        finally:
            remove_server_record(keyed)
