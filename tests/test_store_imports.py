"""Opening a store imports lancedb without the REST client's API modules (~1.2 s of CPU
that ``lode search`` without a server spent before its first query), and the client is
still whole when something asks for it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = """
import sys
from indexer.store import open_store
store = open_store(sys.argv[1], "fake", 8)
store.close()
print("api loaded:", "lance_namespace_urllib3_client.api" in sys.modules)
import lance_namespace_urllib3_client as client
print("client whole:", client.ApiClient.__name__, "lance_namespace_urllib3_client.api" in sys.modules)
"""


def test_opening_a_store_skips_the_rest_client_until_it_is_used(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "db")], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "api loaded: False" in done.stdout
    assert "client whole: ApiClient True" in done.stdout
