"""Retrieval-quality benchmark: real corpora, doc-comment queries, ranked-retrieval metrics.

``corpora`` downloads pinned packages, ``pairs`` turns their doc comments into queries
(and blanks them), ``metrics`` scores rankings, ``evaluate`` runs lode on them and
``report`` formats the result.
"""
