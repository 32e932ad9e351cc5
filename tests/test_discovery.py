"""The discovery file a running server leaves (``indexer.discovery``) and the per-user
token that keeps a local server private: written, read by the CLI and ``lode mcp``,
replaced when stale, refused to another user id."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx
import pytest
from click.testing import CliRunner
from live import free_port, serve_in_thread
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from indexer.cli import cli
from indexer.cli._common import make_config
from indexer.config import LodeConfig, load_config
from indexer.discovery import (
    DISCOVERY_FILE,
    ServerRecord,
    discovery_path,
    load_or_create_token,
    pid_alive,
    read_server_record,
    remove_server_record,
    write_server_record,
)
from indexer.embed import FakeEmbedder
from indexer.errors import ConfigError
from indexer.remote import find_server

SLOWDOWN = Path(__file__).parent / "slowdown"


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private runtime folder for this test (what ``LODE_RUNTIME_DIR`` names)."""
    folder = tmp_path / "run"
    monkeypatch.setenv("LODE_RUNTIME_DIR", str(folder))
    return folder


def config_for(tmp_path: Path, runtime: Path, **overrides: object) -> LodeConfig:
    """Settings for an index under ``tmp_path`` with ``runtime`` as the runtime folder."""
    return load_config(env={}, overrides={"db": tmp_path / "db", "runtime_dir": runtime, **overrides})


def dead_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def mode_of(path: Path) -> int:
    """The permission bits of ``path``."""
    return stat.S_IMODE(path.stat().st_mode)


def test_the_record_is_written_private_read_back_and_removed(tmp_path: Path, runtime: Path) -> None:
    config = config_for(tmp_path, runtime)
    token, token_file = load_or_create_token(config)
    path = write_server_record(
        config, "http://127.0.0.1:7399", auth="bearer", token_file=token_file, version="9.9"
    )
    assert path == runtime / DISCOVERY_FILE == discovery_path(config)
    assert mode_of(runtime) == 0o700
    assert mode_of(path) == 0o600
    data = json.loads(path.read_text())
    assert set(data) == {"url", "pid", "version", "db", "auth", "token_file", "started_at"}
    assert data["pid"] == os.getpid()
    assert data["db"] == str(tmp_path / "db")
    assert data["started_at"].endswith("Z")
    record = read_server_record(config)
    assert record is not None
    assert (record.url, record.auth, record.token()) == ("http://127.0.0.1:7399", "bearer", token)
    assert not remove_server_record(config, pid=os.getpid() + 1)  # another's record is left alone
    assert remove_server_record(config)
    assert not path.exists()
    assert read_server_record(config) is None


def test_a_stale_record_is_ignored_and_replaced(tmp_path: Path, runtime: Path) -> None:
    config = config_for(tmp_path, runtime)
    runtime.mkdir()
    gone = dead_pid()
    assert not pid_alive(gone)
    stale = {"url": "http://127.0.0.1:1", "pid": gone, "auth": "none", "token_file": None}
    (runtime / DISCOVERY_FILE).write_text(json.dumps(stale))
    assert read_server_record(config) is None
    assert write_server_record(config, "http://127.0.0.1:7398", auth="none", token_file=None, version="1")
    record = read_server_record(config)
    assert record is not None
    assert (record.pid, record.url) == (os.getpid(), "http://127.0.0.1:7398")
    # junk is no record either
    (runtime / DISCOVERY_FILE).write_text("{not json")
    assert read_server_record(config) is None
    assert ServerRecord.from_json({"url": "x"}) is None


def test_a_live_server_keeps_its_record(tmp_path: Path, runtime: Path) -> None:
    config = config_for(tmp_path, runtime)
    runtime.mkdir()
    with socket.socket() as listening:  # the other server listens
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        url = f"http://127.0.0.1:{listening.getsockname()[1]}"
        other = {"url": url, "pid": os.getppid(), "auth": "none", "token_file": None}
        (runtime / DISCOVERY_FILE).write_text(json.dumps(other))
        written = write_server_record(
            config, "http://127.0.0.1:7002", auth="none", token_file=None, version="1"
        )
        assert written is None
        record = read_server_record(config)
        assert record is not None
        assert record.url == url
        assert not remove_server_record(config)  # not this process's to remove
        # one naming the URL this process now listens at is stale, whoever has its pid
        assert write_server_record(config, url, auth="none", token_file=None, version="1")
    record = read_server_record(config)
    assert record is not None
    assert record.pid == os.getpid()


