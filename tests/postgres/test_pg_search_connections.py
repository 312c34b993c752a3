"""A search takes its connections without the pool's check (``search_connections``): one the
server ended while it sat in the pool is replaced, and the search runs again on checked ones."""

from __future__ import annotations

import psycopg
import pytest
from search_reads_cases import QUERIES, results
from test_pg_search_reads import seeded_memory

from linkmem.store.postgres import search_connections

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

    def recorded(store, plan, stack, checked):  # type: ignore[no-untyped-def]
        attempts.append(checked)
        return first_batches(store, plan, stack, checked)

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
    memory = seeded_memory(pg_dsn)
    try:
        with memory.store.transaction():
            assert memory.store.db.holds_connection()
            found = results(memory, QUERIES[0])
        assert found == results(memory, QUERIES[0])
    finally:
        memory.close()
