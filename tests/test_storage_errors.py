"""Storage errors are one line each, naming the cause and the fix (issue 39, 5-7): a full
disk, a read-only or forbidden folder, wrong credentials, a missing bucket, an endpoint that
never answers (within ``object_store_timeout_seconds``). The CLI exits 2 (never "internal
error"), the server answers 503 with lode's error body and ``/health`` is degraded until a
write succeeds; a watcher batch the writer could not take is tried again with backoff;
``lode serve`` says "serving" only once it serves, and a start that fails is one line."""

from __future__ import annotations

import errno
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from conftest import make_repo
from live import serve_in_thread, wait_task

from indexer.config import load_config
from indexer.embed import FakeEmbedder
from indexer.errors import StorageError
from indexer.storage_failure import describe_storage_failure, is_storage_failure, storage_cause, storage_error
from server.cli import cli

API = "/api/v1"
ROOT = Path(__file__).resolve().parent.parent
FAULTS = Path(__file__).parent / "faults"
#: What Lance raises when the disk is full (its own words, as a real run printed them).
LANCE_ENOSPC = (
    "lance error: LanceError(IO): No space left on device (os error 28), "
    "/root/.cargo/registry/src/index.crates.io/lance-file-13.0.0/src/writer/structural.rs:191:9"
)
_S3_403 = (
    "The operation lacked the necessary privileges to complete for path idx/writer.lease: Error "
    "performing GET http://127.0.0.1:9/b/idx/writer.lease in 3ms - Server returned non-2xx status "
    'code: 403 Forbidden: <?xml version="1.0"?><Error><Code>InvalidAccessKeyId</Code></Error>\n\n'
    "Debug source:\nPermissionDenied {\n    path: ...\n}"
)
_S3_404 = (
    'Invalid input, Failed to connect to namespace: IO { source: Generic { store: "S3", source: '
    'ListRequest { ... status: 404, body: Some("<Error><Code>NoSuchBucket</Code><Message>The '
    'specified bucket does not exist</Message>") } }, location: Location { file: ".../lance-io-13.0.0/..." }'
)
_TIMEOUT = (
    "Generic S3 error: Error performing GET http://127.0.0.1:9/b/idx/writer.lease in 1.0s - "
    "HTTP error: error sending request\n\nDebug source:\n inner: Http(HttpError { kind: Timeout })"
)


def _lode_lines(stderr: str) -> list[str]:
    """The lines lode itself printed (not the storage library's log lines)."""
    return [line for line in stderr.splitlines() if line.startswith("lode:")]


def _one_line_error(result: object, *words: str) -> str:
    """The one ``lode: error:`` line of a CLI result (exit 2, no traceback), holding ``words``."""
    exit_code = getattr(result, "exit_code", getattr(result, "returncode", None))
    stderr = str(getattr(result, "stderr", ""))
    assert exit_code == 2, stderr
    assert "Traceback" not in stderr, stderr
    assert "internal error" not in stderr, stderr
    lines = _lode_lines(stderr)
    assert len(lines) == 1, stderr
    assert lines[0].startswith("lode: error: "), stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


