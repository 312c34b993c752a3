"""The rows of searched memories kept in process memory, per scope, at the scope's versions.

A PostgreSQL search reads the records of its candidate pool (hundreds of memories in a 10k
scope) in its second round trip: 2-3 ms of the server's time and as much of the client's to
receive them. Pools overlap from one search of a scope to the next, so the rows read are kept
here, each under its scope and the scope's versions (``(ent_version, mem_version)``: every
write of a memory, its metadata alone included, moves one on, by any process), as one
immutable tuple per memory (``postgres.search_sql.memories_of_ids``' columns before the
cosine): a search at the same versions takes them from here. Rows read at other versions than
the search's (a write landed between) are used by that search and not kept. A process's own
add, which changes no row held, carries the entry to the versions it leaves (``advance``,
``postgres.write_follow``).

Bounded: ``DEFAULT_ROW_CACHE_BYTES`` of estimated bytes; past it the least recently searched
scopes are dropped. Locking: the lock is a leaf (``scope_budget``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from linkmem.store.caches.scope_budget import ScopeBudget

#: Estimated bytes kept per store: 16 MiB, ~25k short memories.
DEFAULT_ROW_CACHE_BYTES = 16 * 2**20

#: Estimated bytes of a row beside its strings (the tuple, its numbers, the dict slot).
_ROW_BYTES = 300

#: A scope's (ent_version, mem_version).
Versions = tuple[int, int]
Row = tuple[Any, ...]


@dataclass
class ScopeRows:
    """The cached rows of one scope at one pair of versions (and ``shape``: what else the
    rows depend on, None when nothing)."""

    versions: Versions
    shape: Hashable
    nbytes: int
    rows: dict[str, Row] = field(default_factory=dict)
    filled: int = 0  # the scope's memories (in seq order) read whole up to here
    paging: bool = False  # a page of them is being read


class VersionedRows(ScopeBudget[ScopeRows]):
    """id -> its row, per scope, held only at exactly the versions (and shape) it was read at.
    ``row_bytes``: a row's estimated size; ``entry_bytes``: a scope entry's own."""

    def __init__(self, max_bytes: int, row_bytes: Callable[[Row], int], entry_bytes: int) -> None:
        super().__init__(max_bytes)
        self._row_bytes = row_bytes
        self._entry_bytes = entry_bytes

    def lookup(
        self, scope_id: int, versions: Versions, ids: Iterable[str], shape: Hashable = None
    ) -> dict[str, Row]:
        """The rows of ``ids`` held for the scope at exactly ``versions`` and ``shape``."""
        with self._lock:
            entry = self._entries.get(scope_id)
            if entry is None or (entry.versions, entry.shape) != (versions, shape):
                return {}
            self._entries.move_to_end(scope_id)
            held = entry.rows
            return {i: row for i in ids if (row := held.get(i)) is not None}

    def remember(
        self, scope_id: int, versions: Versions, rows: Mapping[str, Row], shape: Hashable = None
    ) -> None:
        """Keep ``rows`` read at ``versions`` (an entry at older versions, or of another shape,
        is replaced; rows read at older versions than the entry's are not kept)."""
        with self._lock:
            entry = self._entries.get(scope_id)
            if entry is not None and (entry.versions, entry.shape) != (versions, shape):
                if not _older(entry.versions, versions):
                    return
                self._entries.pop(scope_id)
                self._bytes -= entry.nbytes
                entry = None
            if entry is None:
                entry = ScopeRows(versions, shape, self._entry_bytes)
                self._entries[scope_id] = entry
                self._bytes += entry.nbytes
            self._entries.move_to_end(scope_id)
            self._add(entry, rows)

    def _add(self, entry: ScopeRows, rows: Mapping[str, Row]) -> None:
        """Keep ``rows`` in ``entry``, then keep to the budget. Called with the lock held."""
        added = 0
        for memory_id, row in rows.items():
            if memory_id not in entry.rows:
                entry.rows[memory_id] = row
                added += self._row_bytes(row)
        entry.nbytes += added
        self._bytes += added
        self._evict()

    def advance(
        self, scope_id: int, before: Versions, after: Versions, dropped: Collection[str] = ()
    ) -> None:
        """Carry the scope's entry from exactly ``before`` to ``after`` (this process's add,
        ``postgres.write_follow``), without the rows of ``dropped``; any other entry stays."""
        with self._lock:
            entry = self._entries.get(scope_id)
            if entry is None or entry.versions != before:
                return
            for key in dropped:
                row = entry.rows.pop(key, None)
                if row is not None:
                    entry.nbytes -= self._row_bytes(row)
                    self._bytes -= self._row_bytes(row)
            entry.versions = after


class RowCache(VersionedRows):
    """memory id -> its record row, per scope at its versions; a scope searched often enough
    is read whole, a page at a time (``postgres.scope_rows``)."""

    def __init__(self, max_bytes: int = DEFAULT_ROW_CACHE_BYTES) -> None:
        super().__init__(max_bytes, _record_bytes, _ROW_BYTES)

    def claim_page(self, scope_id: int, versions: Versions, total: int) -> ScopeRows | None:
        """The scope's entry at exactly ``versions``, marked as paging, when it has read fewer
        than ``total`` of its memories whole and no page is being read (None: nothing to do)."""
        with self._lock:
            entry = self._entries.get(scope_id)
            if entry is None or entry.versions != versions or entry.shape is not None:
                return None
            if entry.paging or entry.filled >= total:
                return None
            entry.paging = True
            return entry

    def keep_page(
        self, scope_id: int, entry: ScopeRows, versions: Versions, rows: Mapping[str, Row], end: int
    ) -> None:
        """End ``entry``'s page: keep ``rows`` (read at ``versions``) and read on from ``end``
        next time, while it is still the scope's entry at those versions."""
        with self._lock:
            entry.paging = False
            if self._entries.get(scope_id) is entry and entry.versions == versions:
                self._add(entry, rows)
                entry.filled = max(entry.filled, end)


def _record_bytes(row: Row) -> int:
    return _ROW_BYTES + sum(len(v) for v in row if isinstance(v, str))


def _older(held: Versions, read: Versions) -> bool:
    return held[0] <= read[0] and held[1] <= read[1]
