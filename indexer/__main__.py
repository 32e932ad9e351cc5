"""``python -m indexer`` runs the lode command line."""

from indexer.cli import main

main()
