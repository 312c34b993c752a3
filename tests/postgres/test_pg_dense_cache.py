"""Searches on PostgreSQL read the dense top-k and cosines from the process's cached vectors
(``linkmem.store.postgres.dense_cache``) only while they are current: every write of a
scope's memories, by this process or another, moves the scope's ``mem_version`` on in its
own transaction (``m010_memory_versions``), and the next search of any process sees it."""

from __future__ import annotations

import uuid
from typing import Any

import numpy as np
import pytest
from pg_cache_helpers import add_from_another_process, opened
from search_reads_cases import plain_reads, seed

from linkmem import Memory
from linkmem.store.base import NewMemory
from linkmem.store.postgres.store import PostgresStore
from linkmem.types import MemoryRecord, Scope

pytestmark = pytest.mark.postgres

QUERY = "Lisbon coffee garden"


def hits(memory: Memory, query: str = QUERY) -> list[tuple[str, str, float]]:
    found = memory.search(query, user_id="alice", top_k=5, explain=True)["results"]
    return [(h["id"], h["memory"], h["score_details"]["dense"]) for h in found]


def version(memory: Memory) -> int:
    store: Any = memory.store
    return int(store.db.value(f"SELECT mem_version FROM {store.t.scopes} WHERE user_id = 'alice'"))


def cached_rows(memory: Memory) -> int:
    """Rows of alice's scope in the searching process's cache (0: not cached)."""
    store: Any = memory.store
    scope_id = store.db.value(f"SELECT id FROM {store.t.scopes} WHERE user_id = 'alice'")
    entry = store.dense_cache.matrices._entries.get(scope_id)
    return 0 if entry is None else len(entry.ids)


def same_as_server(memory: Memory, query: str = QUERY) -> list[tuple[str, str, float]]:
    """The search's hits, checked against the plain path's (the server's cosines)."""
    got = hits(memory, query)
    with plain_reads():
        plain = hits(memory, query)
    assert [h[:2] for h in got] == [h[:2] for h in plain]
    assert np.allclose([h[2] for h in got], [h[2] for h in plain], atol=2e-6)
    return got


def test_another_writers_add_update_and_delete_are_seen_at_once(two: Any) -> None:
    reader, writer = two
    before = same_as_server(reader)
    assert cached_rows(reader) == 100  # the first search loaded alice's vectors
    v0 = version(reader)

    added = writer.add(QUERY, user_id="alice", infer=False)["results"][0]["id"]
    assert version(reader) == v0 + 1
    found = same_as_server(reader)
    assert found[0][:2] == (added, QUERY) and found[0][2] == pytest.approx(1.0, abs=1e-6)
    assert cached_rows(reader) == 101

    writer.update(added, "Rome deploy script")
    assert version(reader) > v0 + 1
    found = same_as_server(reader)
    assert added not in [h[0] for h in found[:1]]
    assert same_as_server(reader, "Rome deploy script")[0][:2] == (added, "Rome deploy script")

    writer.delete(added)
    assert same_as_server(reader) == before
    assert added not in [h[0] for h in same_as_server(reader, "Rome deploy script")]
    assert cached_rows(reader) == 100


def test_metadata_alone_keeps_the_version(two: Any) -> None:
    reader, writer = two
    first = reader.get_all(user_id="alice", limit=1)["results"][0]
    v0 = version(reader)
    writer.update(first["id"], metadata={"note": "changed"})
    assert version(reader) == v0
    writer.update(first["id"], first["memory"] + " Berlin")
    assert version(reader) > v0  # one step per statement that changes the row


def test_a_write_from_another_process_is_seen_at_once(two: Any, pg_dsn_18: str) -> None:
    reader, _ = two
    same_as_server(reader)
    collection = reader.settings.collection
    added = add_from_another_process(pg_dsn_18, collection, QUERY)
    assert same_as_server(reader)[0][:2] == (added, QUERY)


def test_own_adds_extend_the_cached_matrix(two: Any) -> None:
    """The writer's own add appends its rows after commit: its next search loads nothing."""
    reader, _ = two
    same_as_server(reader)
    store: Any = reader.store
    loads: list[int] = []
    load = store.dense_cache._load
    store.dense_cache.matrices._loader = lambda s, since: loads.append(s) or load(s, since)
    store.dense_cache.queue_load = lambda *a: pytest.fail("loaded again")  # type: ignore[misc]
    added = reader.add_batch([QUERY, "Rome deploy"], user_id="alice")["results"]
    assert cached_rows(reader) == 102
    assert same_as_server(reader)[0][0] == added[0]["id"]
    assert loads == []


def test_a_rolled_back_write_leaves_no_trace_in_the_cache(two: Any) -> None:
    reader, _ = two
    same_as_server(reader)
    store: Any = reader.store
    v0 = version(reader)
    at = "2026-01-01T00:00:00+00:00"
    record = MemoryRecord(str(uuid.uuid4()), QUERY, Scope(user_id="alice"), {}, at, at)
    new = NewMemory(record, reader.embedder.embed_batch([QUERY])[0], QUERY.lower().split())
    with pytest.raises(RuntimeError), store.transaction():
        store.put_memories([new])
        # inside the transaction the search sees its own write (from the server)
        assert hits(reader)[0][1] == QUERY
        raise RuntimeError("roll back")
    assert version(reader) == v0
    assert cached_rows(reader) == 100
    assert QUERY not in [h[1] for h in same_as_server(reader)]


def test_a_scope_over_the_budget_is_searched_on_the_server(two: Any) -> None:
    reader, writer = two
    reader.store.dense_cache.max_bytes = 10 * 1600  # type: ignore[attr-defined]
    reader.store.dense_cache.matrices.clear()  # type: ignore[attr-defined]
    same_as_server(reader)
    assert cached_rows(reader) == 0
    added = writer.add(QUERY, user_id="alice", infer=False)["results"][0]["id"]
    assert same_as_server(reader)[0][0] == added


def test_an_existing_store_gains_versions_on_open(pg_dsn_18: str) -> None:
    """A store from before m010 (taken back to it: its triggers, functions and column
    dropped) gets them when opened, its searches load the vectors, and writes move it on."""
    collection = "d_" + uuid.uuid4().hex[:12]
    old = seed(opened(pg_dsn_18, collection))
    store: Any = old.store
    t = store.t
    for statement in [
        *(f"DROP TRIGGER {t.index(f'_mem_version_{n}')} ON {t.mem}" for n in ("add", "sub")),
        f"DROP TRIGGER {t.index('_mem_version_update')} ON {t.mem}",
        f"DROP FUNCTION {t.index('_mem_version_bump')}()",
        f"DROP FUNCTION {t.index('_mem_version_update')}()",
        f"ALTER TABLE {t.scopes} DROP COLUMN mem_version",
        f"DELETE FROM linkmem_migrations WHERE collection = '{collection}' AND name = "
        "'m010_memory_versions'",
    ]:
        store.db.run(statement)
    old.close()
    new = opened(pg_dsn_18, collection)
    try:
        assert isinstance(new.store, PostgresStore)
        assert new.store.applied_on_open == ["m010_memory_versions"]
        assert version(new) == 0
        same_as_server(new)
        assert cached_rows(new) == 100
        added = new.add(QUERY, user_id="alice", infer=False)["results"][0]["id"]
        assert version(new) == 1
        assert same_as_server(new)[0][0] == added
    finally:
        new.close()
