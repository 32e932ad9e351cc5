"""How lode uses LanceDB and Lance: the workarounds and upkeep beneath the store's tables,
each module saying why.

``_db``: the connection with bounded caches (``_connect``, which also opens LanceDB
without its REST client), the tables, the write lock and units, the async query hop;
``_reader``: searches read through pylance, pinned to a table version; ``_scan``: counts
through scans; ``_nearest``: vector search of the rows the vector index misses;
``_indexes``: creating and warming the indexes; ``_maintenance``: folding new rows in and
optimizing, in child processes for a big store (``_children`` runs the jobs of
``_jobs``); ``_versions``: pruning replaced table versions, weighing the folder.
"""
