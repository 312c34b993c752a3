"""A search's BM25 from postings cached in the process (PostgreSQL), as on SQLite.

The server's BM25 top-k reads and sorts every posting of the query's terms on each search (in
the 10k-memory scope of ``bench_scale`` ~1,500 memories match a query, each term's postings
read by the key). Here each searched scope's postings of the terms it was searched for are kept
in the store's ``caches.keyword_postings.KeywordCache``, as rows of the scope's cached vector
matrix (``dense_cache``), at the scope's ``(kw_version, mem_version)``: every statement
writing a scope's postings, by any process, moves ``kw_version`` on in its own transaction
(``version_triggers.m012_keyword_versions``; adding, deleting or changing a memory's text
also moves ``mem_version``). A search reads the versions and the scopes' BM25 statistics
(``n_docs``, ``total_len``, ``ctx_total``) in its first round trip (``search_sql.scope_sizes``);
when its dense reads come from the process (``search_dense_reads``), the statement that would
read the BM25 top-k reads, in round trip 1, only the postings of the terms the cache lacks with
the scopes' versions (one statement, one snapshot; none when all are held), and every memory's
score is one ``bincount`` over the scopes' rows (``keyword_postings.bm25_of_rows``): the top-k
and the pool's scores are lookups, and the server computes none.

The scores are the SQL's (``sql.bm25``, ``sql.bm25_given``): N and the average length summed
over the searched scopes, each term's df its postings there, the same float8 expressions, each
memory's terms summed in term order (``bm25_given``'s; the top-k statement sums in its plan's,
so its scores may differ in the last bits), ties at the cut by memory id. When the postings
read and the matrix are not at the versions of round trip 0 (a write landed between), or the
scopes' total length is 0 (the SQL's other branch), the search asks the store's own
``keyword_search`` instead (a round trip of its own, rarely). A metadata filter, a search
inside a transaction and a scope over the vector cache's budget keep the server's BM25.

A process's own adds are appended (``memories.MemoryTables._follow_keywords``: an add moves
``kw_version`` and ``mem_version`` by one each, whatever entities it links), as SQLite's
are. After another process's writes, a search of a scope whose terms are held at older
versions reads, in the same round trip, the postings of the memories after the last held row
(``postings_after``) and appends them (``KeywordCache.catch_up``) when the scope's rewrite
counts are those the terms were read at (``m014``, ``m015``: then the adds are all that
changed); otherwise it drops the scope's terms, asks the server's BM25 once, and the next
search reads the terms again.

Locking: the cache's lock is a leaf (``scope_budget``): taken with no other lock held, never
while reading the store.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from linkmem.rank.neighbour_terms import CONTEXT_SCALE
from linkmem.store.caches.keyword_postings import (
    KeywordScores,
    ScopeTerms,
    TermPostings,
    bm25_of_rows,
)
from linkmem.store.postgres.sql import Tables
from linkmem.store.prefetch import SearchPlan
from linkmem.store.vectors import ScopeMatrix
from linkmem.types import Scope

Ranked = list[tuple[str, float]]
#: A scope's (ent_version, mem_version), or its (kw_version, mem_version).
Versions = tuple[int, int]


class ScopeStats(NamedTuple):
    """A searched scope as round trip 0 reads it (``search_sql.scope_sizes``)."""

    id: int
    versions: Versions  # (ent_version, mem_version): the entity and record caches'
    n_docs: int
    total: float  # BM25's total length (``scope_total``)
    keyword_versions: Versions  # (kw_version, mem_version): the postings cache's
    entity_vectors_version: int  # ev_version: the entity vectors cache's

    @classmethod
    def of_row(cls, row: Sequence[Any]) -> ScopeStats:
        """From a row of ``search_sql.scope_sizes``."""
        total = scope_total(row[4], row[5])
        return cls(row[0], (row[3], row[2]), row[1], total, (row[6], row[2]), row[7])


#: A postings read: each scope of ``%(scopes)s`` with its versions and rewrite counts, then a
#: term and its postings' memories, counts and lengths (arrays); one row of NULLs after the
#: counts for a scope with none. One statement: one snapshot.
_POSTINGS = (
    "SELECT s.id, s.kw_version, s.mem_version, s.mem_rewrites, s.kw_rewrites, p.term, "
    "p.memories, p.tf, p.doc_len, p.ctx, p.ctx_len FROM {scopes} s LEFT JOIN LATERAL (SELECT "
    "x.term, array_agg(x.memory) AS memories, array_agg(x.tf) AS tf, array_agg(x.doc_len) AS "
    "doc_len, array_agg(x.ctx) AS ctx, array_agg(x.ctx_len) AS ctx_len {source} GROUP BY "
    "x.term) p ON TRUE WHERE s.id = ANY(%(scopes)s::bigint[])"
)


def postings_of_terms(t: Tables) -> str:
    """``_POSTINGS`` of the terms of ``%(terms)s``."""
    source = f"FROM {t.postings} x WHERE x.scope_id = s.id AND x.term = ANY(%(terms)s::text[])"
    return _POSTINGS.format(scopes=t.scopes, source=source)


def postings_after(t: Tables) -> str:
    """``_POSTINGS`` of every term, of the memories with a seq above ``%(after)s`` alone: the
    postings the adds since brought (``KeywordCache.catch_up``)."""
    source = (
        f"FROM {t.mem} m JOIN {t.postings} x ON x.memory = m.id AND x.scope_id = s.id "
        "WHERE m.scope_id = s.id AND m.seq > %(after)s"
    )
    return _POSTINGS.format(scopes=t.scopes, source=source)


class KeywordSearchReads:
    """``SearchReads``' BM25 from the postings cache (a mixin: the fetching is
    ``SearchReads``')."""

    _store: Any
    _plan: SearchPlan
    _t: Tables
    _terms: list[str]
    _scope_ids: list[int] | None
    #: Per scope of ``_scope_ids`` (round trip 0).
    _scope_stats: list[ScopeStats]
    _keyword_top: Ranked | None
    # The scores of every memory of the scopes (None: the server's BM25, or the store's).
    _keyword_table: KeywordScores | None = None
    # The cached postings of the search's terms per scope (looked up in round trip 1).
    _held_postings: dict[int, dict[str, TermPostings]]
    # Per scope held at older versions, its postings added since, read (``CatchUp``).
    _catch_ups: dict[int, CatchUp]
    # True: the cached path failed for this search; every BM25 read asks the store.
    _keyword_to_store: bool = False

    def _queue_postings(self, conn: Any) -> Any | None:
        """Look the search's terms up in the cache; queue the read of those it lacks (None:
        all held), and of a scope held at older versions the postings added since
        (``_queue_catch_up``)."""
        cache = self._store.keyword_cache
        terms = self._terms
        self._held_postings = {
            s.id: cache.lookup(s.id, s.keyword_versions, terms) for s in self._scope_stats
        }
        self._catch_ups = {}
        for stats in self._scope_stats:
            if not self._held_postings[stats.id]:
                self._queue_catch_up(conn, stats)
        missing = sorted(
            t
            for t in set(terms)
            if any(
                t not in held and t not in self._catching_up(scope_id)
                for scope_id, held in self._held_postings.items()
            )
        )
        if not missing:
            return None
        args = {"terms": missing, "scopes": self._scope_ids}
        return conn.execute(postings_of_terms(self._t), args, binary=True)

    def _queue_catch_up(self, conn: Any, stats: ScopeStats) -> None:
        """Of a scope whose cached terms are at older versions with known rewrite counts, and
        whose cached matrix starts with their rows, queue the postings of the memories after
        them (``CatchUp``)."""
        base = self._store.keyword_cache.older(stats.id, stats.keyword_versions)
        matrix = self._store.dense_cache.matrices.latest(stats.id)
        if base is None or base.rewrites is None or matrix is None or not base.n_rows:
            return
        if matrix.rewrites != base.rewrites[0] or len(matrix.ids) < base.n_rows:
            return
        after = int(matrix.rowids[base.n_rows - 1])
        args = {"after": after, "scopes": [stats.id]}
        cursor = conn.execute(postings_after(self._t), args, binary=True)
        self._catch_ups[stats.id] = CatchUp(base, after, cursor)

    def _catching_up(self, scope_id: int) -> Collection[str]:
        catch_up = self._catch_ups.get(scope_id)
        return catch_up.base.terms if catch_up is not None else ()

    def _take_postings(self, rows: list[Sequence[Any]] | None, matrices: list[ScopeMatrix]) -> None:
        """Every memory's BM25 from the held postings and the rows read (``_keyword_top``,
        ``_keyword_table``); on a version mismatch the store's BM25 instead."""
        cache = self._store.keyword_cache
        read = _by_scope(rows or [])
        postings: list[dict[str, TermPostings]] = []
        for stats, matrix in zip(self._scope_stats, matrices, strict=True):
            scope_id, versions = stats.id, stats.keyword_versions
            if matrix.version != versions[1]:
                return self._to_store()
            held = dict(self._held_postings[scope_id])
            if scope_id in self._catch_ups:
                caught = self._caught_up(stats, matrix)
                if caught is None:  # rewritten meanwhile: the next search reads the terms
                    cache.drop(scope_id)
                    return self._to_store()
                held.update(caught)
            wanted = [t for t in self._terms if t not in held]
            if wanted:
                at, rewrites, columns = read.get(scope_id, (None, None, {}))
                found = _term_postings(matrix, wanted, columns) if at == versions else None
                if found is None:
                    return self._to_store()
                cache.remember(scope_id, versions, len(matrix.ids), found, rewrites)
                held.update(found)
            postings.append(held)
        table = self._scores(postings, matrices)
        if table is None:
            return self._to_store()
        self._keyword_table = table
        self._keyword_top = table.top(self._plan.pool)

    def _caught_up(self, stats: ScopeStats, matrix: ScopeMatrix) -> dict[str, TermPostings] | None:
        """The cached terms of the scope brought to the search's versions by the postings
        read after them; None when those were not read at the search's versions and the
        cached terms' rewrite counts, or the matrix does not start with the cached rows."""
        catch_up = self._catch_ups[stats.id]
        base = catch_up.base
        at, rewrites, columns = _by_scope(catch_up.cursor.fetchall()).get(stats.id, _NONE)
        if (at, rewrites) != (stats.keyword_versions, base.rewrites):
            return None
        if matrix.rewrites != base.rewrites[0] or len(matrix.ids) < base.n_rows:
            return None
        if int(matrix.rowids[base.n_rows - 1]) != catch_up.after:
            return None
        added = _term_postings(matrix, [t for t in columns if t in base.terms], columns)
        if added is None:
            return None
        cache = self._store.keyword_cache
        held = cache.catch_up(stats.id, base, at, len(matrix.ids), added)
        return {t: held[t] for t in self._terms if t in held} if held is not None else None

    def _scores(
        self, postings: list[dict[str, TermPostings]], matrices: list[ScopeMatrix]
    ) -> KeywordScores | None:
        """``sql.bm25``'s scores of every memory of the scopes (None: a total length of 0)."""
        n = float(sum(stats.n_docs for stats in self._scope_stats))
        total = float(sum(stats.total for stats in self._scope_stats))
        if n <= 0 or total <= 0:
            return None
        df = {t: sum(len(p[t].rows) for p in postings if t in p) for t in self._terms}
        idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items() if d}
        k1, b = self._store.k1, self._store.b
        scores = []
        for held, matrix in zip(postings, matrices, strict=True):
            weighted = [(idf[t], held[t]) for t in sorted(idf) if t in held]
            scores.append(bm25_of_rows(weighted, len(matrix.ids), total / n, k1, b))
        return KeywordScores(matrices, scores, ties_by_id=True)

    def _to_store(self) -> None:
        self._keyword_to_store = True
        self._keyword_top = None

    def _cached_keyword(
        self, terms: Sequence[str], scope: Scope, k: int, ids: Sequence[str] | None
    ) -> Ranked:
        """``keyword_search`` of the plan's terms and scope from the table, or the store."""
        table = self._keyword_table
        if table is None:
            return self._store.keyword_search(terms, scope, k, self._plan.filters, ids)
        if ids is None:
            return table.top(k)
        return table.of(ids, k) if k > 0 and ids else []


