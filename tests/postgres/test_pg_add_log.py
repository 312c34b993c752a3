"""Another process's adds carry a reader's PostgreSQL search caches through the log of adds
(``linkmem.store.postgres.add_log``): the pool's rows, the near rows, the entity records,
hub lists and hop index stay, but for the entities the adds linked or inserted (whose lists
gain the memories the adds linked them to); a write of any other kind between breaks the
chain and nothing is carried. Answers are the plain path's."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from pg_cache_helpers import (
    ENTITY_POOL,
    add_from_another_process,
    assert_carried_without,
    assert_lists_as_servers,
    counted_round_trips,
    held_at,
    opened,
    scores_as_servers,
    versions,
    warmed,
)
from search_reads_cases import OTHER_WRITES, QUERIES, other_write, seed

from linkmem import Memory
from linkmem.store.postgres.add_log import KEEP_VERSIONS

pytestmark = pytest.mark.postgres

RETRIEVAL = ENTITY_POOL  # the ``two`` fixture's (conftest)


def caught_up(memory: Memory, scope_id: int, now: tuple[int, int]) -> None:
    store: Any = memory.store
    with store.db.connection() as conn:
        store.add_log.catch_up(conn, [(scope_id, now)])


def test_another_memorys_adds_carry_the_caches_but_what_they_linked(two: Any) -> None:
    reader, writer = two
    warmed(reader)
    scope_id, before = versions(reader)
    store: Any = reader.store
    max_links = store.entity_cache.hop_max_links(scope_id, before)
    assert max_links is not None
    # "Max Person" has many links (its list is held), "Rare" a few, Zelda and Oslo none yet.
    listed = set(store.entity_cache._entries[scope_id].links)
    first = writer.add("Max Person2 met Rare1 and Zelda Quill in the park", user_id="alice")
    second = writer.add("Zelda Quill flew to Oslo", user_id="alice")
    _, after = versions(reader)
    assert set(held_at(reader, scope_id).values()) == {before}
    caught_up(reader, scope_id, after)
    assert set(held_at(reader, scope_id).values()) == {after}
    added = [first["results"][0]["id"], second["results"][0]["id"]]
    touched = assert_carried_without(reader, scope_id, after, max_links, added, listed)
    assert len(touched) == 4
    scores_as_servers(reader)  # the carried caches answer as the server
    assert_lists_as_servers(reader, scope_id, listed & touched)  # their lists gained the adds


@pytest.mark.parametrize("write", OTHER_WRITES)
def test_a_write_besides_adds_breaks_the_chain(two: Any, write: str) -> None:
    reader, writer = two
    warmed(reader)
    scope_id, before = versions(reader)
    writer.add("Zelda Quill flew to Oslo", user_id="alice")
    other_write(writer, write)
    writer.add("Oslo is cold", user_id="alice")
    _, after = versions(reader)
    caught_up(reader, scope_id, after)
    assert set(held_at(reader, scope_id).values()) == {before}
    scores_as_servers(reader)


def test_a_reader_behind_the_log_reads_again(two: Any) -> None:
    reader, writer = two
    warmed(reader)
    scope_id, before = versions(reader)
    for i in range(KEEP_VERSIONS + 2):
        writer.add(f"note {i} about Oslo", user_id="alice")
    store: Any = reader.store
    kept = store.db.value(f"SELECT count(*) FROM {store.t.add_log} WHERE scope_id = %s", [scope_id])
    assert KEEP_VERSIONS <= kept <= KEEP_VERSIONS + 1
    _, after = versions(reader)
    caught_up(reader, scope_id, after)
    assert set(held_at(reader, scope_id).values()) == {before}
    scores_as_servers(reader)
    writer.reset()
    assert store.db.value(f"SELECT count(*) FROM {store.t.add_log}") == 0


def test_searches_after_another_processs_adds_send_few_round_trips(pg_dsn_18: str) -> None:
    collection = "l_" + uuid.uuid4().hex[:12]
    seed(opened(pg_dsn_18, collection, ENTITY_POOL)).close()
    with counted_round_trips(pg_dsn_18, collection, ENTITY_POOL) as (memory, proxy):

        def round_trips() -> list[int]:
            counts = []
            for query in QUERIES:
                before = proxy.count
                memory.search(query, user_id="alice", top_k=8)
                counts.append(proxy.count - before)
            return counts

        warmed(memory)
        assert round_trips() == [1] * len(QUERIES)
        # Without the log, each search after another process's add read its pool's rows, the
        # hubs' lists, the hop index and the near rows again: 16-17 round trips for these 7
        # searches; with it 10-12 (the first time, its statement is prepared too).
        for text in ("Zelda Quill swims near Oslo", "Max met Zelda Quill", "Oslo has fjords"):
            add_from_another_process(pg_dsn_18, collection, text)
            after = round_trips()
            assert max(after) <= 4 and sum(after) <= len(QUERIES) + 5, after
        assert round_trips() == [1] * len(QUERIES)
        scores_as_servers(memory)