def test_a_record_where_nothing_listens_is_replaced(tmp_path: Path, runtime: Path) -> None:
    """Its pid is alive but runs something else now (the number was reused): nothing
    listens at its URL, so a new server replaces it."""
    config = config_for(tmp_path, runtime)
    runtime.mkdir()
    other = {
        "url": f"http://127.0.0.1:{free_port()}",
        "pid": os.getppid(),
        "auth": "none",
        "token_file": None,
    }
    (runtime / DISCOVERY_FILE).write_text(json.dumps(other))
    assert write_server_record(config, "http://127.0.0.1:7004", auth="none", token_file=None, version="1")
    record = read_server_record(config)
    assert record is not None
    assert record.pid == os.getpid()


def test_the_token_is_made_once_and_kept_private(tmp_path: Path, runtime: Path) -> None:
    config = config_for(tmp_path, runtime)
    token, path = load_or_create_token(config)
    assert len(token) >= 40
    assert mode_of(path) == 0o600
    path.chmod(0o644)  # opened up by hand: closed again, the same token kept
    assert load_or_create_token(config) == (token, path)
    assert mode_of(path) == 0o600


def _nobody_reads(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "cat", str(path)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root and setpriv to run a process as another user id",
)
def test_another_user_id_cannot_read_the_token(tmp_path: Path) -> None:
    """A second local account (uid 65534, nobody) cannot read the token, so it cannot
    send it: the server refuses it (see the serve test for the refusal)."""
    base = Path(tempfile.mkdtemp(prefix="lode-uid-", dir="/tmp"))
    try:
        base.chmod(0o755)  # nobody may walk to the runtime folder, which is the token's guard
        config = config_for(tmp_path, base / "run")
        token, path = load_or_create_token(config)
        refused = _nobody_reads(path)
        assert refused.returncode != 0
        assert "Permission denied" in refused.stderr
        assert token not in refused.stdout
        path.parent.chmod(0o755)  # even with the folder open, the file's own 0600 refuses
        assert "Permission denied" in _nobody_reads(path).stderr
        path.chmod(0o644)  # the check that the test can tell: readable, nobody reads it
        assert _nobody_reads(path).stdout.strip() == token
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_url_that_is_no_server_address_is_refused() -> None:
    with pytest.raises(ConfigError, match="url must be http://host:port"):
        load_config(env={"LODE_URL": "ftp://x"})


