"""The reads of one search on SQLite (``linkmem.store.prefetch``): the query's BM25 statistics
are read once, and every memory of the scope is scored once (from the cached postings,
``keyword_cache``), so the keyword top-k and completing the BM25 of hundreds of candidates are
lookups. With a filter, when the query's terms have few postings in the scope, every matching
memory is scored in one SQL pass. Without a filter, the scope's cached vector matrices are
looked up once, as the view opens (before the query's vector has arrived), and the query's
cosine with every memory of the scope is computed once, in the one matrix product the dense
top-k needs: the other candidates' cosines are lookups in it. (The plain store scores them in
a second product of their rows alone, whose last float32 bit may differ with which rows are
in it, i.e. from one search to the next; here each memory's cosine is the same in every
search.) The entities' records and link lists come from the entity cache (``entity_cache``),
the results' records from the record cache (``record_cache``).
Every other read goes to the store."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from itertools import repeat
from typing import Any

import numpy as np

from linkmem.filters import Node
from linkmem.side_threads import side_pool
from linkmem.store.base import MemoryDate
from linkmem.store.caches.entity_reads import EntityReads
from linkmem.store.caches.keyword_postings import KeywordScores
from linkmem.store.prefetch import SearchPlan
from linkmem.store.sqlite.keyword import KeywordStats
from linkmem.store.vectors import ScopeMatrix
from linkmem.store.vectors import _top as top_of_scores
from linkmem.types import EntityRecord, MemoryRecord, Scope

Ranked = list[tuple[str, float]]
#: A function of the query's vector: some ids' cosines and which of them have one.
Cosines = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]

#: Score every matching memory at once when that reads at most this many postings per
#: candidate asked for; beyond it (common terms in a big scope) only the candidates are scored.
POSTINGS_PER_CANDIDATE = 4


#: A scope of at least this many memories has the query's cosines computed in two halves at
#: once, the second on a side thread that waits for the query's vector: the product reads the
#: whole matrix from memory (~0.6 ms at 10k memories), and two cores read it faster. The cut
#: is a multiple of 64 rows, so each cosine is bit for bit the one product's.
SPLIT_ROWS = 4096


@contextmanager
def search_reads(store: Any, plan: SearchPlan) -> Iterator[SearchReads]:
    reads = SearchReads(store, plan)
    try:
        yield reads
    finally:
        reads.close()


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
        self._scored: tuple[np.ndarray, list[str], np.ndarray] | None = None
        self._rows: dict[str, int] | None = None  # of several scopes' matrices
        self._entities: EntityReads | None = None
        self._tail: tuple[int, Future[np.ndarray]] | None = None
        if plan.filters is None:
            self._matrices = store._scope_matrices(plan.scope)
            if plan.dense and len(self._matrices) == 1:
                self._tail = _start_tail(self._matrices[0].matrix, plan)

    def close(self) -> None:
        """Drop the side thread's half of the cosines when it has not started."""
        if self._tail is not None:
            self._tail[1].cancel()

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
        """The store's ``vector_search``, from the cosines of the whole scope (see the module
        docstring)."""
        if self._matrices is None or filters is not None or scope != self._plan.scope:
            return self._store.vector_search(vector, scope, k, filters, ids)
        if ids is not None and not ids:
            return []
        memory_ids, cosines = self._cosines(vector)
        if ids is None:
            return top_of_scores(cosines, memory_ids, k, None)
        rows = np.fromiter(map(self._row_of().get, ids, repeat(-1)), np.intp, len(ids))
        rows = rows[rows >= 0]
        # Best first, equal cosines in the order asked (a stable sort, as ``list.sort``).
        best = rows[np.argsort(-cosines[rows], kind="stable")[:k]]
        return list(zip(map(memory_ids.__getitem__, best.tolist()), cosines[best].tolist()))

    def cosines_of(self, ids: Sequence[str]) -> Cosines | None:
        """The cosines ``vector_search(..., ids=ids)`` of the plan's scope would give, looked
        up ahead (before the query's vector): a function of the vector giving those of the
        ``ids`` in the scope (float64, in the order of ``ids``) and which of ``ids`` they are
        (a mask). None when the view has no matrices (a filter): ask ``vector_search``."""
        if self._matrices is None:
            return None
        rows = np.fromiter(map(self._row_of().get, ids, repeat(-1)), np.intp, len(ids))
        found = rows >= 0
        rows = rows[found]

        def cosines(vector: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return self._cosines(vector)[1][rows].astype(np.float64), found

        return cosines

    def _cosines(self, vector: np.ndarray) -> tuple[list[str], np.ndarray]:
        """The scope's memory ids and their cosines with ``vector`` (computed once per vector:
        ``vectors.top_k_many``'s product)."""
        if self._scored is None or self._scored[0] is not vector:
            matrices = self._matrices or []
            if len(matrices) == 1:
                ids, matrix = matrices[0].ids, matrices[0].matrix
            else:
                ids = [memory_id for m in matrices for memory_id in m.ids]
                matrix = np.concatenate([m.matrix for m in matrices]) if matrices else None
            if matrix is None:
                cosines = np.zeros(0, dtype=np.float32)
            elif self._tail is not None and vector is self._plan.vector:
                cut, tail = self._tail
                head = _product(vector, matrix[:cut])
                rest = _product(vector, matrix[cut:]) if tail.cancel() else tail.result()
                cosines = np.concatenate([head, rest])
            else:
                cosines = _product(vector, matrix)
            self._scored = (vector, ids, cosines)
        return self._scored[1], self._scored[2]

    def _row_of(self) -> dict[str, int]:
        matrices = self._matrices or []
        if len(matrices) == 1:
            return matrices[0].row_of
        if self._rows is None:
            ids = [memory_id for m in matrices for memory_id in m.ids]
            self._rows = {memory_id: row for row, memory_id in enumerate(ids)}
        return self._rows

    def get_memories(self, ids: Sequence[str]) -> list[MemoryRecord]:
        """The store's ``get_memories``, records read before kept (``record_cache``)."""
        return self._store.record_cache.get_memories(self._store, ids)

    def memory_dates(self, ids: Sequence[str]) -> list[MemoryDate]:
        """The store's ``memory_dates``, records read before answered from memory
        (``record_cache``)."""
        return self._store.record_cache.memory_dates(self._store, ids)

    def get_entities(self, ids: Sequence[str]) -> list[EntityRecord]:
        return self._entity_reads().get_entities(ids)

    def memories_of_entities(
        self, entity_ids: Sequence[str], own_only: bool = False
    ) -> dict[str, list[str]]:
        if own_only:  # the second hop's, after the vector
            return self._store.memories_of_entities(entity_ids, own_only)
        return self._entity_reads().memories_of_entities(entity_ids)

    def links_among(
        self, entity_ids: Sequence[str], memory_ids: Sequence[str]
    ) -> dict[str, list[str]]:
        return self._entity_reads().links_among(entity_ids, memory_ids)

    def hop_may_reach(
        self, sources: Sequence[str], excluded: Collection[str], max_links: int
    ) -> bool | None:
        """Whether the second hop from ``sources`` can reach a memory, from the entity cache
        (``EntityReads.hop_may_reach``); None: not known, read the store."""
        return self._entity_reads().hop_may_reach(sources, excluded, max_links)

    def _entity_reads(self) -> EntityReads:
        if self._entities is None:
            views = self._store._entity_scope_views(self._plan.scope)
            self._entities = EntityReads(self._store, views, self._plan.specific_max_links)
        return self._entities

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


def _product(vector: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """The cosines of ``vector`` with each row of ``matrix`` (``vectors.top_k_many``'s
    product)."""
    return (np.asarray([vector], dtype=np.float32) @ matrix.T)[0]


def _start_tail(
    matrix: np.ndarray | None, plan: SearchPlan
) -> tuple[int, Future[np.ndarray]] | None:
    """The second half of the query's cosines with ``matrix``, started on the side pool,
    where it waits for the query's vector (None: a matrix too small to split)."""
    if matrix is None or len(matrix) < SPLIT_ROWS:
        return None
    cut = (len(matrix) // 2) & ~63
    tail = matrix[cut:]
    return cut, side_pool().submit(lambda: _product(plan.vector, tail))
