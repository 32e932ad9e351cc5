"""One index on object storage (issue 31): the store, the writer's lease, readers and
version retention, against a local S3 server (moto's, ``s3_endpoint``), in this process
with the fake embedder. The servers' own test is ``test_scale_out_servers.py``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from local_s3 import object_names

from indexer.api import Lode
from indexer.config import ConfigError, db_location, load_config
from indexer.embed import FakeEmbedder
from indexer.errors import ReadOnlyError
from indexer.search import SearchOptions
from indexer.store import StoreAccess, open_store
from indexer.store._lance import _children
from indexer.writer import LEASE_OBJECT, WriterBusyError, WriterLease, find_writer, writer_claim

QUERIES = [
    "parse the request document",
    "refresh the session token",
    "cart total in cents",
    "apply a discount",
]


def _bucket_of(db: str) -> tuple[str, str]:
    bucket, _, prefix = db.removeprefix("s3://").partition("/")
    return bucket, prefix


def _hits(lode: Lode, query: str, mode: str = "hybrid") -> list[tuple[Any, ...]]:
    response = lode.search(SearchOptions(query=query, mode=mode, granularity="chunk", limit=10))
    return [
        (hit.file_path, hit.start_line, hit.end_line, round(hit.relevance_score, 4))
        for group in response.groups
        for hit in group.chunks
    ]


def test_storage_settings_come_from_lode_storage_and_the_aws_variables() -> None:
    env = {
        "LODE_DB": "s3://bucket/some/prefix/",
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9000",
        "AWS_REGION": "eu-west-1",
        "AWS_ACCESS_KEY_ID": "key",
        "LODE_STORAGE_REGION": "us-east-1",  # an alias: one spelling reaches the store
        "LODE_STORAGE_TIMEOUT": "60s",
        "LODE_READ_CONSISTENCY_SECONDS": "1.5",
    }
    config = load_config(env=env)
    assert config.db == "s3://bucket/some/prefix"
    assert config.storage.options == {
        "aws_endpoint": "http://127.0.0.1:9000",
        "allow_http": "true",  # an http:// endpoint: a local S3-compatible server
        "aws_region": "us-east-1",  # LODE_STORAGE_* wins over AWS_*
        "aws_access_key_id": "key",
        "timeout": "60s",
    }
    assert config.storage.read_consistency_seconds == 1.5
    assert load_config(env={"LODE_DB": "file:///tmp/lode-x"}).db == Path("/tmp/lode-x")
    assert db_location("~/idx") == Path("~/idx").expanduser()
    with pytest.raises(ConfigError, match="names no bucket"):
        db_location("s3://")
    with pytest.raises(ConfigError, match="keep_versions_seconds"):
        load_config(env={"LODE_KEEP_VERSIONS_SECONDS": "1", "LODE_READ_CONSISTENCY_SECONDS": "5"})


def test_an_index_on_s3_answers_as_a_local_one_does(
    s3_env: dict[str, str], repo: Path, tmp_path: Path
) -> None:
    remote = Lode(load_config(env=s3_env), embedder=FakeEmbedder())
    local = Lode(load_config(env={"LODE_DB": str(tmp_path / "db")}), embedder=FakeEmbedder())
    try:
        for lode in (remote, local):
            report = lode.index(repo)
            assert report.files_indexed == 11
        for query in QUERIES:
            for mode in ("hybrid", "lexical"):
                assert _hits(remote, query, mode) == _hits(local, query, mode)
                assert _hits(remote, query, mode)
        assert remote.check().ok
        bucket, prefix = _bucket_of(str(remote.config.db))
        names = object_names(s3_env["AWS_ENDPOINT_URL"], bucket, prefix + "/")
        assert f"{prefix}/{LEASE_OBJECT}" in names  # the writer's lease, beside the tables
        assert any(n.startswith(f"{prefix}/code_chunks.lance/_versions/") for n in names)
        assert not Path("s3:").exists()  # nothing local named after the URI
    finally:
        remote.close()
        local.close()
    assert find_writer(remote.config) is None  # released on close


def test_a_reader_never_writes_and_refuses_every_write(s3_env: dict[str, str], repo: Path) -> None:
    writer = Lode(load_config(env=s3_env), embedder=FakeEmbedder())
    writer.hold_writer("lode serve", url="http://127.0.0.1:7370")
    writer.index(repo)
    reader = Lode(load_config(env={**s3_env, "LODE_READ_ONLY": "true"}), embedder=FakeEmbedder())
    bystander = Lode(load_config(env=s3_env), embedder=FakeEmbedder())  # not the writer
    endpoint = s3_env["AWS_ENDPOINT_URL"]
    bucket, prefix = _bucket_of(s3_env["LODE_DB"])
    try:
        before = sorted(object_names(endpoint, bucket, prefix + "/"))
        for lode in (reader, bystander):
            assert _hits(lode, "Cart total") == _hits(writer, "Cart total")
            assert lode.check().ok
            assert lode.store.access.read_only
            with pytest.raises(ReadOnlyError, match="read-only"):
                lode.store.projects.add("other", str(repo), (), ())
        with pytest.raises(
            ReadOnlyError, match=r"writer now is lode serve \(pid \d+ .*http://127.0.0.1:7370"
        ):
            reader.index(repo)
        assert sorted(object_names(endpoint, bucket, prefix + "/")) == before  # not one object written
        # a bystander that becomes the writer (after the writer left) opens it for writing
        writer.close()
        bystander.hold_writer("lode index")
        assert not bystander.store.access.read_only
        bystander.store.projects.add("other", "/tmp/other", (), ())
    finally:
        for lode in (writer, reader, bystander):
            lode.close()


_HOLDER = textwrap.dedent(
    """
    import json, sys, time
    from indexer.writer import WriterLease
    WriterLease(sys.argv[1], json.loads(sys.argv[2]), ttl=30).acquire("lode watch")
    print("held", flush=True)
    time.sleep(120)
    """
)


def test_one_writer_holds_the_lease_and_a_dead_or_silent_one_loses_it(s3_env: dict[str, str]) -> None:
    config = load_config(env=s3_env)
    db, options = str(config.db), config.storage.options
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, db, json.dumps(options)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        found = find_writer(config)
        assert found is not None
        assert (found.pid, found.command) == (holder.pid, "lode watch")
        with pytest.raises(WriterBusyError, match=f"pid {holder.pid}"):
            writer_claim(config).acquire("lode index")
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    # its pid is dead on this machine: the lease is free at once, not after its term
    assert find_writer(config) is None
    claim = writer_claim(config)
    assert claim.acquire("lode index").pid == os.getpid()
    claim.release()

    # a writer on another machine that stopped renewing: free once its term is over
    lease = WriterLease(db, options)
    record = {"pid": 1, "host": "elsewhere", "command": "lode serve", "url": None, "started_at": ""}
    found_tag = lease.put({**record, "renewed_at": time.time(), "ttl_seconds": 30}, _etag(lease))
    with pytest.raises(WriterBusyError, match="on elsewhere"):
        lease.acquire("lode index")
    lease.put({**record, "renewed_at": time.time() - 31, "ttl_seconds": 30}, found_tag)
    assert lease.acquire("lode index").host != "elsewhere"
    lease.release()


def _etag(lease: WriterLease) -> str | None:
    import obstore

    return obstore.head(lease._objects(), LEASE_OBJECT).get("e_tag")


_RACER = textwrap.dedent(
    """
    import json, sys, time
    from indexer.writer import WriterBusyError, WriterLease
    start = float(sys.argv[3])
    time.sleep(max(0.0, start - time.time()))
    try:
        WriterLease(sys.argv[1], json.loads(sys.argv[2]), ttl=30).acquire("lode index")
        print("won", flush=True)
    except WriterBusyError:
        print("refused", flush=True)
    time.sleep(3)
    """
)


def test_of_writers_racing_for_the_lease_exactly_one_wins(s3_env: dict[str, str]) -> None:
    config = load_config(env=s3_env)
    start = time.time() + 3  # every racer imported and waiting
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", _RACER, str(config.db), json.dumps(config.storage.options), str(start)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outcomes = sorted(proc.communicate(timeout=60)[0].strip() for proc in racers)
    assert outcomes == ["refused", "refused", "won"]


def test_a_writer_whose_lease_was_taken_stops(s3_env: dict[str, str]) -> None:
    config = load_config(env=s3_env)
    lost: list[str] = []
    lease = WriterLease(str(config.db), config.storage.options, ttl=30, on_lost=lambda: lost.append("lost"))
    lease.acquire("lode serve")
    try:
        from indexer.writer import _lease as writer_lease

        held = writer_lease._HELD[str(config.db)]
        held.renew()
        assert lost == []
        taken = {
            "pid": 1,
            "host": "elsewhere",
            "command": "lode serve",
            "renewed_at": time.time(),
            "ttl_seconds": 30,
        }
        lease.put(taken, _etag(lease))  # another writer took it (we were silent too long)
        held.renew()
        assert lost == ["lost"]
    finally:
        lease.release()


def test_readers_see_a_commit_within_their_consistency_window(s3_env: dict[str, str], repo: Path) -> None:
    window = 1.0
    writer = Lode(load_config(env=s3_env), embedder=FakeEmbedder())
    reader = Lode(
        load_config(env={**s3_env, "LODE_READ_ONLY": "1", "LODE_READ_CONSISTENCY_SECONDS": str(window)}),
        embedder=FakeEmbedder(),
    )
    try:
        writer.index(repo)

        def zebra() -> list[tuple[Any, ...]]:
            return [h for h in _hits(reader, "zebracorn", "lexical") if h[0] == "src/zebra.py"]

        assert zebra() == []
        (repo / "src" / "zebra.py").write_text("def zebracorn():\n    return 'striped'\n")
        writer.index(repo, paths=["src/zebra.py"])
        committed = time.monotonic()
        while not zebra():
            assert time.monotonic() - committed < window + 2.0, "the reader never saw the commit"
            time.sleep(0.05)
        assert reader.store.search.chunk_table_version() == writer.store.search.chunk_table_version()
    finally:
        writer.close()
        reader.close()


def test_pruning_keeps_a_version_until_a_newer_one_has_existed_long_enough(tmp_path: Path) -> None:
    store = open_store(tmp_path / "db", "m", 8, StoreAccess(keep_versions=1.0))
    try:
        store.projects.add("a", "/tmp/a", (), ())
        current = store.db.dataset("projects").version
        time.sleep(1.5)  # the version is old, but it is the one readers read
        store.projects.add("b", "/tmp/b", (), ())
        store.versions.prune(timedelta(seconds=1))
        versions = [v["version"] for v in store.db.own_dataset("projects").versions()]
        assert current in versions  # replaced just now: a reader may still pin it
        assert store.db.own_dataset("projects").checkout_version(current).count_rows() == 1
        time.sleep(1.1)
        assert store.versions.prune(timedelta(seconds=1)) > 0
        assert current not in [v["version"] for v in store.db.own_dataset("projects").versions()]
    finally:
        store.close()


def test_maintenance_children_reach_the_object_store_with_options_on_stdin(
    s3_env: dict[str, str], repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs: list[tuple[list[str], str]] = []
    real_popen = subprocess.Popen

    class Spy(real_popen):  # type: ignore[misc,valid-type]
        """A child whose command line and first stdin (its storage options) are kept."""

        def __init__(self, args: list[str], **kwargs: Any) -> None:
            super().__init__(args, **kwargs)
            self.seen = list(args)

        def communicate(self, input: str | None = None, timeout: float | None = None) -> Any:
            if input is not None:
                runs.append((self.seen, input))
            return super().communicate(input, timeout)

    monkeypatch.setattr(_children, "CHILD_MIN_ROWS", 0)  # every fold and optimize in a child
    monkeypatch.setattr(_children.subprocess, "Popen", Spy)
    lode = Lode(load_config(env=s3_env), embedder=FakeEmbedder())
    try:
        lode.index(repo)
        lode.store.maintenance.optimize()
        assert lode.check().ok
    finally:
        lode.close()
    assert runs, "no maintenance ran in a child"
    secret = s3_env["AWS_SECRET_ACCESS_KEY"]
    assert all(secret not in " ".join(args) for args, _ in runs)  # never on a command line
    assert all(json.loads(stdin)["aws_secret_access_key"] == secret for _, stdin in runs)


def test_a_reader_asks_for_the_newest_version_once_per_window(tmp_path: Path) -> None:
    from indexer.store._lance._reader import TableReader

    store = open_store(tmp_path / "db", "m", 8)
    try:
        store.projects.add("a", "/tmp/a", (), ())
        uri = store.db.table("projects").uri
        reader = TableReader(uri, StoreAccess(read_only=True, read_consistency=0.5))
        first = reader.latest_version()
        store.projects.add("b", "/tmp/b", (), ())
        assert reader.latest_version() == first  # within the window: no new look
        assert reader.at().count_rows() == 1
        time.sleep(0.6)
        assert reader.latest_version() == first + 1
        assert reader.at().count_rows() == 2
        assert TableReader(uri).latest_version() == first + 1  # a writer's reader: always the newest
    finally:
        store.close()


def test_a_read_only_server_answers_reads_and_refuses_writes_naming_the_writer(
    s3_env: dict[str, str], repo: Path
) -> None:
    import anyio
    import httpx
    from live import serve_in_thread
    from mcp import Client

    writer = Lode(load_config(env=s3_env), embedder=FakeEmbedder())
    writer.hold_writer("lode serve", url="http://127.0.0.1:7370")
    writer.index(repo, name="shop")
    project = writer.store.projects.all()[0]
    config = load_config(env={**s3_env, "LODE_READ_ONLY": "true", "LODE_SEARCH_PROCESSES": "0"})
    api = "/api/v1"
    try:
        with serve_in_thread(config, FakeEmbedder()) as base:
            health = httpx.get(f"{base}/health").json()
            assert (health["status"], health["role"], health["worker_alive"]) == ("ok", "reader", False)
            assert health["index_version"] == writer.store.search.chunk_table_version()
            found = httpx.post(f"{base}{api}/search", json={"query": "cart total in cents"}).json()
            assert found["documents"]
            assert httpx.get(f"{base}{api}/projects").json()[0]["name"] == "shop"
            assert httpx.get(f"{base}{api}/check").json()["ok"] is True
            assert httpx.get(f"{base}{api}/tasks").status_code == 200
            assert httpx.get(f"{base}/").status_code == 200  # the web page
            writes = [
                ("POST", f"{api}/projects", {"path": str(repo)}),
                ("PATCH", f"{api}/projects/{project.id}", {"name": "renamed"}),
                ("DELETE", f"{api}/projects/{project.id}", None),
                ("POST", f"{api}/projects/{project.id}/index", {"paths": [], "full": False}),
                ("DELETE", f"{api}/tasks/some-task", None),
            ]
            for method, path, body in writes:
                response = httpx.request(method, base + path, json=body)
                assert response.status_code == 409, (method, path, response.text)
                detail = response.json()["detail"]
                assert "--read-only" in detail
                assert "its writer now is lode serve" in detail
                assert "http://127.0.0.1:7370" in detail

            async def tools() -> None:
                async with Client(f"{base}/mcp", read_timeout_seconds=60) as client:
                    refused = await client.call_tool("projects", {"action": "register", "path": str(repo)})
                    assert refused.is_error
                    assert "--read-only" in refused.content[0].text
                    listed = await client.call_tool("projects", {})
                    assert not listed.is_error
                    assert "shop" in listed.content[0].text

            anyio.run(tools)
        assert [p.name for p in writer.store.projects.all()] == ["shop"]  # nothing changed
    finally:
        writer.close()
