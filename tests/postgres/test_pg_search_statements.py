"""The ninth pass's statement forms of one search on PostgreSQL (``search_reads``): memory ids
sent as one JSON text, the nearest entities' memory lists read without seqs and ordered by
the pool's records, the pool's BM25 joined to its ids."""

from __future__ import annotations

from typing import Any

import pytest
from search_reads_cases import QUERIES, results
from test_pg_search_reads import pg_dsn, seeded_memory

from linkmem.store.postgres import search_reads
from linkmem.store.postgres.memories import bm25_given_statement, bm25_statement
from linkmem.store.postgres.sql import ID_ROWS, json_ids
from linkmem.types import Scope

pytestmark = pytest.mark.postgres
__all__ = ["pg_dsn"]  # the fixture of test_pg_search_reads

ODD_IDS = [
    "plain",
    'a "quoted", {braced} id',
    "back\\slash\\",
    "tab\tnew\nline",
    "ünïcödé ✓ 🙂",
    "  spaces  ",
    "NULL",
    "",
]


def test_json_ids_give_back_every_id_exactly(pg_dsn: str) -> None:
    memory = seeded_memory(pg_dsn)
    try:
        rows = memory.store.db.rows(f"SELECT * FROM {ID_ROWS}", [json_ids(ODD_IDS)])
        assert [r[0] for r in rows] == ODD_IDS
    finally:
        memory.close()


@pytest.mark.parametrize("hop_max_links", [3, 40])
def test_entity_lists_are_the_plain_ones(
    pg_dsn: str, hop_max_links: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The nearest entities' memories, in memory order, own or not: read without seqs when
    every list is of a specific entity (``hop_max_links`` 3 <= ``entity_pool_max_links`` 6,
    ordered by the pool's records), with them otherwise (40)."""
    memory = seeded_memory(pg_dsn, hop_max_links=hop_max_links)
    store: Any = memory.store
    compared: list[bool] = []
    unsequenced: list[bool] = []
    fetch_first = search_reads.SearchReads.fetch_first
    read_near = search_reads.SearchReads._read_near

    def near(self: search_reads.SearchReads, rows: list[Any]) -> Any:
        unsequenced.extend(row[11] is None for row in rows if row[12])  # seqs, ids
        return read_near(self, rows)

    def checked(self: search_reads.SearchReads) -> None:
        fetch_first(self)
        ids = sorted(self._links)
        for own_only in (False, True):
            want = store.memories_of_entities(ids, own_only=own_only)
            compared.append(self.memories_of_entities(ids, own_only=own_only) == want)

    try:
        monkeypatch.setattr(search_reads.SearchReads, "fetch_first", checked)
        monkeypatch.setattr(search_reads.SearchReads, "_read_near", near)
        for query in QUERIES:
            results(memory, query)
        assert compared and all(compared)
        assert unsequenced and all(unsequenced) == (hop_max_links == 3)
    finally:
        memory.close()


def test_pool_bm25_counts_each_memory_once(pg_dsn: str) -> None:
    """The pool's ids are joined to the postings: an id given twice is scored once."""
    memory = seeded_memory(pg_dsn)
    store: Any = memory.store
    try:
        scope_ids = store._scope_ids(Scope(user_id="alice"))
        ids = store.memory_ids(Scope(user_id="alice"))
        k1_b = (store.k1, store.b)
        terms = ["dog", "walk", "max"]
        first = bm25_statement(store.t, scope_ids, terms, None, None, 5, k1_b, stats=True)
        *_, stats = store.db.rows(*first)
        twice = ids[:30] + ids[:10]
        given = bm25_given_statement(store.t, scope_ids, stats[2:], None, twice, k1_b)
        plain = bm25_statement(store.t, scope_ids, terms, None, ids[:30], 30, k1_b)
        assert store.db.rows(*given) == store.db.rows(*plain) != []
    finally:
        memory.close()
