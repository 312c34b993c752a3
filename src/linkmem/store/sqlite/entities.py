"""The entity collection (``<collection>_entities``) and its links on SQLite."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from linkmem.errors import NotFound
from linkmem.store.base import NewEntity, iter_chunks
from linkmem.store.caches.entity_records import EntityCache
from linkmem.store.sqlite.connection import CHUNK, Connection, placeholders
from linkmem.store.sqlite.entity_cache import entity_from_row
from linkmem.store.sqlite.entity_reads import EntitySearchReads
from linkmem.store.sqlite.memories import scope_loader
from linkmem.store.sqlite.sql import exact_scope_params, scope_where
from linkmem.store.vectors import MatrixCache, encode, top_k_many
from linkmem.types import EntityRecord, Scope

if TYPE_CHECKING:  # write_follow reads the store
    from linkmem.store.sqlite.write_follow import WriteFollower

_ORDERS = {
    "links": "link_count DESC, e.key, e.rowid",
    "text": "e.key, e.rowid",
    "recent": "e.created_at DESC, e.rowid DESC",
}

#: An own link written over an inherited one turns it own; an inherited one never overrides
#: (``m005_link_origin``).
_OWN_WINS = "ON CONFLICT (entity, memory) DO UPDATE SET own = 1 WHERE excluded.own AND NOT own"


class EntityTables(EntitySearchReads):
    """The entity half of the SQLite store (its search cache's reads: ``EntitySearchReads``)."""

    db: Connection
    c: str
    follower: WriteFollower

    def _init_entities(self, dim: int, cache_bytes: int) -> None:
        loader = scope_loader(
            self.db, f"{self.c}_entities", f"{self.c}_scopes", "ent_version", "ent_rewrites"
        )
        self.entity_vectors = MatrixCache(dim, loader, cache_bytes)
        self.entity_cache = EntityCache()

    def _entity_select(self) -> str:
        return (
            f"SELECT {self._entity_columns()} "
            f"FROM {self.c}_entities e JOIN {self.c}_scopes s ON s.id = e.scope_id"
        )

    def _entity_columns(self) -> str:
        return (
            "e.id, e.text, e.key, e.kind, s.user_id, s.agent_id, s.run_id, "
            f"(SELECT count(*) FROM {self.c}_links l WHERE l.entity = e.rowid AND l.own) "
            "AS link_count"
        )

    def find_entities(self, scope: Scope, keys: Sequence[str]) -> dict[str, str]:
        scope_id = self._scope_id(scope, create=False)  # type: ignore[attr-defined]
        if scope_id is None or not keys:
            return {}
        found: dict[str, str] = {}
        for chunk in iter_chunks(list(keys), CHUNK):
            found.update(
                self.db.rows(
                    f"SELECT key, id FROM {self.c}_entities WHERE scope_id = ? "
                    f"AND key IN ({placeholders(len(chunk))})",
                    [scope_id, *chunk],
                )
            )
        return found

    def entities_by_key(
        self, scope: Scope, keys: Sequence[str]
    ) -> dict[str, tuple[str, np.ndarray]]:
        where, args = scope_where(scope)
        found: dict[str, tuple[str, np.ndarray]] = {}
        for chunk in iter_chunks(list(dict.fromkeys(keys)), CHUNK):
            rows = self.db.rows(
                f"SELECT e.key, e.kind, e.embedding FROM {self.c}_entities e "
                f"JOIN {self.c}_scopes s ON s.id = e.scope_id WHERE {where} "
                f"AND e.key IN ({placeholders(len(chunk))}) ORDER BY e.rowid",
                [*args, *chunk],
            )
            for key, kind, blob in rows:
                found.setdefault(key, (kind, np.frombuffer(blob, dtype="<f4")))
        return found

    def nearest_entities(
        self, scope: Scope, vectors: np.ndarray, k: int, min_similarity: float, exact_scope: bool
    ) -> list[list[tuple[str, float]]]:
        if exact_scope:
            params = exact_scope_params(scope)
            scopes = self.db.rows(
                f"SELECT id, ent_version FROM {self.c}_scopes WHERE user_id = ? AND "
                "agent_id = ? AND run_id = ?",
                params,
            )
        else:
            scopes = self._matching_scopes(scope, "ent_version")  # type: ignore[attr-defined]
        entries = [self.entity_vectors.get(s, v) for s, v in scopes]
        return top_k_many(entries, np.asarray(vectors), k, None, min_similarity)

    def insert_entities(self, entities: Sequence[NewEntity]) -> dict[str, str]:
        if not entities:
            return {}
        now = datetime.now(UTC).isoformat()
        out: dict[str, str] = {}
        with self.db.transaction():
            by_scope: dict[Scope, list[NewEntity]] = defaultdict(list)
            for e in entities:
                by_scope[e.scope].append(e)
            for scope, group in by_scope.items():
                scope_id = self._scope_id(scope)  # type: ignore[attr-defined]
                self.db.run_many(
                    f"INSERT OR IGNORE INTO {self.c}_entities (id, scope_id, key, text, kind, "
                    "created_at, embedding) VALUES (?,?,?,?,?,?,?)",
                    [(e.id, scope_id, e.key, e.text, e.kind, now, encode(e.vector)) for e in group],
                )
                version = self._version(scope_id, "ent_version")  # type: ignore[attr-defined]
                self._bump([scope_id], "ent_version", append=True)  # type: ignore[attr-defined]
                found = self.find_entities(scope, [e.key for e in group])
                out.update(found)
                inserted = [e for e in group if found[e.key] == e.id]
                self.follower.wrote_entities(e.id for e in inserted)
                self._extend_cache(scope_id, version, inserted)
        return out

    def _extend_cache(self, scope_id: int, version: int, inserted: list[NewEntity]) -> None:
        if not inserted:
            return
        rowids = self._entity_rowids([e.id for e in inserted])
        vectors = np.stack([np.asarray(e.vector, dtype=np.float32) for e in inserted])
        self.db.after_commit(
            lambda: self.entity_vectors.extend(
                scope_id,
                (version, version + 1),
                [rowids[e.id] for e in inserted],
                [e.id for e in inserted],
                vectors,
            )
        )

    def _entity_rowids(self, ids: Sequence[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for chunk in iter_chunks(list(ids), CHUNK):
            out.update(
                self.db.rows(
                    f"SELECT id, rowid FROM {self.c}_entities WHERE id IN "
                    f"({placeholders(len(chunk))})",
                    chunk,
                )
            )
        return out

    def link(self, pairs: Sequence[tuple[str, str]], own: bool = True) -> None:
        if not pairs:
            return
        with self.db.transaction():
            memories = self._rowids({m for m, _ in pairs})  # type: ignore[attr-defined]
            entities = self._entity_rowids({e for _, e in pairs})
            missing = {m for m, _ in pairs} - memories.keys() | {
                e for _, e in pairs
            } - entities.keys()
            if missing:
                raise NotFound(f"cannot link unknown ids {sorted(missing)[:5]}")
            self.db.run_many(
                f"INSERT INTO {self.c}_links (entity, memory, own) VALUES (?, ?, ?) {_OWN_WINS}",
                [(entities[e], memories[m], int(own)) for m, e in pairs],
            )
            self.follower.wrote_links(pairs)
            self._links_changed("rowid", list(entities.values()), append=True)

    def unlink_memories(self, memory_ids: Sequence[str]) -> list[str]:
        touched: set[str] = set()
        with self.db.transaction():
            for chunk in iter_chunks(list(memory_ids), CHUNK):
                marks = placeholders(len(chunk))
                sub = f"SELECT rowid FROM {self.c} WHERE id IN ({marks})"
                touched.update(
                    r[0]
                    for r in self.db.rows(
                        f"SELECT DISTINCT e.id FROM {self.c}_links l JOIN {self.c}_entities e "
                        f"ON e.rowid = l.entity WHERE l.memory IN ({sub})",
                        chunk,
                    )
                )
                self.db.run(f"DELETE FROM {self.c}_links WHERE memory IN ({sub})", chunk)
            self._links_changed("id", sorted(touched))
        return sorted(touched)

    def _links_changed(self, column: str, entities: Sequence[Any], append: bool = False) -> None:
        """Bump the ``ent_version`` of the scopes of ``entities`` (their ``column``: id or
        rowid), whose links changed: the entity cache (``entity_cache``) holds link lists at
        it. Their vectors did not change: a cached matrix moves to the new version with the
        commit."""
        scopes: set[int] = set()
        for chunk in iter_chunks(list(entities), CHUNK):
            scopes.update(
                r[0]
                for r in self.db.rows(
                    f"SELECT DISTINCT scope_id FROM {self.c}_entities "
                    f"WHERE {column} IN ({placeholders(len(chunk))})",
                    chunk,
                )
            )
        no_rows = np.zeros((0, self.dim), dtype=np.float32)  # type: ignore[attr-defined]
        for scope_id in sorted(scopes):
            version = self._version(scope_id, "ent_version")  # type: ignore[attr-defined]
            self._bump([scope_id], "ent_version", append)  # type: ignore[attr-defined]
            self.db.after_commit(
                lambda s=scope_id, v=version: self.entity_vectors.extend(
                    s, (v, v + 1), [], [], no_rows
                )
            )

    def drop_orphan_entities(self, entity_ids: Sequence[str]) -> int:
        dropped = 0
        with self.db.transaction():
            for chunk in iter_chunks(list(entity_ids), CHUNK):
                where = (
                    f"id IN ({placeholders(len(chunk))}) AND NOT EXISTS (SELECT 1 FROM "
                    f"{self.c}_links l WHERE l.entity = {self.c}_entities.rowid AND l.own)"
                )
                # No memory names them: their inherited links go with them.
                self.db.run(
                    f"DELETE FROM {self.c}_links WHERE entity IN "
                    f"(SELECT rowid FROM {self.c}_entities WHERE {where})",
                    chunk,
                )
                scopes = [
                    r[0]
                    for r in self.db.rows(
                        f"SELECT DISTINCT scope_id FROM {self.c}_entities WHERE {where}", chunk
                    )
                ]
                dropped += self.db.run(f"DELETE FROM {self.c}_entities WHERE {where}", chunk)
                self._bump(scopes, "ent_version")  # type: ignore[attr-defined]
        return dropped

    def count_entities(self) -> int:
        return self.db.rows(f"SELECT count(*) FROM {self.c}_entities")[0][0]

    def get_entities(self, ids: Sequence[str]) -> list[EntityRecord]:
        found: dict[str, EntityRecord] = {}
        for chunk in iter_chunks(list(ids), CHUNK):
            rows = self.db.rows(
                f"{self._entity_select()} WHERE e.id IN ({placeholders(len(chunk))})", chunk
            )
            found.update((r[0], entity_from_row(r)) for r in rows)
        return [found[i] for i in ids if i in found]

    def list_entities(
        self, scope: Scope, order: str, limit: int, offset: int = 0
    ) -> list[EntityRecord]:
        where, args = scope_where(scope)
        rows = self.db.rows(
            f"{self._entity_select()} WHERE {where} ORDER BY {_ORDERS[order]} LIMIT ? OFFSET ?",
            [*args, limit, offset],
        )
        return [entity_from_row(r) for r in rows]

    def memories_of_entities(
        self, entity_ids: Sequence[str], own_only: bool = False
    ) -> dict[str, list[str]]:
        out: dict[str, list[str]] = defaultdict(list)
        own = " AND l.own" if own_only else ""
        for chunk in iter_chunks(list(entity_ids), CHUNK):
            rows = self.db.rows(
                f"SELECT e.id, m.id FROM {self.c}_links l JOIN {self.c}_entities e "
                f"ON e.rowid = l.entity JOIN {self.c} m ON m.rowid = l.memory "
                f"WHERE e.id IN ({placeholders(len(chunk))}){own} ORDER BY m.rowid",
                chunk,
            )
            for eid, mid in rows:
                out[eid].append(mid)
        return dict(out)

    def entities_of_memories(self, memory_ids: Sequence[str]) -> dict[str, list[EntityRecord]]:
        out: dict[str, list[EntityRecord]] = defaultdict(list)
        for chunk in iter_chunks(list(memory_ids), CHUNK):
            rows = self.db.rows(
                f"SELECT m.id, e.id FROM {self.c}_links l JOIN {self.c}_entities e "
                f"ON e.rowid = l.entity JOIN {self.c} m ON m.rowid = l.memory "
                f"WHERE m.id IN ({placeholders(len(chunk))}) ORDER BY e.rowid",
                chunk,
            )
            records = {e.id: e for e in self.get_entities(list({r[1] for r in rows}))}
            for mid, eid in rows:
                out[mid].append(records[eid])
        return dict(out)

    def rare_entities_of_memories(
        self, memory_ids: Sequence[str], max_links: int
    ) -> dict[str, list[EntityRecord]]:
        """``entities_of_memories`` without the entities of more than ``max_links`` own links
        (an optional read, ``linkmem.store.prefetch``): in one statement, and a hub's links are
        walked only past ``max_links``, never all counted."""
        out: dict[str, list[EntityRecord]] = defaultdict(list)
        for chunk in iter_chunks(list(memory_ids), CHUNK):
            rows = self.db.rows(
                f"SELECT m.id, {self._entity_columns()} FROM {self.c} m "
                f"CROSS JOIN {self.c}_links l ON l.memory = m.rowid "
                f"JOIN {self.c}_entities e ON e.rowid = l.entity "
                f"JOIN {self.c}_scopes s ON s.id = e.scope_id "
                f"WHERE m.id IN ({placeholders(len(chunk))}) AND NOT EXISTS (SELECT 1 FROM "
                f"{self.c}_links c WHERE c.entity = e.rowid AND c.own LIMIT 1 OFFSET ?) "
                "ORDER BY e.rowid",
                [*chunk, max(0, max_links)],
            )
            for row in rows:
                out[row[0]].append(entity_from_row(row[1:]))
        return dict(out)

    def links_among(
        self, entity_ids: Sequence[str], memory_ids: Sequence[str]
    ) -> dict[str, list[str]]:
        """entity id -> those of ``memory_ids`` linked to it: a search's hub entities among its
        candidates, without reading the hubs' long link lists or the candidates' other
        entities (an optional read, ``linkmem.store.prefetch``)."""
        out: dict[str, list[str]] = defaultdict(list)
        if not entity_ids or not memory_ids:
            return {}
        # Candidates first (CROSS JOIN fixes the order): walking a hub's links by entity reads
        # all of them, the memory index reads only the candidates'. Each candidate's few links
        # are walked and their entity looked up among the hubs ("+" keeps the entity out of
        # the index search: a seek per candidate and hub took twice as long at 10k memories,
        # ~40 hubs). The ids go in as JSON arrays: one statement, whatever their number.
        rows = self.db.rows(
            f"SELECT e.id, m.id FROM {self.c} m "
            f"CROSS JOIN {self.c}_links l ON l.memory = m.rowid "
            f"JOIN {self.c}_entities e ON e.rowid = l.entity "
            "WHERE m.id IN (SELECT value FROM json_each(?)) "
            f"AND +l.entity IN (SELECT rowid FROM {self.c}_entities "
            "WHERE id IN (SELECT value FROM json_each(?)))",
            [json.dumps(list(memory_ids)), json.dumps(list(entity_ids))],
        )
        for entity_id, memory_id in rows:
            out[entity_id].append(memory_id)
        return dict(out)

    def cooccurring_entities(self, entity_id: str, limit: int) -> list[tuple[EntityRecord, int]]:
        rows = self.db.rows(
            f"SELECT o.id, count(*) AS shared FROM {self.c}_links a "
            f"JOIN {self.c}_entities me ON me.rowid = a.entity AND me.id = ? AND a.own "
            f"JOIN {self.c}_links b ON b.memory = a.memory AND b.entity != a.entity AND b.own "
            f"JOIN {self.c}_entities o ON o.rowid = b.entity "
            "GROUP BY o.id ORDER BY shared DESC, o.key LIMIT ?",
            (entity_id, limit),
        )
        records = {e.id: e for e in self.get_entities([r[0] for r in rows])}
        return [(records[eid], shared) for eid, shared in rows]

    def merge_entities(self, keep_id: str, drop_id: str) -> None:
        with self.db.transaction():
            rowids = self._entity_rowids([keep_id, drop_id])
            self.db.run(
                f"INSERT INTO {self.c}_links (entity, memory, own) "
                f"SELECT ?, memory, own FROM {self.c}_links WHERE entity = ? {_OWN_WINS}",
                (rowids[keep_id], rowids[drop_id]),
            )
            self.db.run(f"DELETE FROM {self.c}_links WHERE entity = ?", (rowids[drop_id],))
            scopes = [
                r[0]
                for r in self.db.rows(
                    f"SELECT scope_id FROM {self.c}_entities WHERE rowid IN (?, ?)",
                    (rowids[keep_id], rowids[drop_id]),
                )
            ]  # the kept entity's links changed too
            self.db.run(f"DELETE FROM {self.c}_entities WHERE rowid = ?", (rowids[drop_id],))
            self._bump(scopes, "ent_version")  # type: ignore[attr-defined]

    def rename_entity(self, entity_id: str, text: str, key: str, vector: np.ndarray) -> None:
        with self.db.transaction():
            scope_id = self.db.rows(
                f"SELECT scope_id FROM {self.c}_entities WHERE id = ?", (entity_id,)
            )[0][0]
            self.db.run(
                f"UPDATE {self.c}_entities SET text = ?, key = ?, embedding = ? WHERE id = ?",
                (text, key, encode(vector), entity_id),
            )
            self._bump([scope_id], "ent_version")  # type: ignore[attr-defined]
