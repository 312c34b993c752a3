"""Per-scope cache entries kept within a byte budget, least recently searched dropped first.

The base of the stores' keyword and entity caches (``keyword_postings``, ``entity_records``).
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

    def drop(self, scope_id: int) -> None:
        """Forget the scope's entry (it reloads when next searched)."""
        with self._lock:
            entry = self._entries.pop(scope_id, None)
            if entry is not None:
                self._bytes -= entry.nbytes

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def _evict(self) -> None:
        """Drop the least recently searched scopes while past the budget (a scope alone past
        it too). Called with the lock held."""
        while self._bytes > self._max_bytes and self._entries:
            _, dropped = self._entries.popitem(last=False)
            self._bytes -= dropped.nbytes
