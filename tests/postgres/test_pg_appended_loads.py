"""After another process's add, a PostgreSQL search reads only the memories' and entities'
rows added since into the vectors it caches (``dense_cache.load_scopes`` after the cached
matrix's last seq) when nothing was deleted or changed (``m014_rewrite_counts``); the grown
matrix is a whole load's, bit for bit, and any other write reads the whole scope again."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from pg_cache_helpers import ENTITY_POOL, add_from_another_process, opened, scores_as_servers
from search_reads_cases import seed

from linkmem import Memory
from linkmem.store.vectors import LoadedScope, MatrixCache, ScopeMatrix

pytestmark = pytest.mark.postgres


@pytest.fixture
def collection(pg_dsn_18: str) -> Iterator[tuple[str, Memory]]:
    """A seeded collection, and a reader whose caches hold alice's scope."""
    name = "a_" + uuid.uuid4().hex[:12]
    reader = seed(opened(pg_dsn_18, name, ENTITY_POOL))
    for _ in range(3):  # the entity vectors load from the second search at a version
        scores_as_servers(reader)
    yield name, reader
    reader.close()


def loads_of(cache: MatrixCache) -> list[LoadedScope]:
    seen: list[LoadedScope] = []
    original = cache._loader

    def recorded(scope_id: int, since: ScopeMatrix | None) -> LoadedScope:
        loaded = original(scope_id, since)
        seen.append(loaded)
        return loaded

    cache._loader = recorded
    return seen


def alice(memory: Memory, cache_of: str) -> ScopeMatrix:
    store: Any = memory.store
    scope_id = store.db.value(f"SELECT id FROM {store.t.scopes} WHERE user_id = 'alice'")
    entry = getattr(store, cache_of).matrices.latest(scope_id)
    assert entry is not None
    return entry


def assert_as_loaded_whole(dsn: str, collection: str, cache_of: str, grown: ScopeMatrix) -> None:
    fresh = opened(dsn, collection, ENTITY_POOL)
    try:
        for _ in range(3):
            scores_as_servers(fresh)
        whole = alice(fresh, cache_of)
        assert (whole.version, whole.rewrites) == (grown.version, grown.rewrites)
        assert whole.ids == grown.ids and whole.rowids.tolist() == grown.rowids.tolist()
        assert whole.matrix.tobytes() == grown.matrix.tobytes()
    finally:
        fresh.close()


@pytest.mark.parametrize("cache_of", ["dense_cache", "entity_vectors"])
def test_another_process_adds_are_read_alone(
    collection: tuple[str, Memory], pg_dsn_18: str, cache_of: str
) -> None:
    name, reader = collection
    before = alice(reader, cache_of)
    cache = getattr(reader.store, cache_of).matrices
    loads = loads_of(cache)
    added = add_from_another_process(pg_dsn_18, name, "Zorro Quixote brewed Lisbon coffee")
    for _ in range(3):
        runs = scores_as_servers(reader)
    assert added in [h[0] for run in runs for h in run]
    assert loads and all(load.after == int(before.rowids[-1]) for load in loads)
    assert sum(len(load.ids) for load in loads) in (1, 2)  # the memory; or Zorro Quixote, ...
    assert_as_loaded_whole(pg_dsn_18, name, cache_of, alice(reader, cache_of))


def test_a_delete_by_another_memory_reads_the_whole_scope(
    collection: tuple[str, Memory], pg_dsn_18: str
) -> None:
    name, reader = collection
    writer = opened(pg_dsn_18, name, ENTITY_POOL)
    try:
        gone = writer.get_all(user_id="alice", limit=1)["results"][0]["id"]
        writer.delete(gone)
        loads = loads_of(reader.store.dense_cache.matrices)  # type: ignore[attr-defined]
        runs = scores_as_servers(reader)
        assert all(gone not in [h[0] for h in run] for run in runs)
        assert loads[-1].after is None  # the rows after the last seq were not enough
        assert gone not in alice(reader, "dense_cache").ids
        writer.update(writer.get_all(user_id="alice", limit=1)["results"][0]["id"], "moon")
        scores_as_servers(reader)
        assert loads[-1].after is None
    finally:
        writer.close()
    assert_as_loaded_whole(pg_dsn_18, name, "dense_cache", alice(reader, "dense_cache"))
