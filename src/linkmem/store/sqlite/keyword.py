"""BM25 keyword search on SQLite: the ``rank.bm25`` formula summed over postings, in numpy
from the postings cached per scope (``keyword_cache``), or in SQL when a filter applies."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from linkmem.filters import Node
from linkmem.rank import bm25
from linkmem.rank.neighbour_terms import CONTEXT_SCALE
from linkmem.store.base import iter_chunks
from linkmem.store.caches.keyword_postings import (
    KeywordCache,
    KeywordScores,
    TermPostings,
    bm25_of_rows,
)
from linkmem.store.sqlite.connection import CHUNK, Connection, placeholders
from linkmem.store.sqlite.sql import scope_where
from linkmem.store.vectors import MatrixCache, ScopeMatrix
from linkmem.types import Scope

#: A posting's BM25 count and its memory's length: own plus context (``neighbour_terms``).
TF = f"(p.tf + p.ctx * {1 / CONTEXT_SCALE!r})"
LEN = f"(p.doc_len + p.ctx_len * {1 / CONTEXT_SCALE!r})"


@dataclass(frozen=True)
class KeywordStats:
    """A scope's BM25 statistics for one query's terms; ``postings``: how many postings
    those terms have in the scope (what scoring every matching memory reads)."""

    idfs: dict[str, float]
    avg_len: float
    n_docs: int
    postings: int


class KeywordTables:
    """The keyword half of the SQLite store's memory tables; ``MemoryTables`` (its subclass)
    supplies ``_memory_where``, ``_scope_matrices``, ``_matching_scopes``, ``_version``,
    ``memory_vectors`` and ``keyword_cache``."""

    db: Connection
    c: str
    memory_vectors: MatrixCache
    keyword_cache: KeywordCache
    k1: float = bm25.K1
    b: float = bm25.B

    def keyword_search(
        self,
        terms: Sequence[str],
        scope: Scope,
        k: int,
        filters: Node | None = None,
        ids: Sequence[str] | None = None,
    ) -> list[tuple[str, float]]:
        terms = list(dict.fromkeys(terms))
        if not terms or (ids is not None and not ids):
            return []
        stats = self.keyword_stats(terms, scope)
        return self.keyword_scores(stats, scope, k, filters, ids) if stats else []

    def keyword_stats(self, terms: Sequence[str], scope: Scope) -> KeywordStats | None:
        """What BM25 needs to know about the scope for ``terms`` (unique); None: empty scope."""
        scope_sql, scope_args = scope_where(scope)
        n_docs, total_len, ctx_total = self.db.rows(
            f"SELECT coalesce(sum(n_docs), 0), coalesce(sum(total_len), 0), "
            f"coalesce(sum(ctx_total), 0) FROM {self.c}_scopes s WHERE {scope_sql}",
            scope_args,
        )[0]
        if not n_docs:
            return None
        rows = self.db.rows(
            f"SELECT t.term, sum(t.df) FROM {self.c}_terms t WHERE t.term IN "
            f"({placeholders(len(terms))}) AND t.scope_id IN "
            f"(SELECT s.id FROM {self.c}_scopes s WHERE {scope_sql}) AND t.df > 0 "
            "GROUP BY t.term",
            [*terms, *scope_args],
        )
        df = dict(rows)
        idfs = {t: bm25.idf(n_docs, df.get(t, 0)) for t in terms}
        avg_len = (total_len + ctx_total / CONTEXT_SCALE) / n_docs
        return KeywordStats(idfs, avg_len, n_docs, sum(df.values()))

    def keyword_scores(
        self,
        stats: KeywordStats,
        scope: Scope,
        k: int,
        filters: Node | None = None,
        ids: Sequence[str] | None = None,
    ) -> list[tuple[str, float]]:
        """``keyword_search`` with the scope's statistics already read."""
        if filters is None:
            table = self.keyword_table(stats, scope)
            if table is not None:
                return table.top(k) if ids is None else table.of(ids, k)
        return self._sql_keyword_scores(stats, scope, k, filters, ids)

    def keyword_table(self, stats: KeywordStats, scope: Scope) -> KeywordScores | None:
        """Every memory's BM25 in the scope from the cached postings of ``stats``' terms
        (read and kept on first use); None when the postings and the scope's vector matrix
        disagree (a write landed between the reads): the caller asks SQL."""
        terms = list(stats.idfs)
        matrices, scores = [], []
        for scope_id, version in self._matching_scopes(scope):
            matrix = self.memory_vectors.get(scope_id, version)
            postings = self._term_postings(scope_id, matrix, terms)
            if postings is None:
                return None
            weighted = [(stats.idfs[t], postings[t]) for t in terms]
            matrices.append(matrix)
            scores.append(bm25_of_rows(weighted, len(matrix.ids), stats.avg_len, self.k1, self.b))
        return KeywordScores(matrices, scores)

    def _term_postings(
        self, scope_id: int, matrix: ScopeMatrix, terms: list[str]
    ) -> dict[str, TermPostings] | None:
        """The scope's postings of ``terms``, each memory as its row in ``matrix``: cached,
        else read (and kept when read at the matrix's version); None when a posting's memory
        is not in ``matrix``."""
        cached = self.keyword_cache.lookup(scope_id, matrix.version, terms)
        if not cached:
            cached = self._caught_up(scope_id, matrix, terms)
        missing = [t for t in terms if t not in cached]
        if not missing:
            return cached
        read = self._read_postings(scope_id, missing)
        found = _postings_in(matrix, read.columns, missing)
        if found is None:
            return None
        if read.committed and read.version == matrix.version:
            self.keyword_cache.remember(
                scope_id, read.version, len(matrix.ids), found, read.rewrites
            )
        return {**cached, **found}

    def _caught_up(
        self, scope_id: int, matrix: ScopeMatrix, terms: list[str]
    ) -> dict[str, TermPostings]:
        """The scope's cached terms from an older version, brought to ``matrix``'s by the
        postings of the memories added since (another connection's or process's adds), when
        nothing was rewritten meanwhile (``schema.m006_rewrite_counts``); else none."""
        base = self.keyword_cache.older(scope_id, matrix.version)
        if base is None or base.rewrites is None or base.rewrites[0] != matrix.rewrites:
            return {}
        if not 0 < base.n_rows <= len(matrix.ids):
            return {}
        read = self._read_postings(scope_id, None, after=int(matrix.rowids[base.n_rows - 1]))
        if not read.committed or (read.version, read.rewrites) != (matrix.version, base.rewrites):
            return {}
        added = _postings_in(matrix, read.columns, [t for t in read.columns if t in base.terms])
        if added is None:
            return {}
        held = self.keyword_cache.catch_up(scope_id, base, matrix.version, len(matrix.ids), added)
        return {t: held[t] for t in terms if t in held} if held is not None else {}

    def _read_postings(
        self, scope_id: int, terms: list[str] | None, after: int | None = None
    ) -> PostingsRead:
        """The scope's version and rewrite counts and its postings of ``terms`` (None: of
        the memories after rowid ``after``) from one snapshot."""
        columns = ", ".join(
            f"group_concat({c})" for c in ("memory", "tf", "doc_len", "ctx", "ctx_len")
        )
        postings = f"{self.c}_postings"
        if terms is None:  # by the memory index: the scope's postings are ~40x more rows
            postings += f" INDEXED BY {self.c}_postings_memory"
            queries = [("AND memory > ?", [scope_id, after])]
        else:
            queries = [
                (f"AND term IN ({placeholders(len(chunk))})", [scope_id, *chunk])
                for chunk in iter_chunks(terms, CHUNK)
            ]
        out: dict[str, list[np.ndarray]] = {}
        with self.db.snapshot() as committed:
            version, *rewrites = self.db.rows(
                f"SELECT mem_version, mem_rewrites, kw_rewrites FROM {self.c}_scopes WHERE id = ?",
                (scope_id,),
            )[0]
            for where, args in queries:
                for term, *texts in self.db.rows(
                    f"SELECT term, {columns} FROM {postings} WHERE scope_id = ? {where} "
                    "GROUP BY term",
                    args,
                ):
                    out[term] = [np.fromstring(t, dtype=np.int64, sep=",") for t in texts]
        return PostingsRead(version, (rewrites[0], rewrites[1]), out, committed)

    def _sql_keyword_scores(
        self,
        stats: KeywordStats,
        scope: Scope,
        k: int,
        filters: Node | None = None,
        ids: Sequence[str] | None = None,
    ) -> list[tuple[str, float]]:
        """``keyword_scores`` summed in SQL."""
        found: list[tuple[str, float]] = []
        for chunk in iter_chunks(list(ids), CHUNK) if ids is not None else [None]:
            found += self._bm25_rows(stats.idfs, stats.avg_len, scope, filters, chunk, k)
        found.sort(key=lambda item: (-item[1], item[0]))
        return found[:k]

    def _bm25_rows(
        self,
        idfs: dict[str, float],
        avg_len: float,
        scope: Scope,
        filters: Node | None,
        ids: Sequence[str] | None,
        k: int,
    ) -> list[tuple[str, float]]:
        """The ``rank.bm25`` formula summed in SQL, so only the top ``k`` rows leave SQLite
        (SQLite has no ln(): the IDFs come in as parameters). Postings carry the document
        length, so an unfiltered search never reads the memory rows it does not return.
        A term's count is its own plus its context weight, a length likewise (``TF``, ``LEN``)."""
        values = ", ".join("(?, ?)" for _ in idfs)
        k1, b = self.k1, self.b
        score = f"sum(q.idf * {TF} * {k1 + 1.0} / ({TF} + {k1} * (1 - {b} + {b} * {LEN} / ?)))"
        head = (
            f"WITH q(term, idf) AS (VALUES {values}) SELECT p.memory, {score} AS score "
            f"FROM q JOIN {self.c}_postings p ON p.term = q.term "
            f"JOIN {self.c}_scopes s ON s.id = p.scope_id "
        )
        if filters is not None:
            where, args = self._memory_where(scope, filters, ids)
            head += f"JOIN {self.c} m ON m.rowid = p.memory "
        else:
            where, args = self._postings_where(scope, ids)
        rows = self.db.rows(
            f"SELECT m.id, top.score FROM ({head} WHERE {where} GROUP BY p.memory "
            f"HAVING score > 0 ORDER BY score DESC, p.memory LIMIT ?) top "
            f"JOIN {self.c} m ON m.rowid = top.memory ORDER BY top.score DESC, m.id",
            [*(x for item in idfs.items() for x in item), avg_len, *args, k],
        )
        return [(mid, float(value)) for mid, value in rows]

    def _postings_where(self, scope: Scope, ids: Sequence[str] | None) -> tuple[str, list[Any]]:
        """Scope (and id) restriction on postings alone: ids map to row keys through the
        cached scope matrices, so no memory row is read."""
        where, args = scope_where(scope)
        if ids is None:
            return where, args
        rowids = [
            int(entry.rowids[entry.row_of[i]])
            for entry in self._scope_matrices(scope)
            for i in ids
            if i in entry.row_of
        ]
        return f"{where} AND p.memory IN ({placeholders(len(rowids))})", [*args, *rowids]


