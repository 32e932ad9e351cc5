"""Shared fixtures, cheapest first: a fake embedder, an empty store, a copied fixture repo,
an API object over them; then the real model (session-scoped, loaded once)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from indexer.api import Lode
from indexer.config import LodeConfig, load_config
from indexer.embed import Embedder, FakeEmbedder
from indexer.store import Store, open_store

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("LANCEDB_LOG", "error")

DATA = Path(__file__).parent / "data"


def make_repo(dest: Path) -> Path:
    """Copy the fixture repo to ``dest`` and add the files git must not hold
    (ignored ones and a binary)."""
    shutil.copytree(DATA / "repo", dest)
    (dest / "vendor_ignored").mkdir()
    (dest / "vendor_ignored" / "lib.py").write_text("def vendored():\n    pass\n")
    (dest / "build").mkdir()
    (dest / "build" / "out.py").write_text("compiled = True\n")
    (dest / "server.log").write_text("log line\n")
    (dest / "secret.txt").write_text("do not index\n")
    (dest / "logo.dat").write_bytes(b"\x89PNG\x00\x00binary\x00" * 10)
    return dest


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    """A deterministic embedder that counts what it embeds."""
    return FakeEmbedder()


@pytest.fixture
def store(tmp_path: Path, fake_embedder: FakeEmbedder) -> Iterator[Store]:
    """An empty store on disk for the fake model."""
    s = open_store(tmp_path / "db", fake_embedder.model_id, fake_embedder.dimension)
    yield s
    s.close()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A private copy of the fixture repository."""
    return make_repo(tmp_path / "repo")


@pytest.fixture
def config(tmp_path: Path) -> LodeConfig:
    """Settings pointing at a private index directory."""
    return load_config(env={}, overrides={"db": tmp_path / "db"})


@pytest.fixture
def lode(config: LodeConfig, fake_embedder: FakeEmbedder) -> Iterator[Lode]:
    """The API over a private store with the fake embedder."""
    api = Lode(config, embedder=fake_embedder)
    yield api
    api.close()


@pytest.fixture(scope="session")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A local S3 server (moto's, a subprocess on 127.0.0.1) for the whole session."""
    from local_s3 import moto_server

    with moto_server(tmp_path_factory.mktemp("moto") / "moto.log") as endpoint:
        yield endpoint


@pytest.fixture
def s3_env(s3_endpoint: str) -> dict[str, str]:
    """The environment of a lode process whose index is a fresh bucket of the local S3
    server (``LODE_DB=s3://<bucket>/index`` and the standard AWS variables)."""
    from local_s3 import new_bucket, s3_env

    return {**s3_env(s3_endpoint), "LODE_DB": f"s3://{new_bucket(s3_endpoint)}/index"}


@pytest.fixture(scope="session")
def real_embedder() -> Embedder:
    """The real default model, loaded once per test session."""
    from indexer.embed import load_embedder

    return load_embedder()


#: Fixtures whose tests are slow whatever their module says: the real model, the local S3
#: server (a moto subprocess).
SLOW_FIXTURES = frozenset({"real_embedder", "s3_endpoint", "s3_env"})


@pytest.hookimpl(tryfirst=True)  # before ``-m "not slow"`` deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``slow`` every test that takes one of the ``SLOW_FIXTURES``."""
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _fast_tests_leave_the_model_alone(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test not marked ``slow`` must not load the real model (torch) in this process: it
    takes the fake embedder, or it is a slow test (``./scripts/test`` skips those)."""
    watch = request.node.get_closest_marker("slow") is None and "torch" not in sys.modules
    yield
    if watch and "torch" in sys.modules:
        pytest.fail("this test loaded the real model: use the fake embedder, or mark it @pytest.mark.slow")


def pytest_configure(config: pytest.Config) -> None:
    """Keep test logs readable: no line per HTTP request from httpx. Keep the user's own
    runtime folder (a running lode's discovery file, its token) out of the tests: each run
    has its own (``LODE_RUNTIME_DIR``, inherited by the servers tests start); and the
    servers tests start are open to every request (``LODE_NO_AUTH``), as their clients
    send no token: the tests of privacy (tests/test_discovery.py) turn it back on."""
    import logging
    import tempfile

    logging.getLogger("httpx").setLevel(logging.WARNING)
    runtime = Path(tempfile.mkdtemp(prefix="lode-runtime-"))
    config.add_cleanup(lambda: shutil.rmtree(runtime, ignore_errors=True))
    os.environ["LODE_RUNTIME_DIR"] = str(runtime)
    os.environ.setdefault("LODE_NO_AUTH", "1")
