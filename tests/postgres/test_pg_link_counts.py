"""Each entity's link count is kept in ``<collection>_link_counts`` by triggers on the links
table (migration m003): exact after every kind of link write, and filled in when an existing
database (created before m003) is opened; that database also gets m004's BM25 indexes and
answers as before. Runs on PostgreSQL 18 and 16."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import numpy as np
import pytest

from linkmem.embed.fake import FakeEmbedder
from linkmem.rank.terms import terms
from linkmem.store.base import NewEntity, NewMemory
from linkmem.store.postgres import PostgresStore, schema
from linkmem.types import MemoryRecord, Scope

pytestmark = pytest.mark.postgres

DIM = 32
StoreFactory = Callable[..., PostgresStore]


@pytest.fixture(params=["18", "16"])
def pg_dsn(request: pytest.FixtureRequest) -> str:
    return request.getfixturevalue(f"pg_dsn_{request.param}")


@pytest.fixture
def make_store(pg_dsn: str) -> Iterator[StoreFactory]:
    opened: list[PostgresStore] = []

    def factory(collection: str) -> PostgresStore:
        store = PostgresStore(pg_dsn, DIM, collection)
        opened.append(store)
        return store

    yield factory
    for store in opened:
        store.close()


def collection_name() -> str:
    return "lc_" + uuid.uuid4().hex[:12]


def vector(text: str) -> np.ndarray:
    return FakeEmbedder(dim=DIM).embed_batch([text])[0]


def add_memories(store: PostgresStore, scope: Scope, texts: list[str]) -> list[str]:
    ids = [str(uuid.uuid4()) for _ in texts]
    at = "2024-01-01T00:00:00+00:00"
    store.put_memories(
        [
            NewMemory(MemoryRecord(i, t, scope, {}, at, at), vector(t), terms(t))
            for i, t in zip(ids, texts)
        ]
    )
    return ids


def add_entities(store: PostgresStore, scope: Scope, names: list[str]) -> dict[str, str]:
    """name -> entity id."""
    found = store.insert_entities(
        [NewEntity(str(uuid.uuid4()), n, n.lower(), "proper", scope, vector(n)) for n in names]
    )
    return {n: found[n.lower()] for n in names}


def kept_counts(store: PostgresStore) -> dict[str, int]:
    """What searches read: each entity's ``link_count`` as ``list_entities`` gives it."""
    return {e.id: e.link_count for e in store.list_entities(Scope(), "text", 10_000)}


def true_counts(store: PostgresStore) -> dict[str, int]:
    rows = store.db.rows(
        f"SELECT e.id, count(l.memory) FROM {store.t.entities} e "
        f"LEFT JOIN {store.t.links} l ON l.entity = e.id GROUP BY e.id"
    )
    return {eid: int(n) for eid, n in rows}


def assert_exact(store: PostgresStore) -> None:
    assert kept_counts(store) == true_counts(store)


def linked_store(store: PostgresStore) -> tuple[list[str], dict[str, str]]:
    """Six memories of one scope linked to three entities (Ana in all, Bo in some)."""
    scope = Scope("u")
    memories = add_memories(store, scope, [f"note {i}" for i in range(6)])
    entities = add_entities(store, scope, ["Ana", "Bo", "Cy"])
    pairs = [(m, entities["Ana"]) for m in memories]
    pairs += [(m, entities["Bo"]) for m in memories[:3]] + [(memories[5], entities["Cy"])]
    store.link(pairs)
    return memories, entities


def test_every_link_write_keeps_the_counts_exact(make_store):
    store = make_store(collection_name())
    memories, entities = linked_store(store)
    assert kept_counts(store)[entities["Ana"]] == 6
    assert_exact(store)
    store.link([(memories[0], entities["Ana"]), (memories[4], entities["Bo"])])  # 1 new
    assert kept_counts(store)[entities["Bo"]] == 4
    assert_exact(store)
    store.unlink_memories([memories[1]])
    assert_exact(store)
    store.delete_memories([memories[2], memories[3]])  # links go by cascade
    assert kept_counts(store)[entities["Ana"]] == 3
    assert_exact(store)
    store.merge_entities(entities["Ana"], entities["Cy"])
    assert entities["Cy"] not in kept_counts(store)
    assert_exact(store)
    store.unlink_memories([memories[5]])
    assert store.drop_orphan_entities(list(entities.values())) == 0
    store.unlink_memories(memories)
    assert store.drop_orphan_entities(list(entities.values())) == 2
    assert_exact(store)


def test_reset_leaves_no_counts(make_store):
    store = make_store(collection_name())
    linked_store(store)
    store.reset()
    assert store.db.value(f"SELECT count(*) FROM {store.t.link_counts}") == 0


def test_a_database_from_before_the_counts_gets_them_on_open(make_store, monkeypatch):
    collection = collection_name()
    with monkeypatch.context() as old_code:
        old_code.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:2])
        old = make_store(collection)
        assert old.applied_on_open == ["m001_initial", "m002_api_keys"]
        columns = [
            *schema.m005_context_terms(old.t, 0)[:3],
            schema.m006_posting_lengths(old.t, 0)[0],
            schema.m007_link_origin(old.t, 0)[0],
            schema.m010_memory_versions(old.t, 0)[0],
            schema.m011_search_versions(old.t, 0)[0],
            schema.m012_keyword_versions(old.t, 0)[0],
            schema.m013_entity_vector_versions(old.t, 0)[0],
            *(s for s in schema.m014_rewrite_counts(old.t, 0) if s.startswith("ALTER")),
            schema.m015_keyword_rewrites(old.t, 0)[0],
            *schema.m017_add_log(old.t, 0),
            *schema.m018_add_log_links(old.t, 0),
        ]
        for statement in columns:  # columns and tables today's writes use
            old.db.run(statement)
        memories, entities = linked_store(old)
        add_memories(old, Scope("u"), ["note about notes", "another note", "unrelated"])
        bm25_before = old.keyword_search(["note", "another"], Scope("u"), 10)
        old.close()
    new = make_store(collection)
    assert new.applied_on_open == [
        "m003_link_counts",
        "m004_bm25_covering",
        "m005_context_terms",
        "m006_posting_lengths",
        "m007_link_origin",
        "m008_memory_seq",
        "m009_links_by_entity",
        "m010_memory_versions",
        "m011_search_versions",
        "m012_keyword_versions",
        "m013_entity_vector_versions",
        "m014_rewrite_counts",
        "m015_keyword_rewrites",
        "m016_scope_seq",
        "m017_add_log",
        "m018_add_log_links",
    ]
    assert kept_counts(new) == {entities["Ana"]: 6, entities["Bo"]: 3, entities["Cy"]: 1}
    assert new.keyword_search(["note", "another"], Scope("u"), 10) == bm25_before
    assert len(bm25_before) == 8
    new.delete_memories([memories[0]])
    assert kept_counts(new)[entities["Ana"]] == 5
    assert_exact(new)


def test_check_finds_and_repairs_miscounted_links(make_store):
    store = make_store(collection_name())
    _, entities = linked_store(store)
    ana, bo = entities["Ana"], entities["Bo"]
    store.db.run(f"UPDATE {store.t.link_counts} SET n = n + 5 WHERE entity = %s", (ana,))
    store.db.run(f"DELETE FROM {store.t.link_counts} WHERE entity = %s", (bo,))
    report = store.audit()
    assert sorted(report.problems["stale_link_counts"]) == sorted([ana, bo])
    store.repair_bookkeeping()
    assert_exact(store)
    assert store.audit().problems["stale_link_counts"] == []
