"""A search's memory rows from the process's row cache (``caches.memory_rows``), PostgreSQL.

When a search's dense reads come from the process (``search_dense_reads``), the cosines are not
in the rows it reads, and a memory's row (record columns and seq) is the same in every search
of its scope until a write moves the scope's versions (``m010``, ``m011``). The pool's rows held
for the scope at the versions of round trip 0 are taken from the cache; the rest are read as
before, with their scope's versions in the same statement (``search_sql.memories_of_ids``,
``versions``), and kept when those are the search's. A search with the server's dense reads (a
filter, a transaction, a scope over the budget) reads every row, as before.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from linkmem.store.base import MemoryDate
from linkmem.store.base import record_from_row as base_record_from_row
from linkmem.store.postgres.search_keyword_reads import ScopeStats
from linkmem.types import MemoryRecord


class RecordSearchReads:
    """``SearchReads``' records and dates from the pool's rows, and those rows from the row
    cache (a mixin: the fetching is ``SearchReads``')."""

    _store: Any
    _dense: Any
    _scope_stats: list[ScopeStats]
    _records: dict[str, Sequence[Any]]
    _fetch: Callable[[list[str]], None]

    def get_memories(self, ids: Sequence[str]) -> list[MemoryRecord]:
        if not ids:
            return []
        self._fetch(list(ids))
        rows = self._records
        return [base_record_from_row(rows[i], json.loads(rows[i][2])) for i in ids if i in rows]

    def memory_dates(self, ids: Sequence[str]) -> list[MemoryDate]:
        """The id, text and date of each of ``ids`` that exists, in their order: what the time
        signal reads of a search's first results (``linkmem.search``, up to ``time_depth``),
        from the pool's rows without building their records (metadata parsed, scope)."""
        if not ids:
            return []
        self._fetch(list(ids))
        rows = self._records
        return [MemoryDate(row[0], row[1], row[3]) for row in map(rows.get, ids) if row]

    def _held_rows(self, ids: Sequence[str]) -> list[tuple[Any, ...]]:
        """The rows of ``ids`` the row cache holds at the search's versions (none unless the
        dense reads come from the process)."""
        if self._dense is None:
            return []
        cache = self._store.row_cache
        held: list[tuple[Any, ...]] = []
        for scope_id, versions, *_ in self._scope_stats:
            held += cache.lookup(scope_id, versions, ids).values()
        return held

    def _kept_rows(self, rows: list[Sequence[Any]]) -> list[tuple[Any, ...]]:
        """Rows read with their scope's versions and id last (``memories_of_ids``,
        ``versions``): without those, and kept when read at the search's versions."""
        at = {stats.id: stats.versions for stats in self._scope_stats}
        out: list[tuple[Any, ...]] = []
        by_scope: dict[int, list[tuple[Any, ...]]] = {}
        for row in rows:
            *columns, ent, mem, scope_id = row
            record = tuple(columns)
            out.append(record)
            if at.get(scope_id) == (ent, mem):
                by_scope.setdefault(scope_id, []).append(record)
        cache = self._store.row_cache
        for scope_id, records in by_scope.items():
            cache.remember(scope_id, at[scope_id], {row[0]: row for row in records})
        return out