# ---- the causes ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("exc", "cause", "fix"),
    [
        (OSError(errno.ENOSPC, "No space left on device"), "disk-full", "free space"),
        (RuntimeError(LANCE_ENOSPC), "disk-full", "free space"),
        (OSError(errno.EDQUOT, "Disk quota exceeded"), "disk-full", "free space"),
        (OSError(errno.EROFS, "Read-only file system"), "read-only", "remount"),
        (RuntimeError("lance error: LanceError(IO): Permission denied (os error 13)"), "denied", "access"),
        (RuntimeError(_S3_403), "credentials", "AWS_ACCESS_KEY_ID"),
        (ValueError(_S3_404), "no-bucket", "create it"),
        (RuntimeError(_TIMEOUT), "timeout", "LODE_OBJECT_STORE_TIMEOUT_SECONDS"),
        (RuntimeError("Generic S3 error: tcp connect error: Connection refused (os error 111)"), "unreachable",
         "endpoint"),
        (RuntimeError("lance error: LanceError(IO): Not found: data/x.lance"), "damaged", "lode check"),
    ],
)  # fmt: skip
def test_each_storage_failure_is_one_line_with_its_cause_and_fix(
    exc: Exception, cause: str, fix: str
) -> None:
    assert is_storage_failure(exc)
    assert storage_cause(exc).name == cause
    line = describe_storage_failure(exc, "s3://b/idx")
    assert "\n" not in line, line
    assert len(line) < 400, line
    assert fix in line
    assert "s3://b/idx" in line
    error = storage_error(exc, "s3://b/idx")
    assert isinstance(error, StorageError)
    assert error.cause == cause
    assert str(error) == line
    assert storage_cause(error).name == cause  # told once, kept


# ---- the CLI ----------------------------------------------------------------------------


