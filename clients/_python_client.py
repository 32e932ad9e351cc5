"""Run openapi-python-client's generator through its library and print what it reported as
one JSON list (``level``, ``header``, ``detail`` of each): the command line prints the same
only as coloured blocks. Run as a program, in its own process:
``python clients/_python_client.py SPEC OUTPUT``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

__all__ = ["main"]


def main(argv: list[str]) -> int:
    """Generate the client of the document ``argv[0]`` into the folder ``argv[1]``."""
    from openapi_python_client import generate
    from openapi_python_client.config import Config, ConfigFile, MetaType

    spec, out = Path(argv[0]), Path(argv[1])
    config = Config.from_sources(
        ConfigFile(), MetaType.NONE, spec, "utf-8", overwrite=True, output_path=out
    )  # the defaults: what `openapi-python-client generate --meta none` uses
    errors = generate(config=config)
    found = [{"level": e.level.value, "header": e.header, "detail": e.detail or ""} for e in errors]
    print(json.dumps(found))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
