"""The SQLite half of the entity cache (``linkmem.store.caches.entity_records``, whose names
are re-exported here): the ``HopIndex`` of a scope read in one snapshot. The records and link
lists are read by ``EntitySearchReads._read_entities`` (``sqlite.entity_reads``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from linkmem.store.caches.entity_reads import EntityReads, ScopeView
from linkmem.store.caches.entity_records import (
    DEFAULT_ENTITY_CACHE_BYTES,
    HOP_MEMORIES_PER_SEARCH,
    LINKS_PER_SEARCH,
    EntityCache,
    HopIndex,
    LoadedEntities,
    Versions,
)
from linkmem.store.sqlite.connection import placeholders
from linkmem.types import EntityRecord, Scope

__all__ = [
    "DEFAULT_ENTITY_CACHE_BYTES",
    "HOP_MEMORIES_PER_SEARCH",
    "LINKS_PER_SEARCH",
    "EntityCache",
    "EntityReads",
    "HopIndex",
    "LoadedEntities",
    "ScopeView",
    "read_hop_index",
]


def read_hop_index(
    store: Any, scope_id: int, max_links: int
) -> tuple[HopIndex, Versions | None, bool]:
    """The scope's ``HopIndex`` (entities of the scope: a memory is linked to its scope's
    entities), the scope's versions it was read at and whether from committed data; one
    snapshot. An entity's own links are walked only up to the ``max_links``-th."""
    c, db = store.c, store.db
    with db.snapshot() as committed:
        links = db.rows(hop_links(c), [scope_id, max(0, max_links)])
        versions = db.rows(
            f"SELECT ent_version, mem_version FROM {c}_scopes WHERE id = ?", [scope_id]
        )
    found = (versions[0][0], versions[0][1]) if versions else None
    return HopIndex.of_links(max_links, links), found, committed


def hop_links(c: str, of_entities: int = 0) -> str:
    """The own links (entity id, memory id) of the scope ``?``'s entities of 2 to ``?`` own
    links, by entity and memory rowid; with ``of_entities``, only of that many entity ids
    (``?`` each, after the scope's)."""
    among = f" AND e.id IN ({placeholders(of_entities)})" if of_entities else ""
    return (
        f"SELECT e.id, m.id FROM {c}_entities e "
        f"JOIN {c}_links l ON l.entity = e.rowid AND l.own JOIN {c} m ON m.rowid = l.memory "
        f"WHERE e.scope_id = ?{among} AND EXISTS (SELECT 1 FROM {c}_links o "
        "WHERE o.entity = e.rowid AND o.own LIMIT 1 OFFSET 1) AND NOT EXISTS (SELECT 1 "
        f"FROM {c}_links o WHERE o.entity = e.rowid AND o.own LIMIT 1 OFFSET ?) "
        "ORDER BY e.rowid, m.rowid"
    )


#: The name the tests and older callers use.
_read_hop_index = read_hop_index


def entity_from_row(row: Sequence[Any]) -> EntityRecord:
    """An entity record from ``EntityTables._entity_columns``' columns."""
    scope = Scope(*(v or None for v in row[4:7]))
    return EntityRecord(
        id=row[0], text=row[1], key=row[2], kind=row[3], scope=scope, link_count=row[7]
    )
