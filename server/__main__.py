"""``python -m server`` runs the full lode command line (with ``serve`` and ``mcp``)."""

from server.cli import main

if __name__ == "__main__":  # spawned worker processes import this module too
    main()
