"""One search on PostgreSQL: at most 4 round trips (counted on the wire; the connection is taken
without the pool's check), with exactly the answers of the plain, one-read-at-a-time path
(``linkmem.store.postgres.search_reads``); from the process's cached vectors
(``dense_cache``), the same answers up to float32 rounding of the cosines."""

from __future__ import annotations

import uuid
from functools import partial
from typing import Any

import pytest
from helpers import CapitalisedWordsExtractor
from pg_cache_helpers import RoundTripCounter
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from search_reads_cases import QUERIES, SMALL_POOL, all_results, plain_reads, results, seed

from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder
from linkmem.store.base import NewMemory
from linkmem.store.postgres import connection, search_near_cache, search_reads
from linkmem.types import MemoryRecord, Scope

pytestmark = pytest.mark.postgres


@pytest.fixture(params=["18", "16"])
def pg_dsn(request: pytest.FixtureRequest) -> str:
    return request.getfixturevalue(f"pg_dsn_{request.param}")


@pytest.fixture(params=[True, False], ids=["cached", "server"])
def cached(request: pytest.FixtureRequest) -> bool:
    """Whether searches may read the dense top-k and cosines from cached vectors."""
    return bool(request.param)


def same(fetched: list[Any], plain: list[Any], cached: bool) -> bool:
    """The plain answers: exactly, or with cached vectors the same memories in the same
    order, each score within float32 rounding of the server's cosines (they are shown to 6
    places; the last may differ)."""
    if not cached:
        return fetched == plain
    near = partial(pytest.approx, abs=2e-6)

    def approx(d: dict[str, Any]) -> dict[str, Any]:
        return {k: near(v) if isinstance(v, float) else v for k, v in d.items()}

    return fetched == [[(i, t, near(s), approx(d)) for i, t, s, d in run] for run in plain]


def seeded_memory(dsn: str, connections: int = 1, cached: bool = True, **retrieval: Any) -> Memory:
    memory = seed(
        Memory(
            store="postgres",
            postgres={"dsn": dsn, "pool_min": connections, "pool_max": connections},
            collection="t_" + uuid.uuid4().hex[:12],
            embedder=FakeEmbedder(),
            extractor=CapitalisedWordsExtractor(),
            retrieval={"entity_pool_max_links": 6, **retrieval},
        )
    )
    if not cached:
        memory.store.dense_cache.max_bytes = 0  # type: ignore[attr-defined]
    return memory


@pytest.mark.parametrize("retrieval", [{}, SMALL_POOL])
def test_same_results_as_plain_reads(pg_dsn: str, retrieval: dict[str, int], cached: bool) -> None:
    memory = seeded_memory(pg_dsn, cached=cached, **retrieval)
    try:
        fetched = all_results(memory)
        with plain_reads():
            plain = all_results(memory)
        assert same(fetched, plain, cached)
        assert any(len(r) > 3 for r in fetched)
    finally:
        memory.close()


@pytest.mark.parametrize("keyword_all", [search_reads.KEYWORD_ALL, 1])
def test_same_results_on_two_connections(
    pg_dsn: str, keyword_all: int, monkeypatch: pytest.MonkeyPatch, cached: bool
) -> None:
    """With a second pooled connection free, part of each batch runs on it; with fewer
    ``KEYWORD_ALL`` than matching memories, BM25 of the pool is read in the second batch
    (from the server's; with cached vectors BM25 comes from the cached postings)."""
    monkeypatch.setattr(search_reads, "KEYWORD_ALL", keyword_all)
    # The spare is free here, but on a loaded machine the pool may take longer than the 1 ms
    # a search waits for it (one failure at load ~5): wait as long as it takes.
    monkeypatch.setattr(connection, "SPARE_WAIT", 5.0)
    memory = seeded_memory(pg_dsn, connections=2, cached=cached, **SMALL_POOL)
    seen: list[tuple[bool, bool]] = []
    fetch_first = search_reads.SearchReads.fetch_first

    def recorded(self: search_reads.SearchReads) -> None:
        fetch_first(self)
        every = self._keyword_all or not self._terms or self._keyword_table is not None
        seen.append((self._side is not None, every))

    try:
        monkeypatch.setattr(search_reads.SearchReads, "fetch_first", recorded)
        fetched = all_results(memory)
        with plain_reads():
            plain = all_results(memory)
        assert same(fetched, plain, cached)
        assert all(side for side, _ in seen)
        assert any(not every for _, every in seen) == (keyword_all == 1)
    finally:
        memory.close()


