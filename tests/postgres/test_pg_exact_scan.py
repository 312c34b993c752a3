"""Dense reads scan a small scope exactly instead of walking the HNSW index through the rows
of every other scope (``search_sql.exact_scan_gate``), on PostgreSQL 18 and 16."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import numpy as np
import pytest

from linkmem.store.base import NewMemory
from linkmem.store.postgres import PostgresStore, search_sql
from linkmem.store.postgres.sql import in_scopes, vector_literal
from linkmem.types import MemoryRecord, Scope

pytestmark = pytest.mark.postgres

DIM = 16
K = 60
#: Rows per scope: "big" holds most of the table, "mid" and "tiny" are small against it.
SIZES = {"big": 3000, "mid": 200, "tiny": 20}


@pytest.fixture(params=["18", "16"])
def pg_dsn(request: pytest.FixtureRequest) -> str:
    return request.getfixturevalue(f"pg_dsn_{request.param}")


@pytest.fixture
def store(pg_dsn: str) -> Iterator[PostgresStore]:
    rng = np.random.default_rng(3)
    opened = PostgresStore(pg_dsn, DIM, "x_" + uuid.uuid4().hex[:12])
    clock = 0
    for user, size in SIZES.items():
        rows = []
        for vector in rng.standard_normal((size, DIM)).astype(np.float32):
            clock += 1
            at = f"2024-01-01T00:00:00.{clock:06d}+00:00"
            record = MemoryRecord(f"{user}-{clock}", "x", Scope(user_id=user), {}, at, at)
            rows.append(NewMemory(record, vector, ["x"]))
        opened.put_memories(rows)
    opened.db.run(f"ANALYZE {opened.t.mem}")
    yield opened
    opened.close()


def gate(store: PostgresStore, user: str | None) -> bool:
    scope_ids = store._scope_ids(Scope(user_id=user))
    return bool(store.db.value(*search_sql.exact_scan_gate(store.t, scope_ids, K)))


def test_small_scopes_are_scanned_exactly_and_the_big_one_through_the_index(store):
    assert gate(store, "tiny") and gate(store, "mid")
    assert not gate(store, "big")
    assert not gate(store, None)  # every scope: the whole table


def test_without_the_ratio_only_scopes_of_at_most_k_rows_are_scanned_exactly(store, monkeypatch):
    monkeypatch.setattr(search_sql, "EXACT_SCAN_RATIO", 0.0)
    assert gate(store, "tiny")
    assert not gate(store, "mid")


def test_a_gated_scope_gets_the_exact_top_k_and_never_reads_the_index(store):
    query = np.random.default_rng(4).standard_normal(DIM).astype(np.float32)
    hits = store.vector_search(query, Scope(user_id="mid"), K)

    assert [mid for mid, _ in hits] == exact_top_k(store, "mid", query)
    line = index_line(explain_dense(store, "mid", query))
    assert line == "" or "never executed" in line


def test_the_big_scope_still_reads_the_index(store):
    query = np.random.default_rng(5).standard_normal(DIM).astype(np.float32)
    hits = store.vector_search(query, Scope(user_id="big"), K)

    assert len(hits) == K
    assert "never executed" not in index_line(explain_dense(store, "big", query))


def exact_top_k(store: PostgresStore, user: str, query: np.ndarray) -> list[str]:
    rows = store.db.rows(
        f"SELECT m.id, m.embedding::text FROM {store.t.mem} m JOIN {store.t.scopes} s "
        "ON s.id = m.scope_id WHERE s.user_id = %s ORDER BY m.seq",
        (user,),
    )
    vectors = np.array([np.array(v.strip("[]").split(","), dtype=np.float64) for _, v in rows])
    sims = vectors @ query / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(query))
    order = sorted(range(len(rows)), key=lambda i: (-sims[i], i))
    return [rows[i][0] for i in order[:K]]


def explain_dense(store: PostgresStore, user: str, query: np.ndarray) -> str:
    scope_ids = store._scope_ids(Scope(user_id=user))
    scope_sql, scope_args = in_scopes("m.scope_id", scope_ids)
    statement, args = search_sql.dense_first(
        store.t,
        (scope_sql, scope_args),
        search_sql.exact_scan_gate(store.t, scope_ids, K),
        vector_literal(query),
        K,
    )
    rows = store.db.rows("EXPLAIN (ANALYZE, COSTS OFF) " + statement, args)
    return "\n".join(r[0] for r in rows)


def index_line(plan: str) -> str:
    """The plan's line for the HNSW index scan ('' when the plan has none)."""
    return next((line for line in plan.splitlines() if "_hnsw" in line), "")
