"""The connections of one search's reads (``search_reads``), taken without the pool's check.

The pool checks each connection it hands out with a round trip before it is used (a search
takes two: the one for its reads and a spare one beside it). A search only reads, so it takes
them unchecked instead: when its first batches find a connection dead (the server ended it
while it sat in the pool), the connection is closed, the pool replaces it, and the batches run
again on checked connections. Polling the socket instead of the round trip (9bdede5) was not
enough: the server's goodbye may arrive after the poll.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from linkmem.errors import BackendUnavailable
from linkmem.store.postgres.search_reads import SearchReads
from linkmem.store.prefetch import SearchPlan


@contextmanager
def search_reads(store: Any, plan: SearchPlan) -> Iterator[SearchReads]:
    """A ``SearchReads`` over one pooled connection (and a spare one when free at once), its
    first batches fetched. Inside a block that holds a connection the search reads on that
    one, without a second attempt."""
    with ExitStack() as held:
        if not store.db.holds_connection():
            try:
                with ExitStack() as attempt:
                    reads = _first_batches(store, plan, attempt, checked=False)
                    held.push(attempt.pop_all())
            except BackendUnavailable:
                reads = _first_batches(store, plan, held, checked=True)
        else:
            reads = _first_batches(store, plan, held, checked=True)
        yield reads


def _first_batches(store: Any, plan: SearchPlan, stack: ExitStack, checked: bool) -> SearchReads:
    conn = stack.enter_context(store.db.connection(checked))
    side = stack.enter_context(_spare(store.db, checked))
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
