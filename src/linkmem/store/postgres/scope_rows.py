"""A searched scope's memory rows read whole into the row cache, a page after each search
(PostgreSQL; SQLite's ``scope_records`` likewise).

A search whose dense reads come from the process reads the rows of its candidate pool that
the row cache (``caches.memory_rows.RowCache``) lacks in a round trip of its own: with new
queries, every search of a 10k-memory scope did (2 round trips instead of 1). Once a scope
has been searched ``FILL_AFTER`` times at its versions, each search ends by starting the read
of the next ``PAGE`` of the scope's memories (in the order of its cached matrix, i.e. by seq)
on a side thread, on a spare pooled connection when one is free at once (none: no page this
time; a pool of one connection reads none, since a search would wait for it), with the
scope's versions in the same statement (``search_sql.memories_of_ids``, as a search reads
them): the page is kept only while the cache still holds the scope at those versions. The
search never waits for it. The row cache's byte budget bounds what is held; an own add
carries the scope's rows and how far they were read (``write_follow``), and its new
memories are read by the next page.

Locking: the row cache's lock (a leaf) is taken only around its dictionaries; the page's read
holds no lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from linkmem.errors import StoreError
from linkmem.side_threads import side_pool
from linkmem.store.caches.entity_reads import ScopeView
from linkmem.store.caches.memory_rows import RowCache, ScopeRows
from linkmem.store.postgres import search_sql as q
from linkmem.store.postgres.connection import Database
from linkmem.store.postgres.sql import Tables

#: Memories read per page (~1-2 ms of a side thread; a 10k-memory scope is held after ~40
#: searches at its versions, a 1k one after ~4).
PAGE = 256
#: Searches of a scope at its versions before its pages start: a process that searches once
#: (the command line) reads nothing more.
FILL_AFTER = 2
#: Rows built between two fetches, so a search on another thread waits little for the GIL.
ROWS_PER_STEP = 32


class ScopeRowPages:
    """Starts the next page of a searched scope's rows after each search."""

    def __init__(self, db: Database, t: Tables, rows: RowCache) -> None:
        self._db = db
        self._t = t
        self._rows = rows

    def after_search(self, view: ScopeView | None) -> None:
        """The search of ``view`` (None: not one scope from the process's matrices) ended."""
        if view is None or view.searches + 1 < FILL_AFTER or self._db.pool.max_size < 2:
            return
        ids = view.matrix.ids
        entry = self._rows.claim_page(view.scope_id, view.versions, len(ids))
        if entry is None:
            return
        page = ids[entry.filled : entry.filled + PAGE]
        end = entry.filled + len(page)
        try:
            side_pool().submit(self._read, view, entry, page, end)
        except RuntimeError:  # the interpreter is shutting down
            self._rows.keep_page(view.scope_id, entry, view.versions, {}, entry.filled)

    def _read(self, view: ScopeView, entry: ScopeRows, page: Sequence[str], end: int) -> None:
        kept: dict[str, tuple[Any, ...]] = {}
        try:
            kept = self._page(view, page)
        except StoreError:  # the next search tries again
            pass
        self._rows.keep_page(view.scope_id, entry, view.versions, kept, end if kept else 0)

    def _page(self, view: ScopeView, page: Sequence[str]) -> dict[str, tuple[Any, ...]]:
        """The rows of ``page`` as a search keeps them; empty when one was read at other
        versions than the view's or no connection was free."""
        statement, args = q.memories_of_ids(self._t, list(page), ("FALSE", []), None, True)
        kept: dict[str, tuple[Any, ...]] = {}
        with self._db.spare_connection(checked=False) as conn:  # a dead one fails the page
            if conn is None:
                return {}
            cursor = conn.execute(statement, args, binary=True)  # as a search reads them
            while rows := cursor.fetchmany(ROWS_PER_STEP):
                for *columns, ent, mem, _ in rows:
                    if (ent, mem) != view.versions:
                        return {}
                    kept[columns[0]] = tuple(columns)
        return kept
