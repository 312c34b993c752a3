"""The entity collection (``<collection>_entities``) and its links on PostgreSQL.

Concurrent writers never duplicate an entity or lose a link: entities are inserted with
``ON CONFLICT DO NOTHING`` on ``(scope_id, key)`` and then read back, links with
``ON CONFLICT DO NOTHING`` on ``(entity, memory)``; no list of ids is read, changed and written.
Every write locks its scopes first (``sql.lock_scopes``), so writers of one scope queue up and
cannot deadlock on links and entities.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from linkmem.errors import NotFound
from linkmem.store.base import NewEntity
from linkmem.store.postgres import entity_sql as q
from linkmem.store.postgres import search_sql, sql
from linkmem.store.postgres.connection import Database, one_connection, retried
from linkmem.store.postgres.memories import ef_search, exact_scope_params
from linkmem.store.postgres.sql import Tables, ann_settings, existing_ids, vector_literal
from linkmem.store.postgres.write_follow import WriteFollower
from linkmem.types import EntityRecord, Scope

if TYPE_CHECKING:  # search_near_cache reads this module
    from linkmem.store.postgres.search_near_cache import EntityVectors


def stored_by_key(rows: Sequence[Sequence[Any]]) -> dict[str, tuple[str, np.ndarray]]:
    """``entities_by_key``'s answer from its rows (key, kind, ``vector_send`` bytes)."""
    found: dict[str, tuple[str, np.ndarray]] = {}
    for key, kind, raw in rows:
        vector = np.frombuffer(bytes(raw), dtype=">f4", offset=4).astype("<f4")
        found.setdefault(key, (kind, vector))
    return found


#: Entity searches over at most this many entities are exact; larger ones use the HNSW index.
EXACT_ENTITIES = 5_000


