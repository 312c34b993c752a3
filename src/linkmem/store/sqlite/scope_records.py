"""The records of a searched scope read whole, a page per search, beside the searches (issue 15).

``record_cache.RecordCache`` keeps the records its searches read; a scope searched at least
``FILL_AFTER`` times at one count of rewrites (and write epoch) is also read whole into
it, ``PAGE`` records after each of its searches, on a side thread (``side_threads``) with a
connection of its own that is opened for the page and closed after it, so the search never
waits for these reads and no connection of the store is held by them. A scope's records are
kept within a byte budget, least recently searched scope dropped first (``HeldScopes``); a
scope alone past the budget is not held at that stamp. A page is kept only if the cache is
still at the stamp and epoch at which it was asked for (see ``RecordCache`` for why that
keeps every answer the store's). A search that misses a record of a scope read whole (a
memory this process added since) reads on from the last row read.

Locking: ``HeldScopes`` has no lock of its own; every method is called with the record
cache's lock held (a leaf, ``record_cache``). A page's reads hold no lock: they take the
file's read snapshot on their own connection, which nothing else uses.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import quote

from linkmem.store.base import record_from_row
from linkmem.store.sqlite.driver import sqlite3
from linkmem.store.sqlite.sql import exact_scope_params
from linkmem.types import MemoryRecord, Scope

#: Records read per page: ~1.5 ms of a side thread on an idle machine (a 10k-memory scope is
#: held after ~40 searches at one stamp, a 1k one after ~4).
PAGE = 256
#: Rows built between two reads: each read releases the GIL, so a search on another thread
#: waits at most for this many records' building (~0.1 ms), never for a whole page.
ROWS_PER_STEP = 16
#: Searches of a scope at one stamp before its pages start: a process that searches once
#: (the command line) reads nothing more. Each time a stamp or epoch moves while a scope was
#: partly read (another process writing between a few searches), the searches asked for
#: double, up to ``FILL_AFTER_MAX``; a scope read whole sets them back.
FILL_AFTER = 2
FILL_AFTER_MAX = 256
#: Scopes whose searches are counted (held or not) at one stamp; least recent dropped.
MAX_SCOPES = 64
#: Estimated bytes kept of held scopes' records per store: 8 MiB, ~18k short memories. The
#: estimate is low for short texts: the 10k-memory bench scope (73 characters a text) is
#: 4.5 MiB estimated and 7.7 MB of Python objects.
DEFAULT_HELD_BYTES = 8 * 2**20
#: Estimated bytes of one record beside its text (the dataclass, its strings, the dict slot).
RECORD_BYTES = 400

_SCALARS = (str, int, float, bool, type(None))


def flat(metadata: dict) -> bool:
    """Whether nothing in ``metadata`` can be changed in place through a result's copy of it
    (``MemoryRecord.to_dict`` copies the dict, not its values): only such records are kept."""
    return all(type(value) in _SCALARS for value in metadata.values())


def record_bytes(record: MemoryRecord) -> int:
    return RECORD_BYTES + len(record.text)


@dataclass(eq=False)
class HeldScope:
    """One exact scope's records read so far at the cache's stamp, and where its pages are."""

    records: dict[str, MemoryRecord] = field(default_factory=dict)
    nbytes: int = 0
    after: int = 0  # the last rowid read
    done: bool = False  # the last page came back short
    searches: int = 0
    busy: bool = False  # a page is being read
    too_big: bool = False  # past the budget alone: not held at this stamp


class HeldScopes:
    """Exact scope -> ``HeldScope``, least recently searched first; held records' estimated
    bytes add up to at most ``max_bytes``. Called with the record cache's lock held."""

    def __init__(self, max_bytes: int = DEFAULT_HELD_BYTES) -> None:
        self.max_bytes = max_bytes
        self.nbytes = 0
        self.fill_after = FILL_AFTER
        self._scopes: OrderedDict[Scope, HeldScope] = OrderedDict()
        self._all: dict[str, MemoryRecord] = {}  # every held scope's records, by id

    def clear(self) -> None:
        if any(held.records and not held.done for held in self._scopes.values()):
            self.fill_after = min(2 * self.fill_after, FILL_AFTER_MAX)  # pages read for naught
        self._scopes = OrderedDict()
        self._all = {}
        self.nbytes = 0

    def get(self, memory_id: str) -> MemoryRecord | None:
        return self._all.get(memory_id)

    def searched(
        self, scopes: Iterable[Scope], missed: set[Scope]
    ) -> list[tuple[Scope, HeldScope, int]]:
        """Count a search of each of ``scopes`` (``missed``: those a record of was read from
        the store); the ones whose next page is to be read now (marked busy), with the rowid
        it starts after."""
        pages = []
        for scope in scopes:
            held = self._scopes.get(scope)
            if held is None:
                held = self._scopes[scope] = HeldScope()
                while len(self._scopes) > MAX_SCOPES:
                    self._drop(next(iter(self._scopes)))
            self._scopes.move_to_end(scope)
            held.searches += 1
            if scope in missed:
                held.done = False  # rows added since the last page: read on
            if held.searches >= self.fill_after and not (held.done or held.busy or held.too_big):
                held.busy = True
                pages.append((scope, held, held.after))
        return pages

    def count(self, scope: Scope) -> int:
        held = self._scopes.get(scope)
        return 0 if held is None else len(held.records)

    def holds(self, scope: Scope, held: HeldScope) -> bool:
        return self._scopes.get(scope) is held

    def add_page(
        self, scope: Scope, held: HeldScope, records: list[MemoryRecord], last: int, full: bool
    ) -> None:
        """Keep a page read for ``held`` (still this scope's entry), then keep to the budget."""
        added = 0
        for record in records:
            if record.id not in held.records and flat(record.metadata):
                held.records[record.id] = self._all[record.id] = record
                added += record_bytes(record)
        held.nbytes += added
        self.nbytes += added
        held.after, held.done = max(held.after, last), not full
        if held.done:
            self.fill_after = FILL_AFTER
        if held.nbytes > self.max_bytes:  # alone past the budget: not held at this stamp
            self._forget(held)
            held.too_big = True
        for other in list(self._scopes):
            if self.nbytes <= self.max_bytes:
                break
            if other != scope:
                self._drop(other)

    def _drop(self, scope: Scope) -> None:
        self._forget(self._scopes.pop(scope))

    def _forget(self, held: HeldScope) -> None:
        for memory_id in held.records:
            self._all.pop(memory_id, None)
        self.nbytes -= held.nbytes
        held.records, held.nbytes = {}, 0


