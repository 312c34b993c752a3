"""Per-scope cache entries kept within a byte budget, least recently searched dropped first.

The base of the stores' caches: vector matrices (``linkmem.store.vectors.MatrixCache``),
keyword postings, entity records and memory rows.
Its lock is a leaf: a subclass holds it only around its own dictionaries, never while reading
the store or taking another lock.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, Protocol, TypeVar


class Sized(Protocol):
    nbytes: int


E = TypeVar("E", bound=Sized)


class ScopeBudget(Generic[E]):
    """Entries by scope id, in least-recently-used order, whose ``nbytes`` add up to at most
    ``max_bytes`` after each ``_evict``."""

    def __init__(self, max_bytes: int) -> None:
        self._max_bytes = max_bytes
        self._entries: OrderedDict[int, E] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        return self._bytes

    def held(self, scope_id: int) -> E | None:
        """The scope's entry, as it is (not counted as a use)."""
        with self._lock:
            return self._entries.get(scope_id)

    def drop(self, scope_id: int) -> None:
        """Forget the scope's entry (it reloads when next searched)."""
        with self._lock:
            self._drop(scope_id)

    def _drop(self, scope_id: int) -> None:
        """``drop`` with the lock held."""
        entry = self._entries.pop(scope_id, None)
        if entry is not None:
            self._bytes -= entry.nbytes

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def _put(self, scope_id: int, entry: E, keep: int = 0) -> None:
        """Store ``entry`` as the scope's most recent, replacing its previous one, then
        ``_evict(keep)``. Called with the lock held."""
        previous = self._entries.pop(scope_id, None)
        self._bytes += entry.nbytes - (previous.nbytes if previous is not None else 0)
        self._entries[scope_id] = entry
        self._evict(keep)

    def _evict(self, keep: int = 0) -> None:
        """Drop the least recently searched scopes while past the budget, down to ``keep``
        of them (0: a scope alone past it goes too). Called with the lock held."""
        while self._bytes > self._max_bytes and len(self._entries) > keep:
            _, dropped = self._entries.popitem(last=False)
            self._bytes -= dropped.nbytes