def _lode(db: Path | str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``lode ARGS`` as a subprocess with the fake model (``tests/faults``: no kill set)."""
    return subprocess.run(
        [sys.executable, "-m", "indexer", *args],
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join((str(ROOT), str(FAULTS))),
            "LODE_DB": str(db),
            "LODE_MODEL": "fake-hash-256",
            "LODE_PORT": "9",  # no server there: in-process
            **env,
        },
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 600 kB tmpfs (a real full disk; needs root, as CI and the dev machines run)."""
    mount = tmp_path / "small-disk"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=600k", "tmpfs", str(mount)], capture_output=True, check=False
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.mark.slow
def test_a_full_or_read_only_disk_is_one_line_and_a_rerun_after_freeing_space_is_clean(
    small_disk: Path, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    for i in range(30):  # more than 600 kB of index
        (repo / f"gen_{i}.py").write_text("".join(f"def f{i}_{j}():\n    return {j}\n\n" for j in range(60)))
    db = small_disk / "db"
    full = _lode(db, "index", str(repo))
    _one_line_error(full, "the disk holding the index", str(db), "is full", "free space")
    subprocess.run(["mount", "-o", "remount,size=64m", str(small_disk)], check=True)  # space freed
    again = _lode(db, "index", str(repo), "--json")
    assert again.returncode == 0, again.stderr[-2000:]
    checked = _lode(db, "check", "--json")
    assert checked.returncode == 0, checked.stdout[-2000:] + checked.stderr[-2000:]
    # the same disk mounted read-only: an edit cannot be written, and says why
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    (repo / "gen_0.py").write_text("def edited():\n    return 'edited'\n")
    frozen = _lode(db, "index", str(repo))
    _one_line_error(frozen, "the index folder at", "is read-only", "remount it read-write")


@pytest.fixture(scope="module")
def refusing_s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A local S3 that checks credentials (moto with authentication on): lode's test keys
    are not among its users."""
    from local_s3 import moto_server

    os.environ["INITIAL_NO_AUTH_ACTION_COUNT"] = "0"
    try:
        with moto_server(tmp_path_factory.mktemp("moto-auth") / "moto.log") as endpoint:
            os.environ.pop("INITIAL_NO_AUTH_ACTION_COUNT", None)
            yield endpoint
    finally:
        os.environ.pop("INITIAL_NO_AUTH_ACTION_COUNT", None)


def _s3_env(endpoint: str, db: str, **more: str) -> dict[str, str]:
    from local_s3 import s3_env

    return {**s3_env(endpoint), "LODE_DB": db, "LODE_PORT": "9", **more}


@pytest.mark.slow
def test_wrong_credentials_are_one_line_in_the_cli_and_in_serve(refusing_s3: str) -> None:
    env = _s3_env(refusing_s3, "s3://lode-somewhere/idx")
    runner = CliRunner()
    for args in (["status"], ["search", "cart", "--local"], ["serve", "--read-only"], ["serve"]):
        result = runner.invoke(cli, args, env=env)
        _one_line_error(result, "refused lode's credentials", "s3://lode-somewhere/idx", "AWS_ACCESS_KEY_ID")
        assert "serving" not in result.output


@pytest.mark.slow
def test_a_missing_bucket_is_one_line_and_status_does_not_offer_to_index(s3_endpoint: str) -> None:
    env = _s3_env(s3_endpoint, "s3://lode-no-such-bucket/idx")
    runner = CliRunner()
    for args in (["status"], ["status", "--local"], ["search", "cart", "--local"], ["serve", "--read-only"]):
        result = runner.invoke(cli, args, env=env)
        line = _one_line_error(result, "bucket", "lode-no-such-bucket", "does not exist", "create it")
        assert "lode index PATH" not in result.output, line
        assert "Debug source" not in result.output


@pytest.fixture
def silent_endpoint() -> Iterator[str]:
    """An endpoint that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(timeout=5)
        for conn in held:
            conn.close()
        listener.close()


@pytest.mark.slow
def test_an_endpoint_that_never_answers_fails_within_the_timeout(silent_endpoint: str) -> None:
    timeout = 1.0
    env = _s3_env(silent_endpoint, "s3://b/idx", LODE_OBJECT_STORE_TIMEOUT_SECONDS=str(timeout))
    runner = CliRunner()
    # ``status`` first asks who writes (one request); ``--local`` opens the index (Lance
    # makes a handful of requests, each given up after the timeout)
    for args, most in ((["status"], 6 * timeout), (["status", "--local"], 16 * timeout)):
        started = time.monotonic()
        result = runner.invoke(cli, args, env=env)
        took = time.monotonic() - started
        _one_line_error(result, "did not answer in time", "LODE_OBJECT_STORE_TIMEOUT_SECONDS")
        assert took < most, f"lode {' '.join(args)} took {took:.1f} s"


def test_the_object_store_timeout_reaches_every_client() -> None:
    config = load_config(
        env={"LODE_OBJECT_STORE_TIMEOUT_SECONDS": "2.5", "LODE_STORAGE_CONNECT_TIMEOUT": "1s"}
    )
    assert config.storage.store_options == {
        "timeout": "2500ms",
        "connect_timeout": "1s",  # an option given explicitly wins
        "client_retry_timeout": "2",
    }
    assert load_config(env={}).storage.store_options["timeout"] == "30000ms"


# ---- lode serve ---------------------------------------------------------------------------


def test_serve_read_only_before_the_index_exists_says_so_in_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["serve", "--read-only", "--db", str(tmp_path / "none")], env={"LODE_PORT": "9"}
    )
    _one_line_error(result, "no index at", "writer")
    assert "serving" not in result.output


def test_the_loser_of_two_writers_started_at_once_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "db"
    db.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from pathlib import Path; from indexer.writer import WriterLock\n"
         "WriterLock(Path(sys.argv[1])).acquire('lode serve'); print('held', flush=True); time.sleep(120)",
         str(db)],
        env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        # both asked who writes before either held the claim: the check at start saw nobody
        monkeypatch.setattr("indexer.writer.find_writer", lambda config: None)
        result = CliRunner().invoke(cli, ["serve", "--no-watch", "--db", str(db)], env={"LODE_PORT": "9"})
        _one_line_error(result, "lode serve")
        assert "serving" not in result.output
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()


# ---- the server ---------------------------------------------------------------------------