def test_reads_outside_the_first_batches(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch, cached: bool
) -> None:
    """A search whose second hop reaches memories outside the first two batches reads its
    sources' rare entities and those memories in a third round trip, with the plain
    answers; nothing is read after it."""
    memory = seeded_memory(pg_dsn, cached=cached, **SMALL_POOL, hop_max_links=40)
    fetches: list[int] = []
    reached: list[int] = []
    fetch, fetch_rare = search_reads.SearchReads._fetch, search_reads.SearchReads._fetch_rare

    def counted(self: search_reads.SearchReads, ids: list[str], **kwargs: Any) -> None:
        fetches.append(len([i for i in ids if i not in self._fetched]))
        fetch(self, ids, **kwargs)

    def counted_rare(self: search_reads.SearchReads, ids: list[str]) -> None:
        before = len(self._fetched)
        fetch_rare(self, ids)
        reached.append(len(self._fetched) - before)

    try:
        monkeypatch.setattr(search_reads.SearchReads, "_fetch", counted)
        monkeypatch.setattr(search_reads.SearchReads, "_fetch_rare", counted_rare)
        fetched = [results(memory, q) for q in QUERIES]
        with plain_reads():
            plain = [results(memory, q) for q in QUERIES]
        assert same(fetched, plain, cached)
        assert len([n for n in fetches if n]) == len(QUERIES)  # the pool's batch only
        assert len(reached) == len(QUERIES) and sum(reached) > 0
    finally:
        memory.close()


def test_same_results_with_the_entity_index(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch, cached: bool
) -> None:
    """Over ``EXACT_ENTITIES`` entities, the nearest entities come from the HNSW index."""
    memory = seeded_memory(pg_dsn, cached=cached)
    try:
        monkeypatch.setattr(search_near_cache, "EXACT_ENTITIES", 2)
        monkeypatch.setattr("linkmem.store.postgres.entities.EXACT_ENTITIES", 2)
        fetched = [results(memory, q) for q in QUERIES]
        with plain_reads():
            plain = [results(memory, q) for q in QUERIES]
        assert same(fetched, plain, cached)
    finally:
        memory.close()


def test_at_most_four_round_trips(pg_dsn: str) -> None:
    memory = seeded_memory(pg_dsn, **SMALL_POOL)
    memory.close()
    parts = conninfo_to_dict(pg_dsn)
    proxy = RoundTripCounter(str(parts.get("host") or "127.0.0.1"), int(parts.get("port") or 5432))
    dsn = make_conninfo(pg_dsn, host="127.0.0.1", port=proxy.port)
    collection = memory.settings.collection
    memory = Memory(
        store="postgres",
        postgres={"dsn": dsn, "pool_min": 1, "pool_max": 1},
        collection=collection,
        embedder=FakeEmbedder(),
        extractor=CapitalisedWordsExtractor(),
        retrieval={"entity_pool_max_links": 6, **SMALL_POOL},
    )
    try:
        counts = {}
        for query in QUERIES:
            for name, case in [("default", {}), ("filtered", {"filters": {"n": 1}})]:
                before = proxy.count
                assert results(memory, query, **case) is not None
                counts[query, name] = proxy.count - before
        # no check of the connection (search_connections), at most 4 for the search
        assert max(counts.values()) <= 4, counts
        with plain_reads():
            before = proxy.count
            results(memory, QUERIES[0])
            assert proxy.count - before > 8  # what it saves
    finally:
        memory.close()
        proxy.close()


def test_links_among_gives_the_links_of_the_memories_entities(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hub boosts' read, answered from the pool's links and, for memories outside the
    pool, from the store: each hub's memories among those asked for."""
    memory = seeded_memory(pg_dsn, **SMALL_POOL)
    store: Any = memory.store
    everyone = store.memory_ids(Scope(user_id="alice"))
    checked: list[bool] = []
    links_among = search_reads.SearchReads.links_among

    def compared(self: search_reads.SearchReads, entity_ids: Any, memory_ids: Any) -> Any:
        for ids in (list(memory_ids), everyone):
            want: dict[str, set[str]] = {}
            for mid, records in store.entities_of_memories(ids).items():
                for entity in records:
                    if entity.id in set(entity_ids):
                        want.setdefault(entity.id, set()).add(mid)
            got = links_among(self, entity_ids, ids)
            checked.append({eid: set(mids) for eid, mids in got.items()} == want)
        return links_among(self, entity_ids, memory_ids)

    try:
        monkeypatch.setattr(search_reads.SearchReads, "links_among", compared)
        for query in QUERIES:
            results(memory, query)
        assert checked and all(checked)
    finally:
        memory.close()


def test_a_search_inside_a_transaction_rolls_back_with_it(pg_dsn: str) -> None:
    """A search inside the caller's open transaction reads on its connection, so it sees the
    transaction's writes, and queues no BEGIN/COMMIT of its own there: the transaction still
    rolls back whole (a COMMIT among the search's statements committed the writes before)."""
    memory = seeded_memory(pg_dsn)
    store: Any = memory.store
    at = "2026-01-01T00:00:00+00:00"
    text = "Lisbon coffee garden"
    record = MemoryRecord(str(uuid.uuid4()), text, Scope(user_id="alice"), {}, at, at)
    new = NewMemory(record, memory.embedder.embed_batch([text])[0], ["lisbon", "coffe"])
    before = store.count_memories()
    try:
        with pytest.raises(RuntimeError), store.transaction():
            store.put_memories([new])
            assert results(memory, text)[0][:2] == (record.id, text)
            raise RuntimeError("roll back")
        assert store.count_memories() == before
        assert store.get_memories([record.id]) == []
        assert record.id not in [r[0] for r in results(memory, text)]
    finally:
        memory.close()