def read_page(
    path: str, table: str, scope: Scope, after: int, limit: int = PAGE
) -> tuple[list[MemoryRecord], int, bool]:
    """The next ``limit`` records of ``scope`` after rowid ``after`` on a connection of its
    own (the file must exist: it is never created here), built as the store's
    ``get_memories`` builds them; with the last rowid read and whether the page was full."""
    uri = f"file:{quote(path)}?mode=rw"
    raw = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    try:
        raw.execute("PRAGMA query_only = 1")
        raw.execute("PRAGMA busy_timeout = 1000")
        found = raw.execute(
            f"SELECT id FROM {table}_scopes WHERE user_id = ? AND agent_id = ? AND run_id = ?",
            exact_scope_params(scope),
        ).fetchall()
        if not found:
            return [], after, False
        # By the scope's rowids (``schema.m007``), so a page reads on from the last one and
        # stops after ``limit`` rows.
        cursor = raw.execute(
            "SELECT m.id, m.text, m.metadata, m.created_at, m.updated_at, m.role, m.actor_id, "
            f"s.user_id, s.agent_id, s.run_id, m.rowid FROM {table} m "
            f"INDEXED BY {table}_scope_rowids JOIN {table}_scopes s ON s.id = m.scope_id "
            "WHERE m.scope_id = ? AND m.rowid > ? ORDER BY m.rowid LIMIT ?",
            (found[0][0], after, limit),
        )
        records, last, n = [], after, 0
        while rows := cursor.fetchmany(ROWS_PER_STEP):
            records.extend(record_from_row(r, json.loads(r[2])) for r in rows)
            last, n = rows[-1][10], n + len(rows)
        return records, last, n == limit
    finally:
        raw.close()
