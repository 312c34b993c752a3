"""The dense half of one search's reads (``search_reads``): the dense top-k and the
candidates' cosines, from the process's cached vectors when they are current
(``dense_cache``), else from the server (the top-k in round trip 1, the cosines with the
pool's records)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from linkmem.filters import Node
from linkmem.store.postgres import search_sql as q
from linkmem.store.postgres import sql
from linkmem.store.postgres.dense_cache import DenseReads
from linkmem.store.postgres.memories import ef_search
from linkmem.store.prefetch import SearchPlan
from linkmem.types import Scope

Ranked = list[tuple[str, float]]


class DenseSearchReads:
    """``SearchReads``' dense reads (a mixin: the fetching is ``SearchReads``')."""

    _store: Any
    _plan: SearchPlan
    _t: sql.Tables
    _scope_ids: list[int] | None
    _versions: list[tuple[int, int]]
    _dense: DenseReads | None
    _load_dense: bool
    _dense_top: Ranked | None
    _records: dict[str, Sequence[Any]]
    _query: str
    _fetch: Callable[..., None]
    _same: Callable[[Scope, Node | None], bool]
    _memory_where: Callable[[list[str] | None], q.Where]

    def _plan_dense(self, n_docs: int) -> bool:
        """Whether the search's dense reads come from the process (``dense_cache``): from the
        matrices the cache holds at the versions of round trip 0 (``_dense`` set now), or from
        the scopes' vectors read in round trip 1 when they fit the cache (``_queue_load``).
        False: the server's."""
        cache, plan = self._store.dense_cache, self._plan
        self._load_dense = False
        if (
            not plan.dense
            or plan.filters is not None
            or self._scope_ids is None
            or self._store.db.in_transaction()
        ):
            return False
        matrices = cache.cached(self._versions)
        if matrices is not None:
            self._dense = DenseReads(matrices)
            return True
        self._load_dense = cache.fits(n_docs)
        return self._load_dense

    def _queue_load(self, conn: Any) -> Any | None:
        """The scopes' vectors queued on ``conn`` when ``_plan_dense`` chose to read them."""
        if not self._load_dense:
            return None
        return self._store.dense_cache.queue_load(conn, self._scope_ids)

    def _read_only(self, conn: Any, queue: Callable[[Any], Any]) -> Any:
        self._begin(conn)
        cursor = queue(conn)
        self._commit(conn)
        return cursor

    def _begin(self, conn: Any) -> None:
        """BEGIN READ ONLY, queued; inside the caller's open transaction (whose connection the
        search reads on) nothing: its COMMIT would commit the caller's writes."""
        if not self._store.db.in_transaction():
            conn.execute("BEGIN READ ONLY")

    def _commit(self, conn: Any) -> None:
        if not self._store.db.in_transaction():
            conn.execute("COMMIT")

    def _queue_dense_top(self, conn: Any) -> Any:
        pool = self._plan.pool
        conn.execute(sql.ann_settings(), (ef_search(pool),))
        gate = q.exact_scan_gate(self._t, self._scope_ids, pool)
        statement = q.dense_first(self._t, self._memory_where(None), gate, self._query, pool)
        return conn.execute(*statement, binary=True)

    def vector_search(
        self,
        vector: np.ndarray,
        scope: Scope,
        k: int,
        filters: Node | None = None,
        ids: Sequence[str] | None = None,
    ) -> Ranked:
        if vector is not self._plan.vector or not self._same(scope, filters):
            return self._store.vector_search(vector, scope, k, filters, ids)
        if ids is None:
            if self._dense_top is not None and k == self._plan.pool:
                return list(self._dense_top)
            if self._dense is not None:
                return self._dense.top(vector, k)
            return self._store.vector_search(vector, scope, k, filters, ids)
        if k <= 0 or not ids:
            return []
        self._fetch(list(ids))
        if self._dense is not None:
            return self._dense.of(vector, ids, k)
        rows = self._records
        asked = map(rows.get, dict.fromkeys(ids))
        found = [r for r in asked if r is not None and r[-1] is not None]
        if not found:
            return []
        # vector_exact's order: cosine descending, then memory seq (unique).
        mids, *_, seqs, sims = zip(*found)
        order = np.lexsort((np.array(seqs), -np.array(sims, dtype=np.float64)))[:k].tolist()
        return [(mids[i], sims[i]) for i in order]

    def cosines_of(self, ids: Sequence[str]) -> Callable[[np.ndarray], tuple[Any, Any]]:
        """The cosines ``vector_search(..., ids=ids)`` of the plan's scope and filters gives
        (``linkmem.search``): a function of the vector giving those of the ``ids`` that have
        one (float64, in the order of ``ids``) and which of ``ids`` they are (a mask). Looked
        up in the pool's rows, read once."""
        self._fetch(list(ids))
        if self._dense is not None:
            return self._dense.cosines_of(ids)
        rows = self._records
        sims = np.array(
            [r[-1] if r is not None else None for r in map(rows.get, ids)], dtype=np.float64
        )  # None (no cosine) -> NaN
        found = ~np.isnan(sims)

        def cosines(vector: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            if vector is self._plan.vector:
                return sims[found], found
            plan = self._plan
            got = dict(self.vector_search(vector, plan.scope, len(ids), plan.filters, ids))
            mask = np.fromiter((i in got for i in ids), bool, len(ids))
            return np.fromiter((got[i] for i in ids if i in got), np.float64), mask

        return cosines