@dataclass(frozen=True)
class PostingsRead:
    """Postings read in one snapshot: term -> the columns memory, tf, doc_len, ctx, ctx_len,
    with the scope's version and rewrite counts (``mem_rewrites``, ``kw_rewrites``)."""

    version: int
    rewrites: tuple[int, int]
    columns: dict[str, list[np.ndarray]]
    committed: bool


def _postings_in(
    matrix: ScopeMatrix, columns: dict[str, list[np.ndarray]], terms: list[str]
) -> dict[str, TermPostings] | None:
    """Each of ``terms``' postings read (none: empty), its memories as rows of ``matrix``;
    None when a memory is not there."""
    found = {}
    for term in terms:
        rowids, *rest = columns.get(term, [np.zeros(0, np.int64)] * 5)
        rows = _rows_in(matrix, rowids)
        if rows is None:
            return None
        found[term] = TermPostings.of_columns(rows, rest)
    return found


def _rows_in(matrix: ScopeMatrix, rowids: np.ndarray) -> np.ndarray | None:
    """Each row key's row in ``matrix`` (whose keys ascend); None when one is not there."""
    rows = np.searchsorted(matrix.rowids, rowids)
    if len(rows) and (rows.max() >= len(matrix.rowids) or (matrix.rowids[rows] != rowids).any()):
        return None
    return rows
