"""The records of searched memories kept in process memory (issue 15).

A search reads the records of its results (``get_memories``) after the query's vector, ~70 us
of SQL and row building for 10 results. Results recur across searches of a scope, so the
records read are kept here, valid while nothing can have changed them: no other connection
has committed to the file (SQLite's ``PRAGMA data_version``, read with every lookup) and this
process has not updated, deleted or reset memories since (``changed``, called after each such
commit; an epoch stops a read that overlapped one from being kept). A read inside an open
transaction of this connection skips the cache (it may see uncommitted writes) and is not kept.

Bounded: ``DEFAULT_RECORD_CACHE_BYTES`` of estimated record bytes; past it the cache starts
over. Only records whose metadata holds no lists or dicts are kept: a search's results copy
the metadata dict, not what is in it. Locking: the cache's lock is a leaf, taken under the
connection's lock (the lock order of ``sqlite.connection``), never while reading the store.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from linkmem.types import MemoryRecord

#: Estimated bytes kept per store: 8 MiB, ~20k short memories.
DEFAULT_RECORD_CACHE_BYTES = 8 * 2**20

#: Estimated bytes of one record beside its text (the dataclass, its strings, the dict slot).
_RECORD_BYTES = 400


class RecordCache:
    """memory id -> its record, as committed at one ``data_version`` and epoch."""

    def __init__(self, max_bytes: int = DEFAULT_RECORD_CACHE_BYTES) -> None:
        self._max_bytes = max_bytes
        self._lock = threading.Lock()
        self._records: dict[str, MemoryRecord] = {}
        self._bytes = 0
        self._stamp: int | None = None  # the data_version the records were read at
        self._epoch = 0

    @property
    def nbytes(self) -> int:
        return self._bytes

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
            stamp = db.raw.execute("PRAGMA data_version").fetchone()[0]
            with self._lock:
                if stamp != self._stamp:
                    self._clear()
                    self._stamp = stamp
                epoch, held = self._epoch, self._records
                found = {i: r for i in ids if (r := held.get(i)) is not None}
            missing = [i for i in dict.fromkeys(ids) if i not in found]
            if missing:
                read = store.get_memories(missing)
                found.update((r.id, r) for r in read)
                self._remember(read, stamp, epoch)
        return [found[i] for i in ids if i in found]

    def _remember(self, records: list[MemoryRecord], stamp: int, epoch: int) -> None:
        with self._lock:
            if stamp != self._stamp or epoch != self._epoch:
                return
            kept = [r for r in records if r.id not in self._records and _flat(r.metadata)]
            added = sum(_RECORD_BYTES + len(r.text) for r in kept)
            if self._bytes + added > self._max_bytes:
                self._clear()
                if added > self._max_bytes:
                    return
            self._records.update((r.id, r) for r in kept)
            self._bytes += added

    def _clear(self) -> None:
        self._records = {}
        self._bytes = 0


def _flat(metadata: dict[str, Any]) -> bool:
    """Whether nothing in ``metadata`` can be changed in place through a result's copy of it
    (``MemoryRecord.to_dict`` copies the dict, not its values): only such records are kept."""
    return all(type(value) in _SCALARS for value in metadata.values())


_SCALARS = (str, int, float, bool, type(None))
