"""The symbol index (``code_symbols``): written with a file's chunks, read by name.

A row is a definition (a unit: function, method, class, namespace…) or a reference site
(a name used on a line, with the unit it is used in). Names are matched as text, like
ctags or zoekt's ``sym:``: there is no type resolution. Reads are filtered by an indexed
name first (BTREE on ``name``, BITMAP on ``role``, ``kind``, ``language``, ``project_id``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any, Literal

from indexer.models import Symbol
from indexer.store._lance._db import Db
from indexer.store._lance._replace import replace_rows
from indexer.store._rows import (
    SYMBOL_COLUMNS,
    FileWrite,
    rows,
    symbol_columns,
    table_from_columns,
    to_symbol,
    unpack_symbol,
)
from indexer.store._schema import SYMBOLS, symbols_schema
from indexer.store._sql import and_all, equals, glob_to_regex, in_list, quote, starts_with

__all__ = ["NameMatch", "Symbols"]

#: How a name is matched: equal, starting with, a glob (``*``, ``?``, ``[…]``; case-sensitive).
NameMatch = Literal["exact", "prefix", "glob"]
_WILD = "*?["


def _name_clause(name: str, match: NameMatch) -> str:
    if match == "exact":
        return f"name = {quote(name)}"
    if match == "prefix":
        return starts_with("name", name)
    cut = min((i for i in (name.find(c) for c in _WILD) if i >= 0), default=len(name))
    regex = f"regexp_like(name, {quote(glob_to_regex(name))})"
    return and_all([starts_with("name", name[:cut]) if cut else None, regex]) or regex


def _filters(
    role: str | None, kinds: Sequence[str], languages: Sequence[str], project_ids: Sequence[str]
) -> list[str | None]:
    return [
        equals("role", role),
        in_list("kind", kinds) if kinds else None,
        in_list("language", languages) if languages else None,
        in_list("project_id", project_ids) if project_ids else None,
    ]


class Symbols:
    """Writes and reads of ``code_symbols``."""

    def __init__(self, db: Db) -> None:
        self._db = db
        #: (table version and filters, the distinct defined names read then)
        self._names_cache: tuple[str, list[str]] | None = None

    # ---- writes (inside ``Files.replace`` / ``Files.delete``, under the write lock) -----
    def merge(self, writes: Sequence[FileWrite], append: bool = False) -> None:
        """Swap in the symbol rows of these files (one commit); append for new files."""
        cols: dict[str, list[Any]] = defaultdict(list)
        for write in writes:
            for name, values in symbol_columns(write).items():
                cols[name].extend(values)
        table = table_from_columns(dict(cols), symbols_schema())
        if append:
            if table.num_rows:
                self._db.table(SYMBOLS).add(table)
            return
        file_ids = sorted({w.document.id for w in writes})
        # a symbol's id is its file's and its own key: none matches a row of another file
        replace_rows(self._db, SYMBOLS, in_list("file_id", file_ids), table)

    # ---- reads ----------------------------------------------------------------------
    def _where(self, where: str, limit: int | None) -> list[Symbol]:
        def query(table: Any) -> Any:
            built = table.query().where(where).select(["id", "view"])
            return (built.limit(limit) if limit is not None else built).to_arrow()

        found = self._db.arrow(SYMBOLS, query)
        ids, views = found["id"].to_pylist(), found["view"].to_pylist()
        symbols = [unpack_symbol(i, v) for i, v in zip(ids, views, strict=True) if v is not None]
        if len(symbols) < len(ids):  # rows without a packed cell (none written since schema 5)
            bare = [i for i, v in zip(ids, views, strict=True) if v is None]
            table = self._db.arrow(
                SYMBOLS, lambda t: t.query().where(in_list("id", bare)).select(SYMBOL_COLUMNS).to_arrow()
            )
            symbols.extend(to_symbol(r) for r in rows(table))
        return symbols

    def definitions(
        self,
        names: Sequence[str],
        *,
        match: NameMatch = "exact",
        kinds: Sequence[str] = (),
        languages: Sequence[str] = (),
        project_ids: Sequence[str] = (),
        limit: int | None = 1000,
    ) -> list[Symbol]:
        """Definitions whose name matches one of ``names`` (unordered; at most ``limit``)."""
        if not names:
            return []
        if match == "exact":
            by_name = in_list("name", names)
        else:
            by_name = " OR ".join(f"({_name_clause(n, match)})" for n in names)
        where = and_all([by_name, *_filters("definition", kinds, languages, project_ids)])
        return self._where(where or "false", limit)

    def references(
        self,
        names: Sequence[str],
        *,
        languages: Sequence[str] = (),
        project_ids: Sequence[str] = (),
        limit: int | None = 5000,
    ) -> list[Symbol]:
        """Reference sites of any of ``names`` (exact names; unordered; at most ``limit``)."""
        if not names:
            return []
        where = and_all([in_list("name", names), *_filters("reference", (), languages, project_ids)])
        return self._where(where or "false", limit)

    def uses(
        self,
        names: Sequence[str],
        *,
        languages: Sequence[str] = (),
        project_ids: Sequence[str] = (),
        definitions: int = 1000,
        references: int = 5000,
    ) -> tuple[list[Symbol], list[Symbol]]:
        """Definitions and reference sites of exact ``names`` (at most ``definitions`` and
        ``references`` of each, unordered), read together: one scan of the name's rows."""
        if not names:
            return [], []
        where = and_all([in_list("name", names), *_filters(None, (), languages, project_ids)])
        limit = definitions + references
        found = self._where(where or "false", limit)
        if len(found) >= limit:  # cut somewhere: each role read on its own, to its own limit
            return (
                self.definitions(names, languages=languages, project_ids=project_ids, limit=definitions),
                self.references(names, languages=languages, project_ids=project_ids, limit=references),
            )
        defined = [s for s in found if s.role == "definition"]
        used = [s for s in found if s.role == "reference"]
        return defined[:definitions], used[:references]

    def get(self, symbol_id: str) -> Symbol | None:
        """One symbol row by id (None when unknown)."""
        found = self._where(in_list("id", [symbol_id]), 1)
        return found[0] if found else None

    def enclosing(self, file_id: str, line: int) -> Symbol | None:
        """The innermost definition of a file whose lines hold 1-based ``line`` (None when
        the line is at the file's top level)."""
        where = and_all(
            [
                f"file_id = {quote(file_id)}",
                "role = 'definition'",
                f"start_line <= {int(line)}",
                f"end_line >= {int(line)}",
            ]
        )
        # one read through the file's index by pylance (an editor asks this per cursor move)
        table = self._db.dataset(SYMBOLS).to_table(columns=["id", "view"], filter=where)
        ids, views = table["id"].to_pylist(), table["view"].to_pylist()
        if None in views:  # a row an older lode wrote: read as every other read does
            found = self._where(where or "false", None)
        else:
            found = [unpack_symbol(i, v) for i, v in zip(ids, views, strict=True)]
        return min(found, key=lambda s: (s.end_line - s.start_line, -s.start_line, s.id), default=None)

    def of_file(self, file_id: str) -> list[Symbol]:
        """Every symbol row of one file, definitions first, each in line order."""
        found = self._where(in_list("file_id", [file_id]), None)
        return sorted(found, key=lambda s: (s.role != "definition", s.start_line, s.name))

    def names(self, project_ids: Sequence[str] = (), languages: Sequence[str] = ()) -> list[str]:
        """Every distinct defined name (for fuzzy matching), cached until the table changes."""
        version = self._db.reader(SYMBOLS).latest_version()
        key = f"{version}:{','.join(sorted(project_ids))}:{','.join(sorted(languages))}"
        cached = self._names_cache
        if cached is not None and cached[0] == key:
            return list(cached[1])
        where = and_all(_filters("definition", (), languages, project_ids))
        table = self._db.arrow(
            SYMBOLS, lambda t: t.query().where(where or "true").select(["name"]).to_arrow()
        )
        names = sorted(set(table["name"].to_pylist()))
        self._names_cache = (key, names)
        return names

    def count(self, project_id: str | None = None, role: str | None = None) -> int:
        """Number of symbol rows, optionally of one project and/or role."""
        where = and_all([equals("project_id", project_id), equals("role", role)])
        return int(self._db.table(SYMBOLS).count_rows(where))
