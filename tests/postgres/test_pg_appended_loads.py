"""After another process's add, a PostgreSQL search reads only the memories' and entities'
rows added since into the vectors it caches (``dense_cache.load_scopes`` after the cached
matrix's last seq), and the postings of the memories added since into the terms it caches
(``search_keyword_reads.postings_after``), when nothing was deleted or changed
(``m014_rewrite_counts``, ``m015_keyword_rewrites``); the grown matrix is a whole load's,
bit for bit, the scores the server's, and any other write reads the whole scope again."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from helpers import recorded_loads
from pg_cache_helpers import ENTITY_POOL, add_from_another_process, opened, scores_as_servers
from search_reads_cases import seed

from linkmem import Memory
from linkmem.store.postgres import search_reads
from linkmem.store.postgres.dense_cache import load_scopes
from linkmem.store.vectors import ScopeMatrix

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
    loads = recorded_loads(cache)
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
        loads = recorded_loads(reader.store.dense_cache.matrices)  # type: ignore[attr-defined]
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


def postings_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The postings statements each search sent: "terms" (of the query's terms), "after"
    (of the memories added since the cached ones)."""
    sent: list[str] = []
    queue, queue_catch_up = (
        search_reads.SearchReads._queue_postings,
        search_reads.SearchReads._queue_catch_up,
    )

    def counted(self: Any, conn: Any) -> Any:
        cursor = queue(self, conn)
        sent.append("terms" if cursor is not None else "none")
        return cursor

    def caught(self: Any, conn: Any, stats: Any) -> None:
        queue_catch_up(self, conn, stats)
        if stats.id in self._catch_ups:
            sent.append("after")

    monkeypatch.setattr(search_reads.SearchReads, "_queue_postings", counted)
    monkeypatch.setattr(search_reads.SearchReads, "_queue_catch_up", caught)
    return sent


def test_another_process_adds_catch_the_postings_up(
    collection: tuple[str, Memory], pg_dsn_18: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, reader = collection
    added = add_from_another_process(pg_dsn_18, name, "Lisbon coffee garden Rome deploy")
    sent = postings_reads(monkeypatch)
    runs = scores_as_servers(reader)  # BM25 included: the fused scores are the server's
    assert added in [h[0] for run in runs for h in run]
    assert sent[:2] == ["after", "none"]  # the first query's terms all caught up


def test_a_rewritten_posting_is_not_caught_up(
    collection: tuple[str, Memory], pg_dsn_18: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, reader = collection
    store: Any = reader.store
    store.db.run(f"UPDATE {store.t.postings} SET tf = tf + 5 WHERE term = 'lisbon'")
    add_from_another_process(pg_dsn_18, name, "Lisbon coffee garden again")
    sent = postings_reads(monkeypatch)
    scores_as_servers(reader)
    # The first search's catch-up is refused and the scope dropped; the next reads the terms
    # as in a scope never searched, and they are held again.
    assert sent[0] == "after" and "after" not in sent[2:] and "terms" in sent[2:]
    sent.clear()
    scores_as_servers(reader)
    assert "terms" not in sent and "after" not in sent


@pytest.mark.parametrize("rows", ["mem", "entities"])
def test_a_catch_up_seeks_the_scope_and_seq_index(
    collection: tuple[str, Memory], rows: str
) -> None:
    """The rows after a seq are read by one seek of ``m016_scope_seq``'s index (the planner's
    choice on a table this small is a scan, so scans are turned off to see what it can use)."""
    _, reader = collection
    store: Any = reader.store
    t, db = store.t, store.db
    table = getattr(t, rows)
    scope_id = db.value(f"SELECT id FROM {t.scopes} WHERE user_id = 'alice'")
    after = db.value(f"SELECT max(seq) - 1 FROM {table} WHERE scope_id = %s", (scope_id,))
    sql = load_scopes(t, table) if rows == "entities" else load_scopes(t)
    with db.transaction() as conn:
        db.execute(conn, "SET LOCAL enable_seqscan = off")
        plan = "\n".join(
            row[0] for row in db.execute(conn, "EXPLAIN " + sql, ([scope_id], [after]))
        )
        found = db.execute(conn, sql, ([scope_id], [after])).fetchall()
    suffix = "_scope_seq" if rows == "mem" else "_entities_scope_seq"
    assert f"Index Scan using {t.index(suffix).strip(chr(34))}" in plan
    assert "Index Cond: ((scope_id = s.id) AND (seq > a.after))" in plan
    assert [row[2] for row in found] == [after + 1]
