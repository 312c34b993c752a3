"""BM25 keyword search on SQLite: the ``rank.bm25`` formula summed over postings in SQL."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from linkmem.filters import Node
from linkmem.rank import bm25
from linkmem.rank.neighbour_terms import CONTEXT_SCALE
from linkmem.store.base import iter_chunks
from linkmem.store.sqlite.connection import CHUNK, Connection, placeholders
from linkmem.store.sqlite.sql import scope_where
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
    supplies ``_memory_where`` and ``_scope_matrices``."""

    db: Connection
    c: str
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
