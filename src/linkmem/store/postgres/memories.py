"""Memories, postings, vector (HNSW) and keyword (SQL BM25) search on PostgreSQL."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from linkmem.errors import NotFound
from linkmem.filters import Node
from linkmem.rank import bm25
from linkmem.store.base import NewMemory, posting_rows
from linkmem.store.base import record_from_row as base_record_from_row
from linkmem.store.caches.keyword_postings import KeywordCache
from linkmem.store.postgres import search_sql as q
from linkmem.store.postgres import sql
from linkmem.store.postgres.connection import Database, one_connection, retried
from linkmem.store.postgres.dense_cache import DenseCache
from linkmem.store.postgres.sql import Tables, filter_sql, in_scopes, vector_literal
from linkmem.store.postgres.write_follow import WriteFollower, lock_with_versions
from linkmem.types import MemoryRecord, Scope

#: hnsw.ef_search bounds: pgvector's default and its maximum.
EF_SEARCH_MIN, EF_SEARCH_MAX = 40, 1000


def ef_search(k: int) -> str:
    """``hnsw.ef_search`` for a top-``k`` read."""
    return str(min(max(k, EF_SEARCH_MIN), EF_SEARCH_MAX))


def exact_scope_params(scope: Scope) -> tuple[str, str, str]:
    """A write scope as stored: unset ids are ''."""
    return tuple(v or "" for v in scope.as_tuple())  # type: ignore[return-value]


def record_from_row(row: Sequence[Any]) -> MemoryRecord:
    return base_record_from_row(row, row[2])


class MemoryTables:
    """The memory half of the PostgreSQL store."""

    db: Database
    t: Tables
    dense_cache: DenseCache
    keyword_cache: KeywordCache
    follower: WriteFollower
    k1: float = bm25.K1
    b: float = bm25.B

    # scopes ----------------------------------------------------------------------------------
    def _scope_id(self, scope: Scope, create: bool = True) -> int | None:
        """The id of exactly ``scope`` (created when missing and ``create``)."""
        params = exact_scope_params(scope)
        if not create:
            return self.db.value(sql.select_exact_scope(self.t), params)
        with self.db.transaction() as conn:
            self.db.execute(conn, sql.insert_scope(self.t), params)
            return self.db.execute(conn, sql.select_exact_scope(self.t), params).fetchone()[0]

    def _lock_scopes_of(
        self, conn: Any, table: str, ids: Sequence[str], appends: bool = False
    ) -> None:
        """Lock the scopes of these rows of ``table`` (see ``sql.lock_scopes``); a writer of
        more than ``appends`` spoils the transaction's carried caches (``write_follow``)."""
        if not appends:
            self.follower.spoil()
        self.db.execute(conn, sql.lock_scopes_of(self.t, table), (list(ids),))

    def _scope_ids(self, scope: Scope) -> list[int] | None:
        """Ids of the scopes a read of ``scope`` covers (subset match); None: all scopes."""
        items = scope.items()
        if not items:
            return None
        rows = self.db.rows(sql.select_scopes(self.t, [k for k, _ in items]), [v for _, v in items])
        return [r[0] for r in rows]

    def _memory_where(
        self, scope_ids: list[int] | None, filters: Node | None, ids: Sequence[str] | None = None
    ) -> tuple[str, list[Any]]:
        scope_sql, args = in_scopes("m.scope_id", scope_ids)
        row_sql, row_args = _row_where(filters, ids)
        return f"{scope_sql} AND {row_sql}", [*args, *row_args]

    # writes ----------------------------------------------------------------------------------
    @retried
    def put_memories(self, memories: Sequence[NewMemory]) -> None:
        groups = _group_by_scope(memories)
        with self.db.transaction() as conn:
            scope_ids = {s: self._scope_id(s) for s in sorted(groups, key=exact_scope_params)}
            locked = self.db.execute(
                conn, lock_with_versions(self.t), (sorted(scope_ids.values()),)
            )
            self.follower.locked(locked.fetchall())
            for scope in sorted(groups, key=scope_ids.__getitem__):
                self._put_scope_group(conn, scope_ids[scope], groups[scope])

    def _put_scope_group(self, conn: Any, scope_id: int | None, group: list[NewMemory]) -> None:
        rows = [
            (
                m.record.id,
                m.record.text,
                json.dumps(m.record.metadata),
                m.record.role,
                m.record.actor_id,
                m.record.created_at,
                m.record.updated_at,
                len(m.terms),
                sum(m.context.values()),
                vector_literal(m.vector),
            )
            for m in group
        ]
        seqs = dict(
            self.db.execute(
                conn,
                sql.insert_memories(self.t),
                [scope_id, *(list(column) for column in zip(*rows))],
            ).fetchall()
        )
        per_memory = [posting_rows(m.terms, m.context) for m in group]
        wrote = self._insert_postings(conn, scope_id, group, per_memory)
        own, ctx = sum(len(m.terms) for m in group), sum(r[8] for r in rows)
        stats = (len(group), own, ctx, scope_id)
        after = tuple(self.db.execute(conn, sql.add_scope_stats(self.t), stats).fetchone())
        self.dense_cache.follow(scope_id, after[1], group, seqs)
        self._follow_keywords(scope_id, (after[0] - wrote, after[1] - 1), after, per_memory)

    def _follow_keywords(
        self,
        scope_id: int,
        before: tuple[int, int],
        after: tuple[int, int],
        per_memory: list[list[tuple[str, int, int, int, int]]],
    ) -> None:
        """Once the write commits, append the new memories' postings to the cache when it
        holds the scope at the versions ``(kw_version, mem_version)`` before this write (as
        ``dense_cache.follow`` appends their vectors); else drop the scope from it."""
        cache = self.keyword_cache
        if not cache.holds(scope_id, before):
            cache.drop(scope_id)
            return
        self.db.after_commit(lambda: cache.extend(scope_id, (before, after), per_memory))

    def _insert_postings(
        self,
        conn: Any,
        scope_id: int | None,
        docs: list[NewMemory],
        per_memory: list[list[tuple[str, int, int, int, int]]] | None = None,
    ) -> int:
        """Write the postings of ``docs`` (``posting_rows`` of each, when given) in one
        statement; how many statements that was (0 or 1: ``kw_version``'s step)."""
        rows = per_memory or [posting_rows(m.terms, m.context) for m in docs]
        postings = [
            (term, m.record.id, tf, ctx, doc_len, ctx_len)
            for m, memory_postings in zip(docs, rows, strict=True)
            for term, tf, doc_len, ctx, ctx_len in memory_postings
        ]
        if not postings:
            return 0
        columns = [list(column) for column in zip(*postings)]
        self.db.execute(conn, sql.insert_postings(self.t), (scope_id, *columns))
        return 1

    @retried
    def update_memory(
        self, record: MemoryRecord, vector: np.ndarray | None, terms: list[str] | None
    ) -> None:
        with self.db.transaction() as conn:
            self._lock_scopes_of(conn, self.t.mem, [record.id])
            row = self.db.execute(conn, sql.lock_memory(self.t), (record.id,)).fetchone()
            if row is None:
                raise NotFound(f"no memory with id {record.id!r} to update")
            scope_id, old_len, old_ctx = row
            self.db.execute(
                conn,
                sql.update_memory_fields(self.t),
                (record.text, json.dumps(record.metadata), record.updated_at, record.id),
            )
            if vector is not None:
                self.db.execute(
                    conn, sql.update_memory_vector(self.t), (vector_literal(vector), record.id)
                )
            if terms is not None:  # new own terms; the context terms are kept
                gone = self.db.execute(conn, sql.delete_postings_of(self.t), (record.id,))
                context = {term: ctx for term, ctx in gone if ctx > 0}
                new = NewMemory(record, np.zeros(0), terms, context)
                self._insert_postings(conn, scope_id, [new])
                ctx_len = sum(context.values())
                self.db.execute(conn, sql.update_doc_len(self.t), (len(terms), ctx_len, record.id))
                stats = (0, len(terms) - old_len, ctx_len - old_ctx, scope_id)
                self.db.execute(conn, sql.add_scope_stats(self.t), stats)

    @retried
    def delete_memories(self, ids: Sequence[str]) -> None:
        if not ids:
            return
        with self.db.transaction() as conn:
            self._lock_scopes_of(conn, self.t.mem, ids)
            self.db.execute(conn, sql.delete_memories(self.t), (list(ids),))

    # reads -----------------------------------------------------------------------------------
    def get_memories(self, ids: Sequence[str]) -> list[MemoryRecord]:
        if not ids:
            return []
        rows = self.db.rows(sql.select_memories_by_id(self.t), (list(ids),))
        found = {r[0]: record_from_row(r) for r in rows}
        return [found[i] for i in ids if i in found]

    def lock_memories(self, ids: Sequence[str]) -> list[MemoryRecord]:
        """``get_memories`` with the rows locked (their scopes first) until the transaction
        ends."""
        if not ids:
            return []
        with self.db.transaction() as conn:
            self._lock_scopes_of(conn, self.t.mem, ids)
            rows = self.db.execute(conn, sql.lock_memories_by_id(self.t), (list(ids),))
            found = {r[0]: record_from_row(r) for r in rows}
        return [found[i] for i in ids if i in found]

    @one_connection
    def list_memories(
        self, scope: Scope, filters: Node | None, limit: int, offset: int = 0
    ) -> list[MemoryRecord]:
        scope_ids = self._scope_ids(scope)
        if scope_ids == []:
            return []
        where, args = self._memory_where(scope_ids, filters)
        rows = self.db.rows(sql.list_memories(self.t, where), [*args, limit, offset])
        return [record_from_row(r) for r in rows]

    @one_connection
    def memory_ids(self, scope: Scope) -> list[str]:
        scope_ids = self._scope_ids(scope)
        if scope_ids == []:
            return []
        where, args = self._memory_where(scope_ids, None)
        return [r[0] for r in self.db.rows(sql.memory_ids(self.t, where), args)]

    @one_connection
    def count_memories(self, scope: Scope | None = None) -> int:
        scope_ids = self._scope_ids(scope or Scope())
        if scope_ids == []:
            return 0
        where, args = self._memory_where(scope_ids, None)
        return int(self.db.value(sql.count_memories(self.t, where), args))

    # retrieval -------------------------------------------------------------------------------
    @one_connection
    def vector_search(
        self,
        vector: np.ndarray,
        scope: Scope,
        k: int,
        filters: Node | None = None,
        ids: Sequence[str] | None = None,
    ) -> list[tuple[str, float]]:
        if k <= 0 or (ids is not None and not ids):
            return []
        scope_ids = self._scope_ids(scope)
        if scope_ids == []:
            return []
        where, args = self._memory_where(scope_ids, filters, ids)
        query = vector_literal(vector)
        with self.db.transaction() as conn:
            if ids is None:
                # HNSW, or an exact scan of a small scope or when HNSW finds fewer than k
                # rows (the filter keeps fewer, or the scan hit hnsw.max_scan_tuples first).
                self.db.execute(conn, sql.ann_settings(), (ef_search(k),))
                gate = q.exact_scan_gate(self.t, scope_ids, k)
                statement = q.dense_first(self.t, (where, args), gate, query, k)
                found = self.db.execute(conn, *statement)
            else:
                found = self.db.execute(conn, sql.vector_exact(self.t, where), [query, *args, k])
            return [(mid, float(sim)) for mid, sim in found]

    def _ann(
        self, conn: Any, where: str, args: list[Any], query: str, k: int
    ) -> list[tuple[str, float]]:
        """``vector_ann`` alone: the HNSW index's answer, with no exact fallback."""
        self.db.execute(conn, sql.ann_settings(), (ef_search(k),))
        found = self.db.execute(conn, sql.vector_ann(self.t, where), [query, *args, query, k])
        return [(mid, float(sim)) for mid, sim in found]

    @one_connection
    def keyword_search(
        self,
        terms: Sequence[str],
        scope: Scope,
        k: int,
        filters: Node | None = None,
        ids: Sequence[str] | None = None,
    ) -> list[tuple[str, float]]:
        terms = list(dict.fromkeys(terms))
        if not terms or k <= 0 or (ids is not None and not ids):
            return []
        scope_ids = self._scope_ids(scope)
        if scope_ids == []:
            return []
        statement = bm25_statement(self.t, scope_ids, terms, filters, ids, k, (self.k1, self.b))
        return [(mid, float(score)) for mid, score in self.db.rows(*statement) if score > 0]