@dataclass(frozen=True)
class CatchUp:
    """A scope's cached terms at older versions (``base``) and the read, queued, of the
    postings of its memories after seq ``after`` (its last cached row's)."""

    base: ScopeTerms
    after: int
    cursor: Any


#: A postings read of a scope: its (kw_version, mem_version), its (mem_rewrites,
#: kw_rewrites) and its term -> (memories, tf, doc_len, ctx, ctx_len).
ScopeRead = tuple[Versions | None, tuple[int, int] | None, dict[str, Sequence[Any]]]
_NONE: ScopeRead = (None, None, {})


def _by_scope(rows: Sequence[Sequence[Any]]) -> dict[int, ScopeRead]:
    """The rows of a postings read (``_POSTINGS``) by scope."""
    read: dict[int, ScopeRead] = {}
    for row in rows:
        _, _, terms = read.setdefault(row[0], ((row[1], row[2]), (row[3], row[4]), {}))
        if row[5] is not None:
            terms[row[5]] = row[6:]
    return read


def scope_total(total_len: int, ctx_total: int) -> float:
    """A scope's total length as ``sql.bm25``'s statistics sum it (own plus context)."""
    return total_len + ctx_total * (1 / CONTEXT_SCALE)


def _term_postings(
    matrix: ScopeMatrix, terms: list[str], columns: dict[str, Sequence[Any]]
) -> dict[str, TermPostings] | None:
    """The postings read of ``terms`` (none: an empty array), each memory as its row in
    ``matrix``; None when a memory is not there."""
    row_of = matrix.row_of
    empty = np.zeros(0, dtype=np.int64)
    out = {}
    for term in terms:
        if term not in columns:
            out[term] = TermPostings.of_columns(empty, [empty] * 4)
            continue
        memories, *counts = columns[term]
        rows = np.fromiter((row_of.get(m, -1) for m in memories), np.intp, len(memories))
        if len(rows) and rows.min() < 0:
            return None
        out[term] = TermPostings.of_columns(rows, [np.asarray(c, np.int64) for c in counts])
    return out
