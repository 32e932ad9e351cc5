"""``python -m indexer`` runs the lode command line."""

from indexer.cli import main

if __name__ == "__main__":  # spawned worker processes import this module too
    main()