def bm25_statement(
    t: Tables,
    scope_ids: list[int] | None,
    terms: list[str],
    filters: Node | None,
    ids: Sequence[str] | None,
    k: int,
    k1_b: tuple[float, float],
    stats: bool = False,
) -> tuple[str, list[Any]]:
    """``sql.bm25`` with its arguments: the top ``k`` of the scopes (of ``ids`` only when
    given) by the BM25 of ``terms`` (unique), through the metadata ``filters``; ``stats``:
    and a last row of the statistics (``sql.bm25``)."""
    s_sql, s_args = in_scopes("s.id", scope_ids)
    p_sql, p_args = in_scopes("p.scope_id", scope_ids)
    f_sql, f_args = filter_sql(filters)
    statement = sql.bm25(t, s_sql, p_sql, f_sql, ids is not None, *k1_b, stats=stats)
    id_args = [] if ids is None else [list(ids)]
    return statement, [*s_args, *p_args, terms, *id_args, *f_args, k]


def bm25_given_statement(
    t: Tables,
    scope_ids: list[int] | None,
    stats: Sequence[Any],
    filters: Node | None,
    ids: Sequence[str] | tuple[str, list[Any]],
    k1_b: tuple[float, float],
) -> tuple[str, list[Any]]:
    """``sql.bm25_given`` with its arguments: the scores of ``ids`` (all of them; a list, or
    a subquery with its arguments) from the ``stats`` row of ``bm25_statement`` for the same
    scopes, terms and filters."""
    terms, idfs, n, total = stats
    p_sql, p_args = in_scopes("p.scope_id", scope_ids)
    f_sql, f_args = filter_sql(filters)
    if isinstance(ids, tuple):  # LIMIT NULL: no limit
        sub, sub_args = ids
        statement = sql.bm25_given(t, p_sql, f_sql, *k1_b, ids=f"ARRAY({sub})")
        return statement, [n, total, terms, idfs, *p_args, terms, *sub_args, *f_args, None]
    statement = sql.bm25_given(t, p_sql, f_sql, *k1_b)
    unique = list(dict.fromkeys(ids))  # joined to the postings: each once
    args = [n, total, terms, idfs, *p_args, terms, sql.json_ids(unique), *f_args, len(unique)]
    return statement, args


def _row_where(filters: Node | None, ids: Sequence[str] | None) -> tuple[str, list[Any]]:
    """Metadata filter and id restriction on the memory row ``m``."""
    where, args = filter_sql(filters)
    if ids is not None:
        where += " AND m.id = ANY(%b::text[])"  # binary: no per-id quoting in the client
        args = [*args, list(ids)]
    return where, args


def _group_by_scope(memories: Sequence[NewMemory]) -> dict[Scope, list[NewMemory]]:
    groups: dict[Scope, list[NewMemory]] = defaultdict(list)
    for m in memories:
        groups[m.record.scope].append(m)
    return groups
