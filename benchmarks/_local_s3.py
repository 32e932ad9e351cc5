"""A local S3 for tests and benchmarks: moto's server (``moto[server]``, a dev extra) as
a subprocess on 127.0.0.1.

Each user gets a bucket of its own (``new_bucket``); lode reaches it through the same
storage options a deployment gives (``AWS_ENDPOINT_URL``, keys, region: ``s3_env``).
The server logs one line per request, which ``count_requests`` counts (what a search
costs in object-store requests).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

#: Keys moto accepts (it checks no signature); region of every bucket.
ACCESS_KEY = "lode-test"
SECRET_KEY = "lode-test-secret"
REGION = "us-east-1"


def free_port() -> int:
    """A TCP port of 127.0.0.1 nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def moto_server(log: Path | None = None, timeout: float = 60) -> Iterator[str]:
    """Start moto's S3 server on 127.0.0.1; yields its endpoint URL, stops it after."""
    port = free_port()
    out = log.open("ab") if log else subprocess.DEVNULL
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=out,
        stderr=out,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    if log:
        out.close()  # type: ignore[union-attr]
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"moto's server exited with {proc.returncode}")
            try:
                if httpx.get(endpoint + "/moto-api/", timeout=1).status_code < 500:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError("moto's server did not start")
            time.sleep(0.1)
        yield endpoint
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def new_bucket(endpoint: str) -> str:
    """Create a bucket of a fresh name on the server; its name."""
    name = f"lode-{uuid.uuid4().hex[:12]}"
    response = httpx.put(f"{endpoint}/{name}", timeout=10)
    response.raise_for_status()
    return name


def s3_env(endpoint: str) -> dict[str, str]:
    """The environment a lode process needs to reach the server (standard AWS variables)."""
    return {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_REGION": REGION,
    }


def count_requests(log: Path) -> dict[str, int]:
    """Requests moto's server logged so far, by HTTP method (its log's request lines)."""
    counts: dict[str, int] = {}
    for method in re.findall(r'"(GET|PUT|HEAD|POST|DELETE) /', log.read_text(errors="replace")):
        counts[method] = counts.get(method, 0) + 1
    return counts


def object_names(endpoint: str, bucket: str, prefix: str = "") -> list[str]:
    """Every object name under ``prefix`` in ``bucket`` (S3's ListObjectsV2, paged)."""
    names: list[str] = []
    token = ""
    while True:
        params = {"list-type": "2", "prefix": prefix, **({"continuation-token": token} if token else {})}
        body = httpx.get(f"{endpoint}/{bucket}", params=params, timeout=30).text
        names += re.findall(r"<Key>([^<]+)</Key>", body)
        found = re.search(r"<NextContinuationToken>([^<]+)</NextContinuationToken>", body)
        if not found:
            return names
        token = found.group(1)