class _FullDisk:
    """Every LanceDB write raises what Lance raises on a full disk while ``full`` is set
    (the injection at the store boundary: reads go on)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import lancedb.merge
        import lancedb.table

        self.full = False
        for cls, names in (
            (lancedb.table.LanceTable, ("add", "delete", "update", "optimize", "create_index",
                                        "create_fts_index", "create_scalar_index", "add_columns")),
            (lancedb.merge.LanceMergeInsertBuilder, ("execute",)),
        ):  # fmt: skip
            for name in names:
                if hasattr(cls, name):
                    monkeypatch.setattr(cls, name, self._guarded(getattr(cls, name)))

    def _guarded(self, method: object) -> object:
        def write(*args: object, **kwargs: object) -> object:
            if self.full:
                raise RuntimeError(LANCE_ENOSPC)
            return method(*args, **kwargs)  # type: ignore[operator]

        return write


def _until(what: str, check: object, timeout: float = 20.0) -> object:
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = check()  # type: ignore[operator]
        if last:
            return last
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {timeout} s (last: {last})")


@pytest.mark.slow
def test_a_full_disk_degrades_health_and_the_watcher_batch_is_retried_once_there_is_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    disk = _FullDisk(monkeypatch)
    repo = make_repo(tmp_path / "repo")
    env = {"LODE_QUIET_MS": "50", "LODE_MAX_DELAY_MS": "200", "LODE_RESCAN_SECONDS": "0"}  # no safety net
    config = load_config(env=env, overrides={"db": tmp_path / "db"})
    with serve_in_thread(config, FakeEmbedder()) as base:
        created = httpx.post(f"{base}{API}/projects", json={"path": str(repo), "name": "shop"}).json()
        assert wait_task(base, created["task_id"])["status"] == "done"
        assert httpx.get(f"{base}/health").json()["status"] == "ok"
        disk.full = True
        (repo / "fresh_module.py").write_text(
            "def zanzibar_quokka():\n    return 'saved while the disk was full'\n"
        )

        def degraded() -> str | None:
            health = httpx.get(f"{base}/health")
            return health.json()["reason"] if health.status_code == 503 else None

        reason = str(_until("/health degraded by the full disk", degraded))
        assert "disk holding the index" in reason, reason
        assert "free space" in reason, reason
        write = httpx.post(f"{base}{API}/projects/{created['project']['id']}/index", json={})
        assert write.status_code == 503, write.text
        assert write.json()["status_code"] == 503
        assert "is full" in write.json()["detail"]
        assert write.json()["extra"][0]["key"] == "index"
        time.sleep(1.5)
        assert httpx.get(f"{base}/health").status_code == 503  # no check clears a full disk
        disk.full = False  # space freed: the watcher's batch lands without a rescan

        def found() -> bool:
            body = {"query": "zanzibar_quokka", "mode": "lexical", "granularity": "chunk"}
            hits = httpx.post(f"{base}{API}/search", json=body).json()["groups"]
            return any(h["file_path"] == "fresh_module.py" for h in hits)

        _until("the batch retried", found, timeout=30)
        _until("/health ok again", lambda: httpx.get(f"{base}/health").status_code == 200, timeout=30)


@pytest.mark.slow
def test_a_writer_that_lost_its_lease_says_so_before_it_exits(s3_endpoint: str, tmp_path: Path) -> None:
    from live import free_port
    from local_s3 import new_bucket

    from indexer.writer import LEASE_OBJECT, LOST_EXIT_STATUS, WriterLease

    db = f"s3://{new_bucket(s3_endpoint)}/idx"
    env = {
        **os.environ,
        **_s3_env(s3_endpoint, db),
        "PYTHONPATH": os.pathsep.join((str(ROOT), str(FAULTS))),  # the fake model
        "LODE_MODEL": "fake-hash-256",
        "LODE_PORT": str(free_port()),
        "LODE_WRITER_LEASE_SECONDS": "3",
        "LODE_SEARCH_PROCESSES": "0",
    }
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "server", "serve", "--no-watch"],
            env=env,
            stdout=out,
            stderr=out,
            text=True,
        )
    try:
        _until("serving", lambda: "lode: serving" in log.read_text(), timeout=60)
        config = load_config(env=_s3_env(s3_endpoint, db))
        lease = WriterLease(db, config.storage.store_options)
        import obstore

        held = obstore.get(lease._objects(), LEASE_OBJECT)
        taken = {
            "pid": 1,
            "host": "elsewhere",
            "command": "lode serve",
            "renewed_at": time.time(),
            "ttl_seconds": 30,
        }
        lease.put(taken, held.meta.get("e_tag"))  # another writer took it
        assert server.wait(timeout=30) == LOST_EXIT_STATUS
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    said = log.read_text()
    assert "lost the writer's lease of " + db in said, said[-2000:]


@pytest.mark.slow
def test_http_and_mcp_say_a_storage_failure_as_the_cli_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import anyio
    from mcp import Client

    from indexer.api import Lode

    repo = make_repo(tmp_path / "repo")
    config = load_config(env={"LODE_WATCH": "false"}, overrides={"db": tmp_path / "db"})
    refused = RuntimeError(_S3_403)
    line = describe_storage_failure(refused)
    with serve_in_thread(config, FakeEmbedder()) as base:
        created = httpx.post(f"{base}{API}/projects", json={"path": str(repo), "name": "shop"}).json()
        assert wait_task(base, created["task_id"])["status"] == "done"

        def search(self: Lode, options: object) -> None:
            raise refused

        monkeypatch.setattr(Lode, "search", search)
        answer = httpx.post(f"{base}{API}/search", json={"query": "cart"})
        assert answer.status_code == 503, answer.text
        assert answer.json()["detail"] == line
        health = httpx.get(f"{base}/health")
        assert health.status_code == 503
        assert line in health.json()["reason"]

        async def main() -> str:
            async with Client(f"{base}/mcp", read_timeout_seconds=60) as client:
                result = await client.call_tool("search", {"query": "cart"})
                assert result.is_error
                return "".join(block.text for block in result.content)

        assert anyio.run(main) == line


def test_a_task_that_met_a_full_disk_is_queued_again_with_backoff_not_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from indexer import tasks
    from indexer.api import Lode
    from indexer.health import StorageHealth

    lode = Lode(load_config(env={}, overrides={"db": tmp_path / "db"}), embedder=FakeEmbedder())
    project = lode.register(make_repo(tmp_path / "repo"))
    real = tasks.run_lexical_phase
    tries: list[float] = []

    def full_twice(*args: object, **kwargs: object) -> object:
        tries.append(time.monotonic())
        if len(tries) <= 2:
            raise RuntimeError(LANCE_ENOSPC)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(tasks, "run_lexical_phase", full_twice)
    health = StorageHealth()
    worker = tasks.IndexWorker(lode.store, lode.embedder, lode.config, storage=health)
    worker.start()
    try:
        task = worker.submit(project.id)
        _until("the first failure", lambda: len(tries) >= 1)
        _until("health degraded", lambda: health.failure is not None, timeout=5)
        assert health.failure is not None
        assert "disk holding the index" in health.failure.message
        assert worker.get(task.id).status in ("queued", "running")  # not failed
        assert "trying again" in (worker.get(task.id).message or "")
        health.checked()  # a check only reads: a full disk stands
        assert health.failure is not None
        assert worker.wait(task.id, timeout=30).status == "done"
    finally:
        worker.stop()
        lode.close()
    assert len(tries) == 3
    assert tries[1] - tries[0] >= 0.9  # 1 s, then 2 s
    assert tries[2] - tries[1] >= 1.9
    assert health.failure is None  # the write succeeded
    assert worker.last_error is None


def test_the_cli_tells_the_index_s_storage_from_another_file(monkeypatch: pytest.MonkeyPatch) -> None:
    from indexer.cli._common import _unexpected

    monkeypatch.setenv("LODE_DB", "/srv/idx")
    full = _unexpected(OSError(errno.ENOSPC, "No space left on device", "/srv/idx/code_chunks.lance/data/x"))
    assert full.startswith("error: the disk holding the index at /srv/idx is full")
    project = _unexpected(PermissionError(errno.EACCES, "Permission denied", "/home/me/project/a.py"))
    assert project == "error: Permission denied (/home/me/project/a.py)"  # not the index's
    assert _unexpected(KeyError("x")).startswith("internal error: ")
