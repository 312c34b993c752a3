"""A process's own adds carry its PostgreSQL search caches to the versions they leave
(``linkmem.store.postgres.write_follow``): the pool's rows, the near rows, the entity records,
hub lists and hop index stay, but for the entities the add linked or inserted (whose lists
gain the memories it linked them to); any other write in the transaction carries nothing.
Answers are the plain path's."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from pg_cache_helpers import (
    ENTITY_POOL,
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

pytestmark = pytest.mark.postgres


RETRIEVAL = ENTITY_POOL  # the ``two`` fixture's (conftest)


def test_an_own_add_carries_the_caches_but_what_it_linked(two: Any) -> None:
    reader, _ = two
    warmed(reader)
    scope_id, before = versions(reader)
    assert set(held_at(reader, scope_id).values()) == {before}
    store: Any = reader.store
    max_links = store.entity_cache.hop_max_links(scope_id, before)
    assert max_links is not None
    # "Max Person" has many links (its list is held), "Rare" a few, "Zelda Quill" none yet.
    listed = set(store.entity_cache._entries[scope_id].links)
    linked = reader.add("Max Person2 met Rare1 and Zelda Quill in the park", user_id="alice")
    _, after = versions(reader)
    assert after != before
    assert set(held_at(reader, scope_id).values()) == {after}
    touched = assert_carried_without(
        reader, scope_id, after, max_links, [linked["results"][0]["id"]], listed
    )
    assert len(touched) == 3
    scores_as_servers(reader)  # the carried caches answer as the server
    assert_lists_as_servers(reader, scope_id, listed & touched)  # their lists gained the add


@pytest.mark.parametrize("write", OTHER_WRITES)
def test_other_writes_carry_nothing(two: Any, write: str) -> None:
    reader, _ = two
    warmed(reader)
    scope_id, before = versions(reader)
    other_write(reader, write)
    _, after = versions(reader)
    assert after != before
    assert after not in set(held_at(reader, scope_id).values())
    scores_as_servers(reader)


def test_searches_after_an_own_add_send_one_round_trip(pg_dsn_18: str) -> None:
    collection = "f_" + uuid.uuid4().hex[:12]
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
        # New names: before, each search after the add read its pool's rows, the hubs'
        # lists, the hop index and the near rows again (3-4 round trips).
        memory.add("Zelda Quill swims near Oslo", user_id="alice")
        after = round_trips()
        assert max(after) <= 2 and sum(after) <= len(QUERIES) + 2, after  # what the add wrote
        assert round_trips() == [1] * len(QUERIES)
