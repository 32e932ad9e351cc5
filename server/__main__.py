"""``python -m server`` runs the full lode command line (with ``serve`` and ``mcp``)."""

from server.cli import main

main()
