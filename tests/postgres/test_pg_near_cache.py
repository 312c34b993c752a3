"""Searches on PostgreSQL take the nearest entities from the process's entity vectors
(``linkmem.store.postgres.search_near_cache``) only while they are current: a write of the
scope's entities, links or memories, by another ``Memory``, another process or SQL alone,
moves the scope's ``ent_version`` (its entity vectors: ``ev_version``, which links leave)
and the next search reads them again; a process's own inserted entities are appended to its
cache. Answers are the plain path's (exact below ``EXACT_ENTITIES``); a warm search sends no
near read and, when every other read is held too, no round trip after the scopes' versions."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from pg_cache_helpers import (
    ENTITY_POOL,
    counted_round_trips,
    in_another_process,
    opened,
    scores_as_servers,
    scores_of,
)
from search_reads_cases import QUERIES, seed

from linkmem import Memory
from linkmem.store.postgres import search_near_cache, search_reads
from linkmem.store.postgres.search_near_cache import NearDetails

pytestmark = pytest.mark.postgres


def recorded(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """Each search's reads, and the server's near reads sent."""
    seen: dict[str, list[Any]] = {"reads": [], "server_near": []}
    fetch_first = search_reads.SearchReads.fetch_first
    queue_near = search_near_cache.NearCacheReads._queue_near

    def first(self: Any) -> None:
        fetch_first(self)
        seen["reads"].append(self)

    def near(self: Any, conn: Any) -> Any:
        seen["server_near"].append(self)
        return queue_near(self, conn)

    monkeypatch.setattr(search_reads.SearchReads, "fetch_first", first)
    monkeypatch.setattr(search_near_cache.NearCacheReads, "_queue_near", near)
    return seen


def warmed(memory: Memory) -> None:
    for _ in range(3):  # vectors from the second search at the versions, rows from the third
        scores_as_servers(memory)


RETRIEVAL = ENTITY_POOL  # the ``two`` fixture's (conftest)


def test_warm_searches_send_no_near_read(two: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    reader, _ = two
    warmed(reader)
    seen = recorded(monkeypatch)
    scores_as_servers(reader)
    ours = seen["reads"][: len(QUERIES)]  # the cached path's, before the plain ones
    with_entities = [r for r in ours if len(r._entity_vectors)]
    assert with_entities and all(r._near_hits is not None for r in with_entities)
    assert not [r for r in seen["server_near"] if r in ours]
    assert any(hits for r in ours for hits in r._near)  # entities were found
    store: Any = reader.store
    assert store.entity_vectors.matrices.nbytes > 0 and store.near_details.nbytes > 0


def test_a_warm_search_is_one_round_trip(pg_dsn_18: str) -> None:
    collection = "n_" + uuid.uuid4().hex[:12]
    seed(opened(pg_dsn_18, collection, ENTITY_POOL)).close()
    with counted_round_trips(pg_dsn_18, collection, ENTITY_POOL) as (memory, proxy):
        for _ in range(4):
            scores_of(memory)
        counts = []
        for query in QUERIES:
            before = proxy.count
            memory.search(query, user_id="alice", top_k=8)
            counts.append(proxy.count - before)
        # The scopes' versions alone (before: and the nearest entities).
        assert counts == [1] * len(QUERIES), counts


def test_writes_are_seen_by_the_next_search(two: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    reader, writer = two
    warmed(reader)
    # Another Memory adds a memory naming a new entity close to a query's.
    added = writer.add("Ana Lopezz met Max in Rome", user_id="alice")["results"][0]["id"]
    scores_as_servers(reader)
    store: Any = writer.store
    t = store.t
    # SQL alone: an entity the queries find goes (its links with it).
    seen = recorded(monkeypatch)
    scores_as_servers(reader)
    found = {e for r in seen["reads"][: len(QUERIES)] for hits in r._near for e, _ in hits}
    assert found
    gone = sorted(found)[0]
    store.db.run(f"DELETE FROM {t.entities} WHERE id = %s", [gone])
    seen["reads"].clear()
    scores_as_servers(reader)
    after = {e for r in seen["reads"][: len(QUERIES)] for hits in r._near for e, _ in hits}
    assert gone not in after
    writer.delete(added)
    scores_as_servers(reader)


def test_a_write_from_another_process_is_seen_at_once(
    two: Any, pg_dsn_18: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader, _ = two
    warmed(reader)
    collection = reader.settings.collection
    new_entity = in_another_process(
        pg_dsn_18,
        collection,
        """
        m.add("Zorro Quixote went to Lisbon", user_id="alice")
        t = m.store.t
        for row in m.store.db.rows(f"SELECT id FROM {t.entities} WHERE text = 'Zorro Quixote'"):
            print(row[0])
        """,
    )
    seen = recorded(monkeypatch)
    found = reader.search("Zorro Quixote", user_id="alice", top_k=8)["results"]
    assert found
    first = seen["reads"][0]
    assert new_entity in {e for hits in first._near for e, _ in hits}
    scores_as_servers(reader)


def test_a_search_inside_a_transaction_reads_the_server(
    two: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader, _ = two
    warmed(reader)
    store: Any = reader.store
    seen = recorded(monkeypatch)
    with pytest.raises(RuntimeError), store.transaction():
        reader.search(QUERIES[1], user_id="alice", top_k=8)
        raise RuntimeError("roll back")
    assert seen["reads"] and all(r._near_hits is None for r in seen["reads"])
    assert seen["server_near"]


def test_near_rows_are_kept_at_their_versions_only() -> None:
    details = NearDetails(max_bytes=10**6)
    row = ("e1", "t", "k", "kind", "u", None, None, 1, None, ["m1"], [True])
    details.remember(1, (3, 4), {"e1": row}, (6, False))
    assert details.lookup(1, (3, 4), ["e1", "e2"], (6, False)) == {"e1": row}
    assert details.lookup(1, (4, 4), ["e1"], (6, False)) == {}
    assert details.lookup(1, (3, 4), ["e1"], (7, False)) == {}
    details.remember(1, (2, 4), {"e2": row}, (6, False))  # older: not kept
    assert details.lookup(1, (3, 4), ["e2"], (6, False)) == {}
    details.remember(1, (4, 4), {"e2": row}, (6, False))  # newer: replaces
    assert details.lookup(1, (4, 4), ["e1", "e2"], (6, False)) == {"e2": row}
    assert details.nbytes > 0


def scope_versions(memory: Memory) -> tuple[int, int]:
    """alice's scope's (id, ev_version)."""
    store: Any = memory.store
    rows = store.db.rows(f"SELECT id, ev_version FROM {store.t.scopes} WHERE user_id = 'alice'")
    return int(rows[0][0]), int(rows[0][1])


def test_own_adds_append_their_entities_and_no_search_reloads_them(
    two: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader, writer = two
    warmed(writer)
    scope_id, before = scope_versions(writer)
    vectors: Any = writer.store.entity_vectors
    assert vectors.held(scope_id, before) is not None
    added = writer.add("Zelda Quill met Ana in Porto", user_id="alice")
    assert scope_versions(writer)[1] == before + 1  # one insert of entities, links besides
    loads: list[Any] = []
    monkeypatch.setattr(vectors, "queue_load", lambda *a: loads.append(a))
    grown = vectors.held(scope_id, before + 1)
    assert grown is not None  # appended, not dropped
    seen = recorded(monkeypatch)
    scores_as_servers(writer)
    found = writer.search("Zelda Quill", user_id="alice", top_k=8)["results"]
    assert added["results"][0]["id"] in [h["id"] for h in found]
    assert not loads and seen["reads"][0]._near_hits is not None
    warmed(reader)  # the other Memory loads the scope's entity vectors from the server
    loaded = reader.store.entity_vectors.held(scope_id, before + 1)  # type: ignore[attr-defined]
    assert loaded is not None and loaded.ids == grown.ids
    assert loaded.rowids.tolist() == grown.rowids.tolist()
    assert loaded.matrix.tobytes() == grown.matrix.tobytes()  # bit for bit


def test_links_alone_leave_the_entity_vectors_version(two: Any) -> None:
    reader, _ = two
    store: Any = reader.store
    t = store.t
    _, before = scope_versions(reader)
    entity = store.db.rows(f"SELECT id FROM {t.entities} LIMIT 1")[0][0]
    store.db.run(f"DELETE FROM {t.links} WHERE entity = %s", [entity])
    assert scope_versions(reader)[1] == before
    store.db.run(f"UPDATE {t.entities} SET text = text || ' x' WHERE id = %s", [entity])
    assert scope_versions(reader)[1] == before + 1
