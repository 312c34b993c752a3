"""The connections of one search's reads (``search_reads``): taken without the pool's check,
with the search's statements prepared on the server.

The pool checks each connection it hands out with a round trip before it is used (a search
takes two: the one for its reads and a spare one beside it). A search only reads, so it takes
them unchecked instead: when its first batches find a connection dead (the server ended it
while it sat in the pool), the connection is closed, the pool replaces it, and the batches run
again on checked connections. Polling the socket instead of the round trip (9bdede5) was not
enough: the server's goodbye may arrive after the poll.

A search's statements are prepared (psycopg's ``prepare_threshold`` 0 while the search holds
the connection): the server parses each statement once per connection, not once per search,
and still plans it for each execution's arguments (``connection._custom_plans``). Measured
(20k memories, each statement of 120 searches executed alone, load ~8): the pool's links 6.87
-> 5.37 ms median, nearest entities 1.99 -> 1.57, BM25 1.18 -> 0.89, the rows identical. A
server that loses a prepared statement (a transaction-mode pooler before PgBouncer 1.21 sends
the next statement to another server) fails the first batches: the search runs them again
unprepared, and the store prepares no search statement after that.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from linkmem.errors import BackendUnavailable, StoreError
from linkmem.store.postgres.connection import LOST_PREPARED, sqlstate_of
from linkmem.store.postgres.search_reads import SearchReads
from linkmem.store.prefetch import SearchPlan


@contextmanager
def search_reads(store: Any, plan: SearchPlan) -> Iterator[SearchReads]:
    """A ``SearchReads`` over one pooled connection (and a spare one when free at once), its
    first batches fetched. Inside a block that holds a connection the search reads on that
    one, unprepared and without a second attempt."""
    db = store.db
    with ExitStack() as held:
        if db.holds_connection():
            reads = _first_batches(store, plan, held, checked=True, prepared=False)
        else:
            try:
                with ExitStack() as attempt:
                    reads = _first_batches(store, plan, attempt, False, db.prepares_searches)
                    held.push(attempt.pop_all())
            except (BackendUnavailable, StoreError) as e:
                lost = isinstance(e, BackendUnavailable)
                if not lost and sqlstate_of(e) not in LOST_PREPARED:
                    raise
                db.prepares_searches = db.prepares_searches and lost
                reads = _first_batches(store, plan, held, True, db.prepares_searches)
        yield reads
    store.row_pages.after_search(reads.searched_view())


def _first_batches(
    store: Any, plan: SearchPlan, stack: ExitStack, checked: bool, prepared: bool
) -> SearchReads:
    conn = stack.enter_context(store.db.connection(checked))
    side = stack.enter_context(_spare(store.db, checked))
    if prepared:
        for held in (conn, side):
            if held is not None:
                held.prepare_threshold = 0
                stack.callback(setattr, held, "prepare_threshold", None)
    reads = SearchReads(store, plan, conn, side)
    reads.fetch_first()
    return reads


@contextmanager
def _spare(db: Any, checked: bool) -> Iterator[Any | None]:
    """A second connection for the statements that run beside the first's, unless the search
    runs inside an open transaction (its reads must see that transaction's writes)."""
    if db.in_transaction():
        yield None
        return
    with db.spare_connection(checked) as side:
        yield side
