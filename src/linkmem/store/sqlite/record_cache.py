"""The records of searched memories kept in process memory (issue 15).

A search reads the records of its results (``get_memories``) after the query's vector, ~70 us
of SQL and row building for 10 results. Results recur across searches of a scope, so the
records read are kept here, valid while nothing can have changed them: no connection has
committed a rewrite of a record (the collection's count of deleted or changed records,
``schema.m009_record_rewrites``, read with every lookup; another process's adds insert new
records and leave it) and this process has not updated, deleted or reset memories since
(``changed``, called after each such commit; an epoch stops a read that overlapped one from
being kept). A read inside an open transaction of this connection skips the cache (it may
see uncommitted writes) and is not kept.

A scope searched again at one stamp and epoch is read whole as well, a page after each of its
searches, on a side thread with a connection of its own (``scope_records``): once it is held,
a search reads no record from SQLite. A page read on another connection is as good as one
read on the store's: it is asked for after the stamp was read and kept only while the stamp
and epoch are unchanged, so any rewrite another connection committed before its read moves
the stamp at the next lookup (which drops it), and any update or delete of this process moves
the epoch (``changed``). A memory added (by this process or another) moves neither; it is a
new record, read from the store by the search that finds it (and by the scope's next page).

Bounded: ``DEFAULT_RECORD_CACHE_BYTES`` of estimated record bytes read by searches (past it
those start over) and ``scope_records.DEFAULT_HELD_BYTES`` of scopes read whole (least
recently searched scope dropped first). Only records whose metadata holds no lists or dicts
are kept: a search's results copy the metadata dict, not what is in it. Locking: the cache's
lock is a leaf, taken under the connection's lock (the lock order of ``sqlite.connection``),
never while reading the store; it also guards the held scopes. A page's reads take no lock
(their connection is their own).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from linkmem.side_threads import side_pool
from linkmem.store.base import MemoryDate
from linkmem.store.sqlite import scope_records
from linkmem.store.sqlite.scope_records import HeldScope, HeldScopes, flat, record_bytes
from linkmem.types import MemoryRecord, Scope

#: Estimated bytes kept per store: 8 MiB, ~20k short memories.
DEFAULT_RECORD_CACHE_BYTES = 8 * 2**20


class RecordCache:
    """memory id -> its record, as committed at one count of rewrites and epoch.
    ``held_bytes=0`` reads no scope whole."""

    def __init__(
        self,
        max_bytes: int = DEFAULT_RECORD_CACHE_BYTES,
        held_bytes: int = scope_records.DEFAULT_HELD_BYTES,
    ) -> None:
        self._max_bytes = max_bytes
        self._lock = threading.Lock()
        self._records: dict[str, MemoryRecord] = {}
        self._bytes = 0
        self._held = HeldScopes(held_bytes)
        self._stamp: int | None = None  # the count of rewrites the records were read at
        self._epoch = 0

    @property
    def nbytes(self) -> int:
        """Estimated bytes of the records read by searches (``held_bytes`` beside them)."""
        return self._bytes

    @property
    def held_bytes(self) -> int:
        """Estimated bytes of the scopes read whole."""
        return self._held.nbytes

    def held(self, scope: Scope) -> int:
        """Records of the exact ``scope`` read whole so far at the current stamp."""
        with self._lock:
            return self._held.count(scope)

    def changed(self) -> None:
        """This process committed a write that may change or remove records."""
        with self._lock:
            self._epoch += 1
            self._clear()

    def get_memories(self, store: Any, ids: Sequence[str]) -> list[MemoryRecord]:
        """The store's ``get_memories(ids)``, the records held answered from memory."""
        db = store.db
        with db.lock:  # no transaction of this process starts or ends until the read is done
            if db.in_transaction:
                return store.get_memories(ids)
            found, stamp, epoch = self._lookup(store, ids)
            missing = [i for i in dict.fromkeys(ids) if i not in found]
            read: list[MemoryRecord] = []
            if missing:
                read = store.get_memories(missing)
                found.update((r.id, r) for r in read)
                self._remember(read, stamp, epoch)
        records = [found[i] for i in ids if i in found]
        if self._held.max_bytes > 0 and records:
            self._fill(store, records, read, stamp, epoch)
        return records

    def memory_dates(self, store: Any, ids: Sequence[str]) -> list[MemoryDate]:
        """The store's ``memory_dates(ids)`` (what a search's time signal reads), the records
        held answered from memory."""
        db = store.db
        with db.lock:
            if db.in_transaction:
                return store.memory_dates(ids)
            found = self._lookup(store, ids)[0]
            missing = [i for i in dict.fromkeys(ids) if i not in found]
            read = {d.id: d for d in store.memory_dates(missing)} if missing else {}
        return [
            MemoryDate(r.id, r.text, r.created_at) if (r := found.get(i)) is not None else read[i]
            for i in ids
            if i in found or i in read
        ]

    def _lookup(self, store: Any, ids: Sequence[str]) -> tuple[dict[str, MemoryRecord], int, int]:
        """The records of ``ids`` held at the collection's count of rewrites (all dropped when
        it moved), that stamp and the epoch; under the connection's lock."""
        stamp = store.db.raw.execute(f"SELECT n FROM {store.c}_record_rewrites").fetchone()[0]
        with self._lock:
            if stamp != self._stamp:
                self._clear()
                self._stamp = stamp
            epoch, loose, held = self._epoch, self._records, self._held
            found = {i: r for i in ids if (r := loose.get(i) or held.get(i)) is not None}
        return found, stamp, epoch

    def _fill(
        self,
        store: Any,
        records: list[MemoryRecord],
        read: list[MemoryRecord],
        stamp: int,
        epoch: int,
    ) -> None:
        """Count a search of the results' scopes; start the next page of those due one."""
        scopes = dict.fromkeys(r.scope for r in records)
        missed = {r.scope for r in read if flat(r.metadata)}
        with self._lock:
            if stamp != self._stamp or epoch != self._epoch:
                return
            pages = self._held.searched(scopes, missed)
        path, table = getattr(store, "path", ":memory:"), store.c
        for scope, held, after in pages:
            if path == ":memory:" or not path:  # no other connection can read it
                with self._lock:
                    held.busy, held.too_big = False, True
                continue
            page = (path, table, scope, held, after, stamp, epoch)
            try:
                side_pool().submit(self._read_page, *page)
            except RuntimeError:  # the interpreter is shutting down
                with self._lock:
                    held.busy = False

    def _read_page(
        self,
        path: str,
        table: str,
        scope: Scope,
        held: HeldScope,
        after: int,
        stamp: int,
        epoch: int,
    ) -> None:
        """One page of ``scope`` read on a side thread, kept if nothing moved meanwhile. A
        page that fails (the file gone, locked past the timeout) is read on a later search:
        it is optional, and nobody waits for it."""
        page = None
        try:
            page = scope_records.read_page(path, table, scope, after)
        except Exception:  # noqa: BLE001, S110 - see above
            pass
        finally:
            with self._lock:
                held.busy = False
                current = stamp == self._stamp and epoch == self._epoch
                if page is not None and current and self._held.holds(scope, held):
                    self._held.add_page(scope, held, *page)

    def _remember(self, records: list[MemoryRecord], stamp: int, epoch: int) -> None:
        with self._lock:
            if stamp != self._stamp or epoch != self._epoch:
                return
            kept = [r for r in records if r.id not in self._records and flat(r.metadata)]
            added = sum(record_bytes(r) for r in kept)
            if self._bytes + added > self._max_bytes:
                self._records, self._bytes = {}, 0
                if added > self._max_bytes:
                    return
            self._records.update((r.id, r) for r in kept)
            self._bytes += added

    def _clear(self) -> None:
        self._records = {}
        self._bytes = 0
        self._held.clear()