class EntityTables:
    """The entity half of the PostgreSQL store."""

    db: Database
    t: Tables
    entity_vectors: EntityVectors
    follower: WriteFollower

    @one_connection
    def find_entities(self, scope: Scope, keys: Sequence[str]) -> dict[str, str]:
        scope_id = self._scope_id(scope, create=False)  # type: ignore[attr-defined]
        if scope_id is None or not keys:
            return {}
        return dict(self.db.rows(q.find_entities(self.t), (scope_id, list(keys))))

    @one_connection
    def entities_by_key(
        self, scope: Scope, keys: Sequence[str]
    ) -> dict[str, tuple[str, np.ndarray]]:
        if not keys:
            return {}
        items = scope.items()
        statement = search_sql.entities_by_key(self.t, [k for k, _ in items])
        rows = self.db.rows(statement, [*(v for _, v in items), list(dict.fromkeys(keys))])
        return stored_by_key(rows)

    @one_connection
    def nearest_entities(
        self, scope: Scope, vectors: np.ndarray, k: int, min_similarity: float, exact_scope: bool
    ) -> list[list[tuple[str, float]]]:
        queries = [vector_literal(v) for v in np.asarray(vectors)]
        out: list[list[tuple[str, float]]] = [[] for _ in queries]
        if exact_scope:
            scope_id = self._scope_id(scope, create=False)  # type: ignore[attr-defined]
            scope_ids = None if scope_id is None else [scope_id]
        else:
            scope_ids = self._scope_ids(scope)  # type: ignore[attr-defined]
        if not queries or k <= 0 or scope_ids == [] or (exact_scope and scope_ids is None):
            return out
        scope_sql = "TRUE" if scope_ids is None else "x.scope_id = ANY(%s::bigint[])"
        scope_args = [] if scope_ids is None else [scope_ids]
        with self.db.transaction() as conn:
            rows = self._nearest(conn, scope_sql, scope_args, queries, k, min_similarity)
            for ordinal, eid, sim in rows:
                out[ordinal - 1].append((eid, float(sim)))
        return out

    def _nearest(
        self,
        conn: Any,
        scope_sql: str,
        scope_args: list[Any],
        queries: list[str],
        k: int,
        min_similarity: float,
    ) -> Any:
        """Exact up to ``EXACT_ENTITIES`` entities in the scopes, HNSW beyond."""
        count = self.db.execute(
            conn, q.count_entities_capped(self.t, scope_sql), [*scope_args, EXACT_ENTITIES + 1]
        ).fetchone()[0]
        if count <= EXACT_ENTITIES:
            return self.db.execute(
                conn,
                q.nearest_entities_exact(self.t, scope_sql),
                [queries, *scope_args, min_similarity, k],
            )
        self.db.execute(conn, ann_settings(), (ef_search(k),))
        return self.db.execute(
            conn,
            q.nearest_entities_ann(self.t, scope_sql),
            [queries, *scope_args, k, min_similarity],
        )

    @retried
    def insert_entities(self, entities: Sequence[NewEntity]) -> dict[str, str]:
        if not entities:
            return {}
        now = datetime.now(UTC).isoformat()
        by_scope: dict[Scope, list[NewEntity]] = defaultdict(list)
        for e in entities:
            by_scope[e.scope].append(e)
        out: dict[str, str] = {}
        with self.db.transaction() as conn:
            scope_ids = {
                s: self._scope_id(s)  # type: ignore[attr-defined]
                for s in sorted(by_scope, key=exact_scope_params)
            }
            self.db.execute(conn, sql.lock_scopes(self.t), (sorted(scope_ids.values()),))
            for scope in sorted(by_scope, key=scope_ids.__getitem__):
                group = by_scope[scope]
                scope_id = scope_ids[scope]
                seqs = self.db.execute(
                    conn,
                    q.insert_entities(self.t),
                    (
                        scope_id,
                        now,
                        [e.id for e in group],
                        [e.key for e in group],
                        [e.text for e in group],
                        [e.kind for e in group],
                        [vector_literal(e.vector) for e in group],
                    ),
                ).fetchall()
                self._follow_entity_vectors(conn, scope_id, group, dict(seqs))
                self.follower.wrote_entities(entity_id for entity_id, _ in seqs)
                out.update(self.find_entities(scope, [e.key for e in group]))
        return out

    def _follow_entity_vectors(
        self, conn: Any, scope_id: int, group: list[NewEntity], seqs: dict[str, int]
    ) -> None:
        """The inserted entities (``seqs``: id -> seq, from the insert) appended to the
        process's entity vectors once the write commits (``EntityVectors.follow``); an
        insert that inserted none moved no version."""
        if not seqs:
            return
        version = self.db.execute(conn, q.entity_vectors_version(self.t), (scope_id,)).fetchone()
        inserted = [e for e in group if e.id in seqs]
        self.entity_vectors.follow(scope_id, version[0], inserted, seqs)

    @retried
    def link(self, pairs: Sequence[tuple[str, str]], own: bool = True) -> None:
        if not pairs:
            return
        pairs = sorted(set(pairs))
        with self.db.transaction() as conn:
            self._lock_scopes_of(conn, self.t.mem, [m for m, _ in pairs], appends=True)  # type: ignore[attr-defined]
            self.follower.wrote_links(pairs)
            self._require(conn, self.t.mem, {m for m, _ in pairs})
            self._require(conn, self.t.entities, {e for _, e in pairs})
            self.db.execute(
                conn,
                q.insert_links(self.t),
                (own, [e for _, e in pairs], [m for m, _ in pairs]),
            )

    def _require(self, conn: Any, table: str, ids: set[str]) -> None:
        found = {r[0] for r in self.db.execute(conn, existing_ids(table), (sorted(ids),))}
        missing = ids - found
        if missing:
            raise NotFound(f"cannot link unknown ids {sorted(missing)[:5]}")

    @retried
    def unlink_memories(self, memory_ids: Sequence[str]) -> list[str]:
        if not memory_ids:
            return []
        with self.db.transaction() as conn:
            self._lock_scopes_of(conn, self.t.mem, memory_ids)  # type: ignore[attr-defined]
            rows = self.db.execute(conn, q.delete_links_of_memories(self.t), (list(memory_ids),))
            return sorted({r[0] for r in rows})

    @retried
    def drop_orphan_entities(self, entity_ids: Sequence[str]) -> int:
        if not entity_ids:
            return 0
        with self.db.transaction() as conn:
            self._lock_scopes_of(conn, self.t.entities, entity_ids)  # type: ignore[attr-defined]
            # Lock first: a concurrent link to one of them then commits before the check below.
            self.db.execute(conn, q.lock_entities(self.t), (sorted(set(entity_ids)),))
            return self.db.execute(conn, q.delete_orphans(self.t), (list(entity_ids),)).rowcount

    def count_entities(self) -> int:
        return int(self.db.value(f"SELECT count(*) FROM {self.t.entities}"))

    def get_entities(self, ids: Sequence[str]) -> list[EntityRecord]:
        if not ids:
            return []
        rows = self.db.rows(q.select_entities(self.t, "e.id = ANY(%s::text[])"), (list(ids),))
        found = {r[0]: _entity_from_row(r) for r in rows}
        return [found[i] for i in ids if i in found]

    @one_connection
    def list_entities(
        self, scope: Scope, order: str, limit: int, offset: int = 0
    ) -> list[EntityRecord]:
        scope_ids = self._scope_ids(scope)  # type: ignore[attr-defined]
        if scope_ids == []:
            return []
        where, args = (
            ("TRUE", []) if scope_ids is None else ("e.scope_id = ANY(%s::bigint[])", [scope_ids])
        )
        rows = self.db.rows(q.list_entities(self.t, where, order), [*args, limit, offset])
        return [_entity_from_row(r) for r in rows]

    def memories_of_entities(
        self, entity_ids: Sequence[str], own_only: bool = False
    ) -> dict[str, list[str]]:
        out: dict[str, list[str]] = defaultdict(list)
        if entity_ids:
            statement = q.memories_of_entities(self.t, own_only)
            for eid, mid in self.db.rows(statement, (list(entity_ids),)):
                out[eid].append(mid)
        return dict(out)

    @one_connection
    def entities_of_memories(self, memory_ids: Sequence[str]) -> dict[str, list[EntityRecord]]:
        out: dict[str, list[EntityRecord]] = defaultdict(list)
        if not memory_ids:
            return {}
        rows = self.db.rows(q.entities_of_memories(self.t), (list(memory_ids),))
        records = {e.id: e for e in self.get_entities(list({r[1] for r in rows}))}
        for mid, eid in rows:
            out[mid].append(records[eid])
        return dict(out)

    @one_connection
    def cooccurring_entities(self, entity_id: str, limit: int) -> list[tuple[EntityRecord, int]]:
        rows = self.db.rows(q.cooccurring(self.t), (entity_id, limit))
        records = {e.id: e for e in self.get_entities([r[0] for r in rows])}
        return [(records[eid], int(shared)) for eid, shared in rows]

    @retried
    def merge_entities(self, keep_id: str, drop_id: str) -> None:
        with self.db.transaction() as conn:
            self._require_entities(conn, [keep_id, drop_id])
            self.db.execute(conn, q.move_links(self.t), (keep_id, drop_id))
            self.db.execute(conn, q.delete_entity(self.t), (drop_id,))

    @retried
    def rename_entity(self, entity_id: str, text: str, key: str, vector: np.ndarray) -> None:
        with self.db.transaction() as conn:
            self._require_entities(conn, [entity_id])
            self.db.execute(
                conn, q.rename_entity(self.t), (text, key, vector_literal(vector), entity_id)
            )

    def _require_entities(self, conn: Any, ids: list[str]) -> None:
        """Lock the entities (their scopes first); ``NotFound`` when one is missing."""
        self._lock_scopes_of(conn, self.t.entities, ids)  # type: ignore[attr-defined]
        found = {r[0] for r in self.db.execute(conn, q.lock_entities(self.t), (sorted(ids),))}
        missing = [i for i in ids if i not in found]
        if missing:
            raise NotFound(f"no entity with id {missing[0]!r}; list them with entities()")


def _entity_from_row(row: Sequence[Any]) -> EntityRecord:
    return EntityRecord(
        id=row[0],
        text=row[1],
        key=row[2],
        kind=row[3],
        scope=Scope(*(v or None for v in row[4:7])),
        link_count=int(row[7]),
    )