def test_find_server_takes_the_discovered_server_and_its_token(
    tmp_path: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LODE_API_KEY", raising=False)
    config = config_for(tmp_path, runtime, enabled=False)
    token, token_file = load_or_create_token(config)
    keyed = load_config(
        env={}, overrides={"db": tmp_path / "db", "runtime_dir": runtime, "enabled": False, "api_key": token}
    )
    with serve_in_thread(keyed, FakeEmbedder()) as base:
        # a client configured for another port, another index, no key
        client = make_config(db=tmp_path / "elsewhere", port=free_port(), api_key=None)
        assert find_server(client) is None  # nothing said where the server is
        write_server_record(keyed, base, auth="bearer", token_file=token_file, version="1")
        remote = find_server(client)
        assert remote is not None
        assert (remote.base_url, remote.api_key) == (base, token)
        assert remote.get("/api/v1/status")["db"] == str(tmp_path / "db")
        assert find_server(client, same_db=True) is None  # another index was asked for
        own = make_config(db=tmp_path / "db", port=free_port(), api_key=None)
        found = find_server(own, same_db=True)  # through the writer lock, the token discovered
        assert found is not None
        assert found.api_key == token
        # LODE_URL names it: the token discovered for that URL goes with it; a wrong URL is none
        named = find_server(make_config(db=tmp_path / "elsewhere", url=base + "/", api_key=None))
        assert named is not None
        assert (named.base_url, named.api_key) == (base, token)
        nowhere = make_config(db=tmp_path / "db", url=f"http://127.0.0.1:{free_port()}", api_key=None)
        assert find_server(nowhere) is None
        # an explicit key wins over the discovered one
        explicit = find_server(make_config(db=tmp_path / "elsewhere", port=free_port(), api_key="mine"))
        assert explicit is not None
        assert explicit.api_key == "mine"
        remove_server_record(keyed)


def _wait_for(path: Path, timeout: float = 120.0) -> dict[str, object]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            return dict(json.loads(path.read_text()))
        time.sleep(0.1)
    raise TimeoutError(f"no {path}")


@pytest.mark.slow
def test_lode_serve_is_private_found_by_the_cli_and_mcp_and_removes_its_record(tmp_path: Path) -> None:
    """``lode serve`` (a real process; the fake model) makes the token, leaves its record
    once it listens (replacing a stale one), refuses requests without the token, is found
    by ``lode status`` and ``lode mcp`` through the record, and removes it at a clean stop."""
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    (runtime / DISCOVERY_FILE).write_text(json.dumps({"url": "http://127.0.0.1:1", "pid": dead_pid()}))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("LODE_NO_AUTH", "LODE_API_KEY")}
    env |= {
        "LODE_RUNTIME_DIR": str(runtime),
        "LODE_DB": str(tmp_path / "db"),
        "LODE_PORT": str(port),
        "LODE_MODEL": "fake-hash-256",
        "LODE_TEST_PAUSE": "0",
        "LODE_SEARCH_PROCESSES": "0",
        "PYTHONPATH": os.pathsep.join((str(Path(__file__).resolve().parent.parent), str(SLOWDOWN))),
    }
    log = (tmp_path / "serve.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "server", "serve", "--no-watch"], env=env, stdout=log, stderr=log
    )
    try:
        record = _wait_for(runtime / DISCOVERY_FILE)
        while record["pid"] != proc.pid:  # the stale one, until the server replaces it
            time.sleep(0.1)
            record = _wait_for(runtime / DISCOVERY_FILE)
        base = f"http://127.0.0.1:{port}"
        assert record["url"] == base
        assert record["auth"] == "bearer"
        token_file = Path(str(record["token_file"]))
        assert mode_of(token_file) == 0o600
        token = token_file.read_text().strip()
        assert httpx.get(f"{base}/health").status_code == 200  # public: says nothing of the code
        refused = httpx.get(f"{base}/api/v1/projects")
        assert refused.status_code == 401
        assert refused.json()["detail"].startswith("missing or wrong API key")
        assert httpx.post(f"{base}/mcp/", json={}).status_code == 401
        wrong = httpx.get(f"{base}/api/v1/projects", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        ok = httpx.get(f"{base}/api/v1/projects", headers={"Authorization": f"Bearer {token}"})
        assert ok.status_code == 200
        # the CLI finds it through the record (configured for another port) and sends the token
        cli_env = {"LODE_RUNTIME_DIR": str(runtime), "LODE_PORT": str(free_port()), "LODE_DB": None}
        status = CliRunner().invoke(cli, ["status", "--json"], env=cli_env)
        assert status.exit_code == 0, status.output
        answer = json.loads(status.output)
        assert (answer["via"], answer["db"]) == (base, str(tmp_path / "db"))

        # lode mcp forwards to it with the token
        async def main() -> None:
            params = StdioServerParameters(
                command=sys.executable,
                args=["-m", "server", "mcp", "--no-watch"],
                env={**env, "LODE_PORT": str(free_port())},
            )
            with tempfile.TemporaryFile("w+") as err:
                async with Client(stdio_client(params, errlog=err), read_timeout_seconds=60) as client:
                    assert f"forwards every tool call to the lode server at {base}" in (
                        client.instructions or ""
                    )
                    result = await client.call_tool("projects", {})
                    assert not result.is_error, result

        anyio.run(main)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) in (0, -signal.SIGTERM)  # uvicorn raises it again
        assert not (runtime / DISCOVERY_FILE).exists()
        assert token_file.read_text().strip() == token  # kept for the next start
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
    text = (tmp_path / "serve.log").read_text()
    assert f"private to this user (token in {token_file})" in text
    assert token not in text  # a log (not a terminal) never holds the secret
