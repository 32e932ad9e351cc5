"""How lode uses LanceDB and Lance: the workarounds and upkeep beneath the store's tables.

Each module says why its workaround exists. ``_db``: one connection with bounded caches,
the tables, the write lock and units, the async query hop; ``_connect``: opening LanceDB without its REST
client; ``_reader``: searches read through pylance, pinned to a table version;
``_scan``: counts through scans; ``_nearest``: vector search of the rows the vector
index misses; ``_indexes``: creating and warming the indexes;
``_maintenance``: folding new rows in and optimizing, in child processes for a big
store (``_children`` runs the jobs of ``_jobs``); ``_versions``: pruning replaced table
versions and weighing the folder.
"""
