"""A search takes its connections without the pool's check and prepares its statements
(``search_connections``): a connection the server ended while it sat in the pool is replaced
and the search runs again on checked ones; a server that lost a prepared statement gets the
search (or its third batch) again unprepared."""

from __future__ import annotations

import psycopg
import pytest
from search_reads_cases import QUERIES, SMALL_POOL, all_results, plain_reads, results
from test_pg_search_reads import seeded_memory

from linkmem.store.postgres import search_connections, search_reads

pytestmark = pytest.mark.postgres


@pytest.fixture(params=["18", "16"])
def pg_dsn(request: pytest.FixtureRequest) -> str:
    return request.getfixturevalue(f"pg_dsn_{request.param}")


def terminate_linkmem_backends(dsn: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = 'linkmem' AND datname = current_database()"
        ).fetchall()
    return len(rows)


@pytest.mark.parametrize("connections", [1, 2])
def test_a_search_on_connections_the_server_ended_runs_again_on_new_ones(
    pg_dsn: str, connections: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = seeded_memory(pg_dsn, connections=connections)
    attempts: list[bool] = []
    first_batches = search_connections._first_batches

    def recorded(store, plan, stack, checked, prepared):  # type: ignore[no-untyped-def]
        attempts.append(checked)
        return first_batches(store, plan, stack, checked, prepared)

    try:
        before = [results(memory, q) for q in QUERIES]
        monkeypatch.setattr(search_connections, "_first_batches", recorded)
        assert terminate_linkmem_backends(pg_dsn) >= connections
        assert [results(memory, q) for q in QUERIES] == before
        # the first search found its connection dead and ran again on checked ones
        assert attempts[:2] == [False, True]
        assert attempts[2:] == [False] * (len(QUERIES) - 1)
    finally:
        memory.close()


def test_a_search_inside_a_block_reads_on_its_connection(pg_dsn: str) -> None:
    """No unchecked connection and no second attempt inside an open transaction: its writes
    are seen, and an error is the block's."""
    memory = seeded_memory(pg_dsn, cached=False)  # inside the block: the server's cosines
    try:
        with memory.store.transaction():
            assert memory.store.db.holds_connection()
            found = results(memory, QUERIES[0])
        assert found == results(memory, QUERIES[0])
    finally:
        memory.close()


def test_search_statements_are_prepared_and_planned_for_each_search(pg_dsn: str) -> None:
    memory = seeded_memory(pg_dsn, connections=1, cached=False)
    try:
        fetched = all_results(memory)  # each statement runs more than five times
        with plain_reads():
            assert all_results(memory) == fetched
        with memory.store.db.connection() as conn:
            assert conn.execute("SHOW plan_cache_mode").fetchone() == ("force_custom_plan",)
            prepared = conn.execute("SELECT count(*) FROM pg_prepared_statements").fetchone()
            assert prepared[0] > 5
            assert conn.prepare_threshold is None  # the store's other statements: unprepared
    finally:
        memory.close()


def test_a_server_that_lost_the_prepared_statements_gets_the_search_unprepared(
    pg_dsn: str,
) -> None:
    """As through a transaction-mode pooler before PgBouncer 1.21, where the next statement
    may reach a server that never saw the prepared one."""
    memory = seeded_memory(pg_dsn, connections=1)
    db = memory.store.db
    try:
        before = [results(memory, q) for q in QUERIES]
        with db.connection() as conn:  # behind psycopg's back: it still counts them prepared
            conn.pgconn.exec_(b"DEALLOCATE ALL")
        assert db.prepares_searches
        assert [results(memory, q) for q in QUERIES] == before
        assert not db.prepares_searches
        with db.connection() as conn:
            assert conn.execute("SELECT count(*) FROM pg_prepared_statements").fetchone() == (0,)
    finally:
        memory.close()


def test_a_prepared_statement_lost_after_the_first_batches_is_run_again_unprepared(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server loses the prepared statements between the first batches and a third round
    trip (second-hop targets outside them): that batch runs again unprepared, with the
    plain answers, and later searches are not prepared."""
    memory = seeded_memory(pg_dsn, connections=1, cached=False, **SMALL_POOL, hop_max_links=40)
    db = memory.store.db
    fetch_first = search_reads.SearchReads.fetch_first
    lost: list[bool] = []

    def then_lost(self: search_reads.SearchReads) -> None:
        fetch_first(self)
        if self._conn.prepare_threshold is not None:
            self._conn.pgconn.exec_(b"DEALLOCATE ALL")  # behind psycopg's back
            lost.append(True)

    try:
        with plain_reads():
            plain = [results(memory, q) for q in QUERIES]
        monkeypatch.setattr(search_reads.SearchReads, "fetch_first", then_lost)
        assert [results(memory, q) for q in QUERIES] == plain
        assert lost == [True]  # the first search's third batch found them lost
        assert not db.prepares_searches
    finally:
        memory.close()
