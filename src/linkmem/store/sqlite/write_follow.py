"""The entity cache carried across this process's own adds (SQLite; ``caches.following``).

The entity records, hub lists and hop index of a scope (``caches.entity_records``) are held
at its ``(ent_version, mem_version)``, which an add moves on: each search after an add read
the entities it matched and the hubs' links to its candidates again (~2 ms of a 10k-memory
scope's search). ``put_memories`` notes the scope's stamp (versions and rewrite counts)
before it moves the version, ``insert_entities`` and ``link`` the entities they write; any
other write that moves a version (``MemoryTables._bump`` and the version updates of deletes,
repairs and resets) spoils the transaction. The write transaction holds the file's write
lock, so nothing else moves the stamp between; just before the commit it is read again with
the own links of the written entities that the hop index can hold, and after the commit a
scope whose rewrite counts (``m006``) did not move has its entry carried, without the
written entities' records; their lists gain the memories the transaction linked them to
(``link`` notes the pairs).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from linkmem.store.caches.following import Following, HopRows, Stamp, Versions
from linkmem.store.sqlite.add_log import log_adds
from linkmem.store.sqlite.entity_cache import hop_links

_STAMP = "ent_version, mem_version, mem_rewrites, ent_rewrites, kw_rewrites"


class WriteFollower:
    """Notes a write transaction's adds and carries the entity cache after its commit."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def stamp(self, scope_id: int) -> Stamp:
        """The scope's stamp now (in the open transaction)."""
        store = self._store
        rows = store.db.rows(f"SELECT {_STAMP} FROM {store.c}_scopes WHERE id = ?", [scope_id])
        return tuple(rows[0])

    def began(self, scope_id: int, stamp: Stamp) -> None:
        """``put_memories`` is about to move the scope on from ``stamp``."""
        following = self._following()
        if following is not None and following.began(scope_id, stamp):
            self._store.db.before_commit(self._stamp_after)

    def wrote_entities(self, entity_ids: Iterable[str]) -> None:
        following = self._following()
        if following is not None:
            following.entities.update(entity_ids)

    def wrote_links(self, pairs: Iterable[tuple[str, str]]) -> None:
        """An append linked (memory id, entity id) ``pairs``."""
        following = self._following()
        if following is not None:
            following.links(pairs)

    def spoil(self) -> None:
        following = self._following()
        if following is not None:
            following.spoiled = True

    def _following(self) -> Following | None:
        db = self._store.db
        if not db.in_transaction:
            return None
        return db.state.setdefault("following", Following())

    def _stamp_after(self) -> None:
        following = self._following()
        if following is None or following.spoiled:
            return
        after = {scope_id: self.stamp(scope_id) for scope_id in following.before}
        entities, linked = frozenset(following.entities), following.linked
        carried = [
            (scope_id, was, now, self._hop_rows(scope_id, was, entities))
            for scope_id, was, now in following.carried(after)
        ]
        if carried:
            # For other processes (``add_log``).
            log_adds(self._store, [c[:3] for c in carried], entities, linked)
            self._store.db.after_commit(lambda: self._carry(carried, entities, linked))

    def _carry(
        self,
        carried: list[tuple[int, Versions, Versions, HopRows]],
        entities: frozenset[str],
        linked: dict[str, set[str]],
    ) -> None:
        for scope_id, was, now, hops in carried:
            self._store.entity_cache.advance(scope_id, was, now, entities, hops, linked)

    def _hop_rows(self, scope_id: int, versions: Versions, entities: frozenset[str]) -> HopRows:
        """The own links of ``entities`` that the scope's ``HopIndex`` held at ``versions``
        now holds (those with 2 to its ``max_links`` own links); None when none is held."""
        max_links = self._store.entity_cache.hop_max_links(scope_id, versions)
        if max_links is None or not entities:
            return None if max_links is None else (max_links, [])
        ids = sorted(entities)
        statement = hop_links(self._store.c, len(ids))
        rows = self._store.db.rows(statement, [scope_id, *ids, max(0, max_links)])
        return max_links, [(r[0], r[1]) for r in rows]
