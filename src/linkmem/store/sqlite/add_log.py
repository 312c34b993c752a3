"""The entity cache carried across other processes' adds, through a log of the adds (SQLite).

A process carries its entity cache across its own adds (``write_follow``); after another
process's add (or another ``Memory``'s on the same file) its next search read the entities it
matched and the hubs' links again. Each transaction ``write_follow`` carries, one of adds
alone, also writes a row here before its commit: the scope, its versions before and after,
and the entities it linked or inserted (JSON). A search whose entity cache holds a scope at
older versions reads the scope's log rows since then, its versions and the hop index's rows
of those entities in one snapshot: when the rows chain from the held versions to the current
ones, every write between was adds alone, and the entry is carried as after an own add
(``caches.following``), the lists of the entities linked gaining the memories the log's
links (``m010``) name. A write of any other kind writes no row, so the chain breaks and the
cache reads again, as before. The log keeps the last ``KEEP_VERSIONS`` memory versions of
each scope (pruned by the writers, inside their write transaction); ``reset`` empties it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from linkmem.store.caches.following import (
    HopRows,
    Linked,
    LoggedAdds,
    ScopeLog,
    Versions,
    behind,
    link_pairs,
)
from linkmem.store.sqlite.entity_cache import hop_links

#: Log rows kept per scope: those of its last this many memory versions (one per add).
KEEP_VERSIONS = 64


def log_adds(
    store: Any,
    carried: Iterable[tuple[int, Versions, Versions]],
    entities: Iterable[str],
    linked: Linked,
) -> None:
    """In the write transaction: a row for each scope carried, with the entities written
    and the links; the scope's rows older than ``KEEP_VERSIONS`` memory versions go."""
    c, db = store.c, store.db
    written, links = json.dumps(sorted(entities)), json.dumps(link_pairs(linked))
    for scope_id, (was_ent, was_mem), (now_ent, now_mem) in carried:
        db.run(
            f"INSERT INTO {c}_add_log (scope_id, before_ent, before_mem, after_ent, after_mem, "
            "entities, links) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [scope_id, was_ent, was_mem, now_ent, now_mem, written, links],
        )
        db.run(
            f"DELETE FROM {c}_add_log WHERE scope_id = ? AND after_mem < ?",
            [scope_id, now_mem - KEEP_VERSIONS],
        )


def catch_up(store: Any, scope_id: int, now: Versions) -> None:
    """Before a search of the scope at ``now``: carry its entity cache entry along the log
    when it is at older versions and the log chains from them."""
    cache = store.entity_cache
    entry = cache.held(scope_id)
    if entry is None or not behind(entry.versions, now):
        return
    held = entry.versions
    found = _read(store, scope_id, held, cache.hop_max_links(scope_id, held))
    if found is not None:
        later, adds, hops = found
        cache.advance(scope_id, held, later, adds.entities, hops, adds.linked)


def _read(
    store: Any, scope_id: int, held: Versions, max_links: int | None
) -> tuple[Versions, LoggedAdds, HopRows] | None:
    """The scope's versions now, what was written since ``held`` and the hop index's rows
    of the entities written (with ``max_links``), from one snapshot; None when the log does
    not chain from ``held`` to now."""
    c, db = store.c, store.db
    log = ScopeLog()
    with db.snapshot():
        for before_ent, before_mem, after_ent, after_mem, entities, links in db.rows(
            f"SELECT before_ent, before_mem, after_ent, after_mem, entities, links "
            f"FROM {c}_add_log WHERE scope_id = ? AND before_mem >= ? AND before_ent >= ?",
            [scope_id, held[1], held[0]],
        ):
            pairs = [(m, e) for m, e in json.loads(links)]
            log.steps[(before_ent, before_mem)] = (
                (after_ent, after_mem),
                json.loads(entities),
                pairs,
            )
        found = db.rows(f"SELECT ent_version, mem_version FROM {c}_scopes WHERE id = ?", [scope_id])
        log.now = (found[0][0], found[0][1]) if found else None
        adds = log.walk(held)
        if log.now is None or adds is None:
            return None
        if max_links is None:
            return log.now, adds, None
        ids = sorted(adds.entities)
        rows = db.rows(hop_links(c, len(ids)), [scope_id, *ids, max(0, max_links)]) if ids else []
    return log.now, adds, (max_links, [(r[0], r[1]) for r in rows])
