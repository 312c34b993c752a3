"""Statements of a search's round trip queued before its pipelines open (``search_reads``).

Opening and closing a pipeline costs a round trip (its sync) even with nothing in it, and the
BEGIN/COMMIT around a batch are statements too: a warm search whose reads all come from the
process's caches (``search_near_cache``) must send none. ``Queued`` stands in for a
connection while the batch is decided, and ``replay`` sends what was asked once it is known
that something was.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class Later:
    """The cursor of a statement ``Queued`` holds, once replayed."""

    cursor: Any = None

    def fetchall(self) -> list[Any]:
        return self.cursor.fetchall()


class Queued:
    """A connection's ``execute`` calls, kept in order to be sent later."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Sequence[Any] | None, dict[str, Any], Later]] = []

    def execute(self, query: str, params: Sequence[Any] | None = None, **kw: Any) -> Later:
        later = Later()
        self.calls.append((query, params, kw, later))
        return later

    def replay(self, conn: Any) -> None:
        """Send the calls on ``conn``, in order."""
        for query, params, kw, later in self.calls:
            later.cursor = conn.execute(query, params, **kw)
