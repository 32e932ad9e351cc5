"""Property-based API tests generated from lode's own OpenAPI document (schemathesis CLI),
every check: no 5xx; responses match the documented status codes, content type, headers
and schema; schema-valid requests are accepted and schema-invalid ones refused; OPTIONS
lists every method; the server has an API key, and every operation the document says
needs it refuses a request without it or with a wrong one (401). The few answers schemathesis cannot know are right from the schema
are allowed per operation, each with its reason, in ``tests/schemathesis.toml``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from conftest import make_repo
from live import serve_in_thread, wait_task

from indexer.config import load_config
from indexer.embed import FakeEmbedder

pytestmark = pytest.mark.slow

CONFIG = Path(__file__).parent / "schemathesis.toml"
KEY = "schemathesis-key"


def test_api_conforms_to_its_schema(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False, "api_key": KEY})
    auth = {"Authorization": f"Bearer {KEY}"}
    with serve_in_thread(config, FakeEmbedder()) as base:
        created = httpx.post(
            f"{base}/api/v1/projects", json={"path": str(repo), "name": "shop"}, headers=auth
        ).json()
        wait_task(base, created["task_id"], headers=auth)
        cli = Path(sys.executable).with_name("schemathesis")
        result = subprocess.run(
            [str(cli), "--config-file", str(CONFIG), "run", f"{base}/api/openapi.json", "--checks", "all",
             "--header", f"Authorization: Bearer {KEY}",
             "--max-examples", "20", "--seed", "7", "--workers", "1",
             "--phases", "examples,coverage,fuzzing,stateful", "--request-timeout", "30",
             # a generator limit, not an API defect: path ids of the by-path document route are
             # sometimes mostly filtered out by hypothesis (seen once in CI-like runs)
             "--suppress-health-check", "filter_too_much"],
            check=False,
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "NO_COLOR": "1"},
            cwd=tmp_path,
        )  # fmt: skip
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
