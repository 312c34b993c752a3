"""PostgreSQL parts of ``bench_scale.py``: store size, the two ways of reading a search (plain
and fetched ahead), the dense read with and without the exact scan of small scopes, and the
plans (EXPLAIN ANALYZE) of the dense read."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import linkmem.search
from linkmem import Memory
from linkmem.store.postgres import search_sql
from linkmem.store.postgres.memories import ef_search
from linkmem.store.postgres.sql import ann_settings, in_scopes, vector_literal
from linkmem.types import Scope

VECTOR = re.compile(r"'\[[^\]]*\]'::vector")
#: Plan lines worth keeping: the nodes and what they read.
PLAN_WORDS = ("Scan", "Filter", "Rows Removed", "Buffers", "Execution Time", "Limit", "Sort")


def store_size(db: Any) -> dict[str, Any]:
    return {
        "database_mb": round(db.value("SELECT pg_database_size(current_database())") / 2**20, 1),
        "shared_buffers": db.value("SHOW shared_buffers"),
        "server_pss_mb": server_pss_mb(db.value("SELECT pg_backend_pid()")),
    }


def server_pss_mb(backend_pid: int) -> float | None:
    """Proportional set size of the whole PostgreSQL server (postmaster and children)."""
    try:
        import psutil

        postmaster = psutil.Process(backend_pid).parent()
        procs = [postmaster, *postmaster.children(recursive=True)]
        return round(sum(p.memory_full_info().pss for p in procs) / 2**20, 1)
    except Exception:  # noqa: BLE001 - a missing metric must not stop the benchmark
        return None


def vacuum_analyze(db: Any, t: Any) -> None:
    """Planner statistics and visibility maps for every table of the collection, as
    autovacuum keeps them in a store that has been running for a while. Right after loading,
    a table may have no statistics yet (the planner then scanned all links instead of using
    their memory index) and no visibility map (each link count read the heap)."""
    for table in (t.scopes, t.mem, t.postings, t.entities, t.links, t.link_counts):
        db.run(f"VACUUM (ANALYZE) {table}")


@contextmanager
def plain_reads() -> Iterator[None]:
    """Searches read the store one read at a time (as before ``search_reads``)."""
    fetched = linkmem.search._reads

    @contextmanager
    def plain(store: Any, plan: Any) -> Iterator[Any]:
        yield store

    linkmem.search._reads = plain  # type: ignore[assignment]
    try:
        yield
    finally:
        linkmem.search._reads = fetched  # type: ignore[assignment]


@contextmanager
def hnsw_only() -> Iterator[None]:
    """Dense reads take the HNSW index whatever the scope's size (as before the exact scan of
    small scopes): the gate's ratio is 0."""
    ratio = search_sql.EXACT_SCAN_RATIO
    search_sql.EXACT_SCAN_RATIO = 0.0
    try:
        yield
    finally:
        search_sql.EXACT_SCAN_RATIO = ratio


def dense_plans(memory: Memory, query: str, user_ids: list[str], k: int) -> dict[str, list[str]]:
    """EXPLAIN ANALYZE of the dense top-``k`` read of ``query`` in each scope, with the exact
    scan of small scopes and without it (``hnsw_only``)."""
    store: Any = memory.store
    vector = vector_literal(memory.embedder.embed_batch([query])[0])
    plans = {}
    for user_id in user_ids:
        for name, ratio in (("gated", search_sql.EXACT_SCAN_RATIO), ("hnsw_only", 0.0)):
            plans[f"{user_id} {name}"] = _dense_plan(store, user_id, vector, k, ratio)
    return plans


def _dense_plan(store: Any, user_id: str, vector: str, k: int, ratio: float) -> list[str]:
    scope_ids = store._scope_ids(Scope(user_id=user_id))
    scope_sql, scope_args = in_scopes("m.scope_id", scope_ids)
    saved, search_sql.EXACT_SCAN_RATIO = search_sql.EXACT_SCAN_RATIO, ratio
    try:
        gate = search_sql.exact_scan_gate(store.t, scope_ids, k)
        statement, args = search_sql.dense_first(
            store.t, (f"{scope_sql} AND TRUE", scope_args), gate, vector, k
        )
    finally:
        search_sql.EXACT_SCAN_RATIO = saved
    with store.db.transaction() as conn:
        conn.execute(ann_settings(), (ef_search(k),))
        rows = conn.execute("EXPLAIN (ANALYZE, BUFFERS) " + statement, args).fetchall()
    lines = [VECTOR.sub("$query", r[0]) for r in rows]
    return [line for line in lines if any(word in line for word in PLAN_WORDS)]
