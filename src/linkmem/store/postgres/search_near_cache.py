"""A search's nearest entities from the process's entity vectors (PostgreSQL), as on SQLite.

After the tenth to twelfth passes a warm search of a big scope sent two round trips: the
scope's versions with the query's entities by key (round trip 0), and the nearest entities
to the query's entity vectors with their records and the specific entities' memories (round
trip 1: the server's HNSW beyond ``EXACT_ENTITIES`` entities, an exact scan below). Here:

- ``EntityVectors`` keeps each searched scope's entity vectors (seq, id, vector) in a
  ``vectors.MatrixCache`` at the scope's ``ev_version`` (``version_triggers.
  m013_entity_vector_versions``: every statement writing the scope's entities, by any
  process, moves it on in the write's transaction; links do not), read in one statement with
  the version (one snapshot), beside round trip 1 of a search whose searches before at the
  same versions did not have it; the entities a process inserts are appended to its cache
  (``EntityVectors.follow``);
- ``NearDetails`` keeps the rows the server's near read gives per entity (its record and,
  up to the search's link bound, its memories: ``search_sql._detailed``) per scope at its
  ``(ent_version, mem_version)``.

When a search's other reads come from the process (one scope, its dense reads from cached
matrices: ``caches.entity_reads.ScopeView``) and the scope's entity vectors are held at
the search's ``ev_version``, the nearest entities are one matrix product here, exact
(cosine descending, then entity seq, those under the minimum similarity left out: the
server's exact statement; where the server would take its HNSW index the exact answer may
hold entities the index missed). Their rows come from ``NearDetails``; those it lacks are
read with the scope's versions in one statement in place of the near read (``detailed_of``),
so a search whose rows are all held sends no round trip 1. Rows read at other versions than
the search's (a write landed between) are not kept and the server's near read is sent after
(a round trip of its own). Vectors are normalised here: the cosine is pgvector's.

A filter, a search inside a transaction, several scopes and a scope over the vector budget
keep the server's near read. Locking: the caches' locks are leaves (``MatrixCache``,
``scope_budget``), taken with no other lock held, never while reading the store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from linkmem.store.base import NewEntity
from linkmem.store.caches.memory_rows import VersionedRows
from linkmem.store.postgres import search_sql as q
from linkmem.store.postgres.connection import Database
from linkmem.store.postgres.dense_cache import DenseCache, DenseReads, load_scopes
from linkmem.store.postgres.entities import EXACT_ENTITIES
from linkmem.store.postgres.memories import ef_search
from linkmem.store.postgres.search_keyword_reads import ScopeStats
from linkmem.store.postgres.search_sql import DETAILED, _detailed
from linkmem.store.postgres.sql import Tables, ann_settings, in_scopes, vector_literal
from linkmem.store.vectors import LoadedScope, ScopeMatrix

#: Bytes of entity vectors kept per store (a 10k-memory scope of ``scale_ab`` has ~8k
#: entities: 12 MiB at 384 dimensions).
DEFAULT_ENTITY_VECTOR_BYTES = 64 * 2**20
#: Bytes of near rows kept per store, and the estimate of one row and of one of its links.
DEFAULT_NEAR_BYTES = 16 * 2**20
_ROW_BYTES, _LINK_BYTES, _SCOPE_BYTES = 700, 80, 1000

#: What a near row depends on besides the versions: the link bound and whether seqs are read.
Shape = tuple[int, bool]


def load_entity_scopes(t: Tables) -> str:
    """``dense_cache.load_scopes`` of the scopes' entities, at their ``ev_version``."""
    return load_scopes(t, t.entities, "ev_version", "ev_rewrites")


def detailed_of(t: Tables, seqs: bool) -> str:
    """The scope ``%s``'s versions and the near read's row (``DETAILED``) of each entity of
    ``%s`` (text[]), with its memories when it has at most ``%s`` links; one row of NULLs
    after the versions when none. One statement: one snapshot."""
    ids = "SELECT unnest(%s::text[])"
    return (
        f"WITH {_detailed(t, ids, by_key=True, seqs=seqs)} "
        f"SELECT s.ent_version, s.mem_version, {DETAILED} FROM {t.scopes} s "
        "LEFT JOIN detailed d ON TRUE WHERE s.id = %s"
    )


class EntityVectors(DenseCache):
    """The store's cache of its scopes' entity vectors at their ``ent_version``, normalised."""

    def __init__(
        self, db: Database, t: Tables, dim: int, max_bytes: int = DEFAULT_ENTITY_VECTOR_BYTES
    ) -> None:
        super().__init__(db, t, dim, max_bytes)

    def _statement(self) -> str:
        return load_entity_scopes(self._t)

    def _loaded(self, rows: Sequence[Sequence[Any]], committed: bool) -> LoadedScope:
        loaded = super()._loaded(rows, committed)
        if loaded.vectors is not None and len(loaded.vectors):
            _normalise(loaded.vectors)
        return loaded

    def follow(
        self, scope_id: int, version: int, inserted: Sequence[NewEntity], seqs: dict[str, int]
    ) -> None:
        """After this process's write inserts ``inserted`` (entity id -> seq: ``seqs``) into
        the scope in one statement, moving it to ``version``, and once the write commits:
        the new rows appended when the cache holds the scope at the version before
        (normalised, as a load normalises them); else the scope is dropped (it reloads when
        next searched)."""
        if not self.matrices.holds(scope_id, version - 1):
            self.matrices.drop(scope_id)
            return
        ids = [e.id for e in inserted]
        vectors = np.stack([np.asarray(e.vector, dtype=np.float32) for e in inserted])
        _normalise(vectors)
        keys, versions = [seqs[i] for i in ids], (version - 1, version)
        self._db.after_commit(lambda: self.matrices.extend(scope_id, versions, keys, ids, vectors))

    def held(self, scope_id: int, version: int) -> ScopeMatrix | None:
        """The scope's entity vectors when held at exactly ``version``."""
        return (
            self.matrices.get(scope_id, version) if self.matrices.holds(scope_id, version) else None
        )


