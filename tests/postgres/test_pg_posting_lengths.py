"""Postings carry their memory's lengths (migration m006): BM25 reads them instead of the
memory rows. A store from before m006 gets them on open with its BM25 unchanged; a posting
whose copy differs is found by ``check`` and repaired. Runs on PostgreSQL 18 and 16."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import numpy as np
import pytest

from linkmem.embed.fake import FakeEmbedder
from linkmem.filters import parse_filters
from linkmem.rank.terms import terms
from linkmem.store.base import NewMemory
from linkmem.store.postgres import PostgresStore
from linkmem.types import MemoryRecord, Scope

pytestmark = pytest.mark.postgres

DIM = 16
TEXTS = [
    "the dog walked in the park",
    "a dog and a cat",
    "coffee in the park with Ana",
    "Ana bought a dog bed",
    "nothing about it",
]
#: Neighbour words (``NewMemory.context``, 1/1000 units) on some memories.
CONTEXT = [{"cat": 500}, {}, {"dog": 250, "walk": 500}, {"coffe": 1000}, {"dog": 125}]
QUERY = ["dog", "park", "ana", "coffe"]


@pytest.fixture(params=["18", "16"])
def pg_dsn(request: pytest.FixtureRequest) -> str:
    return request.getfixturevalue(f"pg_dsn_{request.param}")


@pytest.fixture
def collection() -> str:
    return "pl_" + uuid.uuid4().hex[:12]


@pytest.fixture
def store(pg_dsn: str, collection: str) -> Iterator[PostgresStore]:
    opened = PostgresStore(pg_dsn, DIM, collection)
    embedder = FakeEmbedder(dim=DIM)
    at = "2024-01-01T00:00:00+00:00"
    rows = [
        NewMemory(
            MemoryRecord(f"m{i}", text, Scope("u"), {"n": i}, at, at),
            embedder.embed_batch([text])[0],
            terms(text),
            CONTEXT[i],
        )
        for i, text in enumerate(TEXTS)
    ]
    opened.put_memories(rows)
    yield opened
    opened.close()


def copies_match(store: PostgresStore) -> bool:
    t = store.t
    return not store.db.rows(
        f"SELECT 1 FROM {t.postings} p JOIN {t.mem} m ON m.id = p.memory "
        "WHERE p.doc_len != m.doc_len OR p.ctx_len != m.ctx_len"
    )


def same(found: list[list[tuple[str, float]]], want: list[list[tuple[str, float]]]) -> bool:
    """Same ids in the same order, scores equal up to the order of summation."""
    ids = [[mid for mid, _ in hits] for hits in found]
    scores = [[score for _, score in hits] for hits in found]
    return ids == [[mid for mid, _ in hits] for hits in want] and scores == [
        pytest.approx([score for _, score in hits], rel=1e-12) for hits in want
    ]


def searches(store: PostgresStore) -> list[list[tuple[str, float]]]:
    scope = Scope("u")
    return [
        store.keyword_search(QUERY, scope, 10),
        store.keyword_search(QUERY, scope, 2),
        store.keyword_search(QUERY, scope, 10, ids=["m1", "m2", "m4"]),
        store.keyword_search(QUERY, scope, 10, parse_filters({"n": {"gte": 2}})),
        store.keyword_search(QUERY, scope, 10, parse_filters({"n": {"lt": 3}}), ids=["m0", "m3"]),
    ]


def test_every_posting_carries_its_memorys_lengths_and_bm25_is_the_formula(store):
    assert copies_match(store)
    found = searches(store)
    assert [mid for mid, _ in found[0]] and len(found[1]) == 2
    assert {mid for mid, _ in found[2]} <= {"m1", "m2", "m4"}
    assert {mid for mid, _ in found[3]} <= {"m2", "m3", "m4"}
    assert {mid for mid, _ in found[4]} == {"m0"}
    assert found[1] == found[0][:2]


def test_a_store_from_before_m006_gets_the_lengths_on_open(store, pg_dsn, collection):
    before = searches(store)
    t = store.t
    key = t.index("_postings_pkey")
    for statement in [
        f"ALTER TABLE {t.postings} DROP CONSTRAINT {key}",
        f"ALTER TABLE {t.postings} DROP COLUMN doc_len, DROP COLUMN ctx_len",
        f"ALTER TABLE {t.postings} ADD CONSTRAINT {key} PRIMARY KEY (scope_id, term, memory) "
        "INCLUDE (tf, ctx)",
        "DELETE FROM linkmem_migrations WHERE name = 'm006_posting_lengths' "
        f"AND collection = '{collection}'",
    ]:
        store.db.run(statement)
    reopened = PostgresStore(pg_dsn, DIM, collection)
    try:
        assert reopened.applied_on_open == ["m006_posting_lengths"]
        assert copies_match(reopened)
        assert same(searches(reopened), before)
        assert not any(reopened.bookkeeping_problems().values())
    finally:
        reopened.close()


def test_check_finds_a_stale_copy_and_repair_restores_it(store):
    before = searches(store)
    store.db.run(f"UPDATE {store.t.postings} SET doc_len = doc_len + 3 WHERE memory = 'm2'")
    assert not same(searches(store), before)
    assert store.bookkeeping_problems()["stray_postings"] == ["m2"]
    store.repair_bookkeeping()
    assert not any(store.bookkeeping_problems().values()) and copies_match(store)
    assert same(searches(store), before)


def test_an_update_rewrites_the_copies(store):
    record = store.get_memories(["m1"])[0]
    new_terms = terms("a dog and a cat and a bird and more words here")
    store.update_memory(record, np.ones(DIM, dtype=np.float32), new_terms)
    assert copies_match(store)
    lengths = store.db.rows(f"SELECT DISTINCT doc_len FROM {store.t.postings} WHERE memory = 'm1'")
    assert lengths == [(len(new_terms),)]
