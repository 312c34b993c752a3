"""The reads of one search on SQLite (``linkmem.store.prefetch``): the query's BM25 statistics
are read once, and every memory of the scope is scored once (from the cached postings,
``keyword_cache``), so the keyword top-k and completing the BM25 of hundreds of candidates are
lookups. With a filter, when the query's terms have few postings in the scope, every matching
memory is scored in one SQL pass. Without a filter, the scope's cached vector matrices are
looked up once, as the view opens (before the query's vector has arrived), and serve the
dense top-k and the exact cosines of the other candidates. Every other read goes to the
store."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from linkmem.filters import Node
from linkmem.store.prefetch import SearchPlan
from linkmem.store.sqlite.keyword import KeywordStats
from linkmem.store.sqlite.keyword_cache import KeywordScores
from linkmem.store.vectors import ScopeMatrix, score_ids, top_k_many
from linkmem.types import Scope

Ranked = list[tuple[str, float]]

#: Score every matching memory at once when that reads at most this many postings per
#: candidate asked for; beyond it (common terms in a big scope) only the candidates are scored.
POSTINGS_PER_CANDIDATE = 4


@contextmanager
def search_reads(store: Any, plan: SearchPlan) -> Iterator[SearchReads]:
    yield SearchReads(store, plan)


class SearchReads:
    """A store view for one search; answers are the plain store's, up to float rounding."""

    def __init__(self, store: Any, plan: SearchPlan) -> None:
        self._store = store
        self._plan = plan
        self._terms = list(dict.fromkeys(plan.terms))
        self._stats: KeywordStats | None = None
        self._stats_read = False
        self._all: dict[str, float] | None = None
        self._table: KeywordScores | None = None
        self._table_read = False
        # The scope's memory vectors (the store's ``vector_search`` reads them per call).
        self._matrices: list[ScopeMatrix] | None = None
        if plan.filters is None:
            self._matrices = store._scope_matrices(plan.scope)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def vector_search(
        self,
        vector: np.ndarray,
        scope: Scope,
        k: int,
        filters: Node | None = None,
        ids: Sequence[str] | None = None,
    ) -> Ranked:
        """The store's ``vector_search`` (the same functions), from the matrices looked up as
        the view opened."""
        entries = self._matrices
        if entries is None or filters is not None or scope != self._plan.scope:
            return self._store.vector_search(vector, scope, k, filters, ids)
        if ids is not None:
            return score_ids(entries, vector, ids, k) if ids else []
        return top_k_many(entries, np.asarray([vector]), k, None)[0]

    def keyword_search(
        self,
        terms: Sequence[str],
        scope: Scope,
        k: int,
        filters: Node | None = None,
        ids: Sequence[str] | None = None,
    ) -> Ranked:
        plan = self._plan
        if list(terms) != plan.terms or scope != plan.scope or filters is not plan.filters:
            return self._store.keyword_search(terms, scope, k, filters, ids)
        stats = self._keyword_stats()
        if stats is None or not self._terms or (ids is not None and not ids) or k <= 0:
            return []
        table = self._keyword_table(stats) if filters is None else None
        if table is not None:
            return table.top(k) if ids is None else table.of(ids, k)
        if ids is None or stats.postings > POSTINGS_PER_CANDIDATE * len(ids):
            return self._store.keyword_scores(stats, scope, k, filters, ids)
        scores = self._all_scores(stats)
        found = [(mid, scores[mid]) for mid in dict.fromkeys(ids) if mid in scores]
        found.sort(key=lambda item: (-item[1], item[0]))
        return found[:k]

    def _keyword_stats(self) -> KeywordStats | None:
        if not self._stats_read:
            self._stats = self._store.keyword_stats(self._terms, self._plan.scope)
            self._stats_read = True
        return self._stats

    def _keyword_table(self, stats: KeywordStats) -> KeywordScores | None:
        if not self._table_read:
            self._table = self._store.keyword_table(stats, self._plan.scope)
            self._table_read = True
        return self._table

    def _all_scores(self, stats: KeywordStats) -> dict[str, float]:
        if self._all is None:
            plan = self._plan
            ranked = self._store.keyword_scores(stats, plan.scope, stats.n_docs, plan.filters)
            self._all = dict(ranked)
        return self._all