def _normalise(vectors: np.ndarray) -> None:
    """Scale each row of ``vectors`` (float32) to unit length, in place (zero rows kept)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    np.divide(vectors, norms, out=vectors, where=norms > 0)


class NearDetails(VersionedRows):
    """Per scope, each entity's near row (``DETAILED``'s columns) as read at its versions and
    in its shape (``Shape``); carried across this process's own adds but for the entities
    they wrote (``write_follow``)."""

    def __init__(self, max_bytes: int = DEFAULT_NEAR_BYTES) -> None:
        super().__init__(max_bytes, _near_row_bytes, _SCOPE_BYTES)


def _near_row_bytes(row: tuple[Any, ...]) -> int:
    return _ROW_BYTES + _LINK_BYTES * len(row[9] or ())


class NearCacheReads:
    """``SearchReads``' nearest entities from the caches (a mixin; the state is
    ``SearchReads``')."""

    _store: Any
    _t: Tables
    _plan: Any
    _view: Any
    _entity_vectors: np.ndarray
    _links_max: int
    #: The exact nearest entities per query entity vector (None: the server's near read).
    _near_hits: list[list[tuple[str, float]]] | None = None
    _near_rows: dict[str, tuple[Any, ...]]
    _near_missing: list[str]

    _scope_ids: list[int] | None
    _scope_stats: list[ScopeStats]

    def _queue_near(self, conn: Any) -> Any:
        """The server's near read (``search_sql.nearest_entities_detailed``) on ``conn``."""
        plan = self._plan
        conn.execute(ann_settings(), (ef_search(plan.entity_k),))
        statement = q.nearest_entities_detailed(
            self._t,
            in_scopes("x.scope_id", self._scope_ids),
            [vector_literal(v) for v in self._entity_vectors],
            plan.entity_k,
            plan.entity_min_similarity,
            EXACT_ENTITIES,
            self._links_max,
            # Without seqs when every list is of a specific entity, whose memories the pool
            # reads with theirs (``_sequence_lists``): no memory lookup per link.
            seqs=self._near_shape()[1],
        )
        return conn.execute(*statement, binary=True)

    def _near_shape(self) -> Shape:
        return (self._links_max, self._plan.hop_max_links > self._plan.specific_max_links)

    def _queue_near_cached(self, conn: Any, side: Any) -> tuple[bool, Any | None, Any | None]:
        """Whether the nearest entities come from the caches (then a cursor of the rows they
        lack, or None); else, a cursor of the scope's entity vectors to keep when the
        searches before at these versions call for them (None: not)."""
        view = self._view
        if view is None or not len(self._entity_vectors):
            return False, None, None
        vectors = self._store.entity_vectors
        matrix = vectors.held(view.scope_id, self._scope_stats[0].entity_vectors_version)
        if matrix is None:
            if view.searches < 1:
                return False, None, None
            return False, None, vectors.queue_load(side, [view.scope_id])
        plan = self._plan
        queries = np.asarray(self._entity_vectors, dtype=np.float32)
        norms = np.linalg.norm(queries, axis=1, keepdims=True)
        queries = np.divide(queries, norms, out=np.zeros_like(queries), where=norms > 0)
        reads = DenseReads([matrix])
        minimum = plan.entity_min_similarity
        self._near_hits = [
            [(i, s) for i, s in reads.top(q, plan.entity_k) if s >= minimum] for q in queries
        ]
        wanted = list(dict.fromkeys(i for hits in self._near_hits for i, _ in hits))
        shape = self._near_shape()
        held = self._store.near_details.lookup(view.scope_id, view.versions, wanted, shape)
        self._near_rows = held
        self._near_missing = [i for i in wanted if i not in held]
        if not self._near_missing:
            return True, None, None
        statement = detailed_of(self._t, shape[1])
        args = [self._near_missing, self._links_max, view.scope_id]
        return True, conn.execute(statement, args, binary=True), None

    def _take_entity_vectors(self, cursor: Any | None) -> None:
        """Keep the entity vectors read (at the version they were read at)."""
        view = self._view
        if cursor is None or view is None:
            return
        version = self._scope_stats[0].entity_vectors_version
        self._store.entity_vectors.take(cursor.fetchall(), [(view.scope_id, version)])

    def _cached_near_rows(self, cursor: Any | None) -> list[tuple[Any, ...]] | None:
        """The near read's rows (ord, id, sim, ``DETAILED``) from the hits and the rows held
        and read; None when those read are not at the search's versions."""
        view, hits = self._view, self._near_hits
        assert view is not None and hits is not None
        rows = dict(self._near_rows)
        if cursor is not None:
            read = cursor.fetchall()
            if not read or (read[0][0], read[0][1]) != view.versions:
                return None
            fresh = {row[2]: tuple(row[2:]) for row in read if row[2] is not None}
            if set(self._near_missing) - fresh.keys():
                return None
            self._store.near_details.remember(
                view.scope_id, view.versions, fresh, self._near_shape()
            )
            rows.update(fresh)
        return [(o, i, s, *rows[i]) for o, found in enumerate(hits, 1) for i, s in found]
