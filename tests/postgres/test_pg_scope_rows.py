"""A searched PostgreSQL scope's memory rows are read whole into the row cache, a page after
each search on a side thread (``linkmem.store.postgres.scope_rows``); rows are the ones a
search reads, kept only at the versions they were read at. Answers are the plain path's."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from pg_cache_helpers import ENTITY_POOL, add_from_another_process, opened, scores_as_servers
from search_reads_cases import seed

from linkmem import Memory
from linkmem.store.postgres import scope_rows
from linkmem.store.postgres import search_sql as q

pytestmark = pytest.mark.postgres


@pytest.fixture
def memory(pg_dsn_18: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(scope_rows, "PAGE", 16)  # alice's 100 memories: seven pages
    collection = "r_" + uuid.uuid4().hex[:12]
    seed(opened(pg_dsn_18, collection, ENTITY_POOL)).close()
    opened_memory = opened(pg_dsn_18, collection, ENTITY_POOL)
    yield opened_memory
    opened_memory.close()


def alice(memory: Memory) -> tuple[int, tuple[int, int], list[str]]:
    """alice's scope id, versions and memory ids."""
    store: Any = memory.store
    t = store.t
    (scope_id, ent, mem), *_ = store.db.rows(
        f"SELECT id, ent_version, mem_version FROM {t.scopes} WHERE user_id = 'alice'"
    )
    ids = [r[0] for r in store.db.rows(f"SELECT id FROM {t.mem} WHERE scope_id = %s", [scope_id])]
    return scope_id, (ent, mem), ids


def held(memory: Memory) -> dict[str, Any]:
    """The rows the row cache holds for alice's scope at its versions, once no page runs."""
    store: Any = memory.store
    scope_id, versions, ids = alice(memory)
    deadline = time.monotonic() + 10
    while True:
        entry = store.row_cache._entries.get(scope_id)
        if entry is None or not entry.paging or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    return store.row_cache.lookup(scope_id, versions, ids)


def searched_until_held(memory: Memory, searches: int = 12) -> dict[str, Any]:
    for _ in range(searches):
        scores_as_servers(memory)
        rows = held(memory)
        if len(rows) == len(alice(memory)[2]):
            return rows
    return held(memory)


def test_a_searched_scope_is_held_whole_with_the_rows_a_search_reads(memory: Memory) -> None:
    rows = searched_until_held(memory)
    _, _, ids = alice(memory)
    assert set(rows) == set(ids)
    store: Any = memory.store
    statement, args = q.memories_of_ids(store.t, ids, ("FALSE", []), None, True)
    with store.db.connection() as conn:
        read = conn.execute(statement, args, binary=True).fetchall()
    assert {r[0]: tuple(r[:-3]) for r in read} == rows  # as a search reads and keeps them


def test_own_adds_carry_the_rows_and_their_memories_are_read_next(memory: Memory) -> None:
    searched_until_held(memory)
    added = memory.add("Zelda Quill swims near Oslo", user_id="alice")["results"][0]["id"]
    rows = held(memory)
    assert added not in rows and len(rows) == len(alice(memory)[2]) - 1  # carried
    rows = searched_until_held(memory, searches=2)
    assert added in rows


def test_another_process_write_starts_over(memory: Memory, pg_dsn_18: str) -> None:
    searched_until_held(memory)
    collection = memory.settings.collection
    add_from_another_process(pg_dsn_18, collection, "Max met Zelda Quill in Porto")
    assert held(memory) == {}  # nothing at the new versions
    scores_as_servers(memory)
    assert len(searched_until_held(memory)) == len(alice(memory)[2])


def test_a_pool_of_one_connection_reads_no_page(pg_dsn_18: str) -> None:
    collection = "r_" + uuid.uuid4().hex[:12]
    seed(opened(pg_dsn_18, collection, ENTITY_POOL)).close()
    one = opened(pg_dsn_18, collection, ENTITY_POOL, pool_max=1)
    try:
        for _ in range(4):
            scores_as_servers(one)
        store: Any = one.store
        scope_id, _, _ = alice(one)
        assert store.row_cache._entries[scope_id].filled == 0
    finally:
        one.close()
