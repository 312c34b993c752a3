"""A search's dense reads from vectors cached in the process (PostgreSQL), as on SQLite.

The server's CPU per search was mostly the dense top-k (HNSW, or an exact scan of a small
scope) and the cosines of the candidate pool. The store keeps each searched scope's vectors
in one ``vectors.MatrixCache`` (the SQLite store's cache), keyed by the scope's
``mem_version`` (``version_triggers.m010_memory_versions``: every write that adds, deletes
or changes a scope's memories moves it on, in the write's transaction, whichever process
writes). A search reads the versions of its scopes in its first round trip
(``search_sql.scope_sizes``); when the cache holds every scope at its version, the dense top-k
and every cosine the search asks for come from one matrix product in the process, and the
server computes none. Otherwise, when the scopes fit the cache's budget, the statement that
would have read the dense top-k reads the scopes' vectors instead (``load_scopes``: the
version and the rows in one statement, one snapshot), in the same round trip, and the search
goes on from them; of a scope held at an older version, only the rows after its last seq,
which ``MatrixCache.get`` appends when the scope's ``mem_rewrites`` is the one the matrix was
read at (``version_triggers.m014_rewrite_counts``: then those are all the scope's changes),
else it reads the whole scope. A scope over the budget keeps the server's dense reads.
Answers are those of ``search_sql.dense_first`` read exactly (cosine descending, then memory
seq): where the server takes the HNSW index (a big scope), the exact top-k may hold memories
the index missed. Cosines are float32 products, as on SQLite, not pgvector's: they may differ
from the server's in the last bits.

A search inside a transaction (whose reads see its own writes) and a search with a metadata
filter keep the server's reads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from itertools import repeat
from typing import Any

import numpy as np

from linkmem.store.base import NewMemory
from linkmem.store.postgres.connection import Database
from linkmem.store.postgres.sql import Tables
from linkmem.store.vectors import DEFAULT_CACHE_BYTES, LoadedScope, MatrixCache, ScopeMatrix

Ranked = list[tuple[str, float]]
#: Bytes a cached memory takes besides its vector (its seq and id: ``vectors.ScopeMatrix.nbytes``).
ROW_BYTES = 8 + 64


#: The ``after`` of a load that reads every row of its scope.
WHOLE = -(2**63)


def load_scopes(
    t: Tables, rows: str | None = None, version: str = "mem_version", rewrites: str = "mem_rewrites"
) -> str:
    """Each scope of ``unnest(%s, %s) AS a(id, after)`` (bigint arrays) with its ``version``,
    its rows of ``rows`` (default: the memories) with a seq above ``after`` (``WHOLE``: all)
    as seqs, ids and vectors (``vector_send``) in seq order, its ``rewrites`` count and the
    ``after``; one row of NULLs for a scope without any. One statement: the version and the
    rows are of one snapshot. Lateral, so each scope's rows are read by its own seek of the
    scope-and-seq index (``schema.m016_scope_seq``; the subquery's ORDER BY keeps the planner
    from flattening it back into a join): a join on ``m.seq > a.after`` scanned the table."""
    return (
        f"SELECT s.id, s.{version}, m.seq, m.id, vector_send(m.embedding), s.{rewrites}, "
        f"a.after FROM unnest(%s::bigint[], %s::bigint[]) AS a(id, after) "
        f"JOIN {t.scopes} s ON s.id = a.id LEFT JOIN LATERAL (SELECT m.seq, m.id, m.embedding "
        f"FROM {rows or t.mem} m WHERE m.scope_id = s.id AND m.seq > a.after ORDER BY m.seq) m "
        "ON TRUE ORDER BY s.id, m.seq"
    )


class DenseCache:
    """The store's cache of its scopes' vectors (bounded by ``max_bytes``, least recently
    used scopes dropped first). Its lock is the ``MatrixCache``'s, a leaf: loads run outside
    it."""

    def __init__(
        self, db: Database, t: Tables, dim: int, max_bytes: int = DEFAULT_CACHE_BYTES
    ) -> None:
        self._db, self._t, self._dim = db, t, dim
        self.max_bytes = max_bytes
        self.matrices = MatrixCache(dim, self._load, max_bytes)
        self._staged = threading.local()  # scope id -> LoadedScope read by a search's batch

    def fits(self, n_docs: int) -> bool:
        """Whether ``n_docs`` memories fit the budget."""
        return n_docs * (4 * self._dim + ROW_BYTES) <= self.max_bytes

    def cached(self, versions: Sequence[tuple[int, int]]) -> list[ScopeMatrix] | None:
        """The matrices of the scopes ``(id, version)`` when all are cached at those versions;
        None otherwise."""
        if not all(self.matrices.holds(s, v) for s, v in versions):
            return None
        return [self.matrices.get(s, v) for s, v in versions]

    def follow(
        self, scope_id: int, version: int, group: Sequence[NewMemory], seqs: dict[str, int]
    ) -> None:
        """After this process's write adds ``group`` (memory id -> seq: ``seqs``) to the
        scope, moving it to ``version`` (one insert: the trigger's one step), and once the
        write commits: the new rows appended to the scope's matrix when the cache holds it at
        the version before (``MatrixCache.extend``), so the writer's next search reloads
        nothing. A cache that does not (nothing cached, or an earlier write of this
        transaction moved the scope on) drops the scope: it reloads when next searched."""
        if not self.matrices.holds(scope_id, version - 1):
            self.matrices.drop(scope_id)
            return
        ids = [m.record.id for m in group]
        keys = [seqs[i] for i in ids]
        vectors = np.stack([np.asarray(m.vector, dtype=np.float32) for m in group])
        versions = (version - 1, version)
        self._db.after_commit(lambda: self.matrices.extend(scope_id, versions, keys, ids, vectors))

    def queue_load(self, conn: Any, scope_ids: list[int]) -> Any:
        """Send ``load_scopes`` of ``scope_ids`` on ``conn`` (rows in binary): of a scope the
        cache holds at an older version, the rows after its last (``MatrixCache.get``
        appends them when nothing was rewritten since, else reads the whole scope)."""
        afters = [self._after(self.matrices.latest(s)) for s in scope_ids]
        return conn.execute(self._statement(), [scope_ids, afters], binary=True)

    @staticmethod
    def _after(held: ScopeMatrix | None) -> int:
        return int(held.rowids[-1]) if held is not None and len(held.ids) else WHOLE

    def take(self, rows: list[Sequence[Any]], versions: Sequence[tuple[int, int]]) -> list[Any]:
        """The matrices of the scopes ``(id, version)`` from the rows of ``load_scopes``
        (cached; a scope the rows lack is loaded on its own)."""
        staged: dict[int, LoadedScope] = {}
        start = 0
        for end in range(1, len(rows) + 1):
            if end == len(rows) or rows[end][0] != rows[start][0]:
                staged[rows[start][0]] = self._loaded(rows[start:end], committed=True)
                start = end
        self._staged.scopes = staged
        try:
            return [self.matrices.get(s, v) for s, v in versions]
        finally:
            self._staged.scopes = {}

    def _statement(self) -> str:
        """The read of scopes' versions and vectors (``load_scopes``' columns)."""
        return load_scopes(self._t)

    def _load(self, scope_id: int, since: ScopeMatrix | None = None) -> LoadedScope:
        """``MatrixCache``'s loader: the rows a search's batch read, else one statement (every
        row: ``since`` is not read here)."""
        staged = getattr(self._staged, "scopes", {}).pop(scope_id, None)
        if staged is not None:
            return staged
        rows = self._db.rows(self._statement(), [[scope_id], [self._after(since)]])
        return self._loaded(rows, committed=not self._db.in_transaction())

    def _loaded(self, rows: Sequence[Sequence[Any]], committed: bool) -> LoadedScope:
        version, rewrites, after = (rows[0][1], rows[0][5], rows[0][6]) if rows else (0, 0, WHOLE)
        rows = [r for r in rows if r[2] is not None]
        raw = b"".join(bytes(r[4]) for r in rows)  # each: int16 dim, int16 0, float4s (BE)
        vectors = np.frombuffer(raw, dtype=">f4").reshape(len(rows), self._dim + 1)
        return LoadedScope(
            version,
            np.fromiter((r[2] for r in rows), np.int64, len(rows)),
            [r[3] for r in rows],
            [],
            committed,
            np.ascontiguousarray(vectors[:, 1:], dtype=np.float32),
            rewrites,
            None if after == WHOLE else after,
        )


class DenseReads:
    """The dense reads of one search from cached matrices: one product per query vector."""

    def __init__(self, matrices: list[ScopeMatrix]) -> None:
        self.matrices = matrices
        if len(matrices) == 1:
            self._ids, self._seqs = matrices[0].ids, matrices[0].rowids
            self._matrix = matrices[0].matrix
            self._rows = matrices[0].row_of
        else:
            self._ids = [memory_id for m in matrices for memory_id in m.ids]
            self._seqs = np.concatenate([m.rowids for m in matrices] or [np.zeros(0, np.int64)])
            self._matrix = np.concatenate([m.matrix for m in matrices]) if matrices else None
            self._rows = {memory_id: row for row, memory_id in enumerate(self._ids)}
        self._scored: tuple[np.ndarray, np.ndarray] | None = None

    def _cosines(self, vector: np.ndarray) -> np.ndarray:
        if self._scored is None or self._scored[0] is not vector:
            if self._matrix is None or not len(self._ids):
                cosines = np.zeros(0, dtype=np.float32)
            else:
                cosines = (np.asarray([vector], dtype=np.float32) @ self._matrix.T)[0]
            self._scored = (vector, cosines)
        return self._scored[1]

    def top(self, vector: np.ndarray, k: int) -> Ranked:
        """The ``k`` best by cosine, equal cosines by memory seq (``vector_exact``'s order)."""
        cosines = self._cosines(vector)
        n = len(cosines)
        if k <= 0 or n == 0:
            return []
        if n > k:  # every row at least as good as the k-th, so ties at the edge go by seq
            rows = np.flatnonzero(cosines >= np.partition(cosines, n - k)[n - k])
        else:
            rows = np.arange(n)
        return self._ranked(rows, cosines, k)

    def of(self, vector: np.ndarray, ids: Sequence[str], k: int) -> Ranked:
        """``vector_search(..., ids=ids)``: those of ``ids`` in the scopes, best first."""
        rows = np.unique(self._rows_of(ids))
        return self._ranked(rows[rows >= 0], self._cosines(vector), k)

    def _ranked(self, rows: np.ndarray, cosines: np.ndarray, k: int) -> Ranked:
        best = rows[np.lexsort((self._seqs[rows], -cosines[rows]))[:k]]
        return list(zip(map(self._ids.__getitem__, best.tolist()), cosines[best].tolist()))

    def cosines_of(self, ids: Sequence[str]) -> Callable[[np.ndarray], tuple[Any, Any]]:
        """``SearchReads.cosines_of`` of ``ids`` for this view's vector: their cosines (float64,
        in the order of ``ids``) and which of ``ids`` have one."""
        rows = self._rows_of(ids)
        found = rows >= 0
        rows = rows[found]

        def cosines(vector: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return self._cosines(vector)[rows].astype(np.float64), found

        return cosines

    def _rows_of(self, ids: Sequence[str]) -> np.ndarray:
        return np.fromiter(map(self._rows.get, ids, repeat(-1)), np.intp, len(ids))
