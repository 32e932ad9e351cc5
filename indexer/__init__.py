"""lode's indexer: everything that is not HTTP (config, walk, chunk, embed, store, pipeline,
watch, search, CLI). ``server`` imports this package, never the reverse."""

__all__ = ["__version__"]

__version__ = "0.1.0"
