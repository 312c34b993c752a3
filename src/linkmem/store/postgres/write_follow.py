"""Search caches carried across this process's own adds (PostgreSQL).

The pool's rows, the near rows and the entity records, hub lists and hop index
(``caches.memory_rows``, ``search_near_cache``, ``caches.entity_records``) are held per
scope at its ``(ent_version, mem_version)``, which every write moves on. An agent that
remembers, then recalls, wrote between every two searches, and each search after an add read
all of them again: four round trips, against one for a warm search. An add only appends
(memories, their postings, entities, links to them), so what it did not touch is still
what the server holds. When a transaction's writes to a scope were adds alone, its entries
are carried, once it commits, from the versions before it to the versions it left: the
entities it linked or inserted lose their records and near rows (read again when a search
needs them), their lists gain the memories it linked them to (``link`` notes the pairs), and
the hop index takes the rows the statement before the commit read of them. The memory
vectors, postings and entity vectors follow adds on their own (``dense_cache``,
``search_keyword_reads``, ``search_near_cache.EntityVectors``).

Adds alone: every writer locks its scopes first (``sql.lock_scopes``). ``put_memories`` takes
the lock with the scopes' versions and rewrite counts (``LOCK_WITH_VERSIONS``: the lock
holds them until the commit); ``insert_entities`` and ``link`` take it as appends and name
the entities they write; any other writer's lock spoils the transaction (``spoil``). Just
before the commit the versions are read again (one statement); the rewrite counts (``m014``,
``m015``: updates and deletes of memories, entity vectors, postings, counted by triggers)
must not have moved. An entry is carried only from exactly the versions before: one a search
has replaced since, or one held at other versions, stays as it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from linkmem.store.caches.following import Following, HopRows, Stamp, Versions
from linkmem.store.postgres.add_log import log_adds, log_args
from linkmem.store.postgres.connection import Database
from linkmem.store.postgres.sql import Tables

_COLUMNS = "id, ent_version, mem_version, mem_rewrites, ev_rewrites, kw_rewrites"
#: A scope carried: its versions before and after, and its hop index's rows.
Carried = tuple[int, Versions, Versions, HopRows]


def lock_with_versions(t: Tables) -> str:
    """``sql.lock_scopes`` returning each scope's versions and rewrite counts."""
    return (
        f"SELECT {_COLUMNS} FROM {t.scopes} WHERE id = ANY(%s::bigint[]) "
        "ORDER BY id FOR NO KEY UPDATE"
    )


def stamps_and_hops(t: Tables, hops: bool) -> str:
    """The stamps of the scopes ``= ANY(%s)`` and, with ``hops``, each with the own links of
    its entities ``= ANY(%s)`` that have 2 to ``%s`` own links (what ``HopIndex`` holds of
    them; one row of NULLs after the stamp when none). One statement."""
    stamps = f"s.{_COLUMNS.replace(', ', ', s.')}"
    if not hops:
        return f"SELECT {stamps}, NULL, NULL FROM {t.scopes} s WHERE s.id = ANY(%s::bigint[])"
    return (
        f"SELECT {stamps}, x.entity, x.memory FROM {t.scopes} s LEFT JOIN LATERAL (SELECT "
        f"l.entity, l.memory FROM {t.entities} e JOIN {t.link_counts} c ON c.entity = e.id "
        f"AND c.n BETWEEN 2 AND %s JOIN {t.links} l ON l.entity = e.id AND l.own "
        "WHERE e.scope_id = s.id AND e.id = ANY(%s::text[])) x ON TRUE "
        "WHERE s.id = ANY(%s::bigint[])"
    )


class WriteFollower:
    """Notes an open transaction's adds and carries the caches after its commit."""

    def __init__(self, db: Database, t: Tables, store: Any) -> None:
        self._db = db
        self._t = t
        self._store = store

    def locked(self, rows: Iterable[Sequence[Any]]) -> None:
        """``put_memories`` locked scopes with ``lock_with_versions``' ``rows``: follow those
        first locked in this transaction (a spoiled one follows none)."""
        following = self._following(create=True)
        if following is None or following.spoiled:
            return
        first = [following.began(scope_id, tuple(stamp)) for scope_id, *stamp in rows]
        if any(first):
            self._db.before_commit(self._stamp_after)

    def wrote_entities(self, entity_ids: Iterable[str]) -> None:
        """An append linked or inserted ``entity_ids``."""
        following = self._following(create=False)
        if following is not None:
            following.entities.update(entity_ids)

    def wrote_links(self, pairs: Iterable[tuple[str, str]]) -> None:
        """An append linked (memory id, entity id) ``pairs``."""
        following = self._following(create=False)
        if following is not None:
            following.links(pairs)

    def spoil(self) -> None:
        """This transaction writes more than adds: nothing is carried."""
        following = self._following(create=True)
        if following is not None:
            following.spoiled = True

    def _following(self, create: bool) -> Following | None:
        state = self._db.transaction_state()
        if state is None:
            return None
        if create and "following" not in state:
            state["following"] = Following()
        return state.get("following")

    def _stamp_after(self, conn: Any) -> None:
        """The stamps after this transaction's adds, and the hop index's rows of the entities
        they wrote when one is held; the caches carried once it commits."""
        following = self._following(create=False)
        if following is None or following.spoiled:
            return
        cache = self._store.entity_cache
        held = {s: cache.hop_max_links(s, (v[0], v[1])) for s, v in following.before.items()}
        max_links = next((m for m in held.values() if m is not None), None)
        scope_ids = sorted(following.before)
        hops = max_links is not None and bool(following.entities)
        args = [max_links, sorted(following.entities), scope_ids] if hops else [scope_ids]
        after: dict[int, Stamp] = {}
        hop_links: dict[int, list[tuple[str, str]]] = {}
        # For other processes (``add_log``).
        logged = log_args(following.before, following.entities, following.linked)
        statement = log_adds(self._t) + stamps_and_hops(self._t, hops)
        for scope_id, *stamp, entity_id, memory_id in self._db.execute(
            conn, statement, [*logged, *args]
        ):
            after[scope_id] = tuple(stamp)
            if entity_id is not None:
                hop_links.setdefault(scope_id, []).append((entity_id, memory_id))
        carried: list[Carried] = [
            (scope_id, was, now, _hops(max_links, hop_links.get(scope_id, [])))
            for scope_id, was, now in following.carried(after)
        ]
        entities, linked = frozenset(following.entities), following.linked
        if carried:
            self._db.after_commit(lambda: self._carry(carried, entities, linked))

    def _carry(
        self, carried: list[Carried], entities: frozenset[str], linked: dict[str, set[str]]
    ) -> None:
        store = self._store
        for scope_id, was, now, hops in carried:
            store.row_cache.advance(scope_id, was, now)
            store.near_details.advance(scope_id, was, now, entities)
            store.entity_cache.advance(scope_id, was, now, entities, hops, linked)


def _hops(max_links: int | None, links: list[tuple[str, str]]) -> HopRows:
    return None if max_links is None else (max_links, links)
