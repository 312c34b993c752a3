"""Search caches carried across other processes' adds, through a log of the adds (PostgreSQL).

A process carries its own caches across its own adds (``write_follow``); another process's
add moved the scope's versions without telling it, so its next search read the pool's rows,
the near rows and the entity records, hub lists and hop index again (three to four round
trips and ~10 ms in the 10k bench scope). Each transaction ``write_follow`` carries, one of
adds alone, also writes a row here, in its statement before the commit: the scope, its
versions before and after, and the entities it linked or inserted. A search whose caches
hold a scope at older versions than round trip 0 found reads the scope's rows of the log
since then, with the hop index's rows of those entities, in one statement (one snapshot):
when the rows chain from the held versions to the scope's current ones, every write between
was adds alone, and each cache is carried as after an own add (``caches.following``), the
entity cache's lists of the entities linked gaining the memories the log's links (``m018``)
name. A
write of any other kind writes no row, so a chain through it breaks and the caches read
again, as before. The log keeps the last ``KEEP_VERSIONS`` memory versions of each scope
(pruned by the writers, under the scope's lock); ``reset`` empties it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from linkmem.store.caches.following import (
    Linked,
    ScopeLog,
    Stamp,
    Versions,
    behind,
    link_pairs,
)
from linkmem.store.postgres.sql import Tables

#: Log rows kept per scope: those of its last this many memory versions (one per add).
KEEP_VERSIONS = 64


def log_adds(t: Tables) -> str:
    """A ``WITH`` to put before the writer's statement of the stamps after its adds: a row
    for each scope of ``unnest(%s, ...)`` (ids, then the stamps before: versions and rewrite
    counts, bigint arrays) whose rewrite counts did not move, with the entities ``%s`` and
    the links' memories ``%s`` and entities ``%s`` (text[]); the scope's rows older than
    ``KEEP_VERSIONS`` memory versions go."""
    return (
        "WITH b AS (SELECT * FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[], "
        "%s::bigint[], %s::bigint[], %s::bigint[]) AS b(id, ent, mem, mr, er, kr)), "
        f"logged AS (INSERT INTO {t.add_log} "
        "(scope_id, before_ent, before_mem, after_ent, after_mem, entities, link_memories, "
        "link_entities) SELECT s.id, b.ent, b.mem, s.ent_version, s.mem_version, %s::text[], "
        "%s::text[], %s::text[] FROM b "
        f"JOIN {t.scopes} s ON s.id = b.id "
        "AND (s.mem_rewrites, s.ev_rewrites, s.kw_rewrites) = (b.mr, b.er, b.kr)), "
        f"pruned AS (DELETE FROM {t.add_log} g USING {t.scopes} s, b "
        "WHERE s.id = b.id AND g.scope_id = s.id "
        f"AND g.after_mem < s.mem_version - {KEEP_VERSIONS}) "
    )


def log_args(before: dict[int, Stamp], entities: Iterable[str], linked: Linked) -> list[Any]:
    """``log_adds``' arguments: the scopes' stamps before the transaction's adds, the
    entities written, the links."""
    scope_ids = sorted(before)
    columns = [[before[s][i] for s in scope_ids] for i in range(5)]
    pairs = link_pairs(linked)
    links = [[m for m, _ in pairs], [e for _, e in pairs]]
    return [scope_ids, *columns, sorted(entities), *links]


def catch_up_statement(t: Tables) -> str:
    """For each scope of ``unnest(%s, %s, %s, %s)`` (ids, the oldest versions held, the hop
    index's ``max_links`` or 0): its versions now (kind 0), its log rows from those versions
    on (kind 1, in order, with their links), and the own links of their entities that have 2
    to ``max_links`` own links (kind 2). One statement: one snapshot."""
    return (
        "WITH a AS (SELECT * FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[], %s::int[]) "
        "AS a(id, ent, mem, hop_max)), "
        f"g AS (SELECT g.* FROM a JOIN {t.add_log} g ON g.scope_id = a.id "
        "AND g.before_ent >= a.ent AND g.before_mem >= a.mem) "
        "SELECT 0, s.id, s.ent_version, s.mem_version, NULL::bigint, NULL::bigint, "
        "NULL::text[], NULL::text, NULL::text, 0::bigint, NULL::text[], NULL::text[] "
        f"FROM a JOIN {t.scopes} s ON s.id = a.id "
        "UNION ALL SELECT 1, g.scope_id, g.before_ent, g.before_mem, g.after_ent, g.after_mem, "
        "g.entities, NULL, NULL, g.id, g.link_memories, g.link_entities FROM g "
        "UNION ALL SELECT 2, a.id, NULL, NULL, NULL, NULL, NULL, l.entity, l.memory, 0, NULL, "
        "NULL FROM a "
        f"JOIN {t.entities} e ON e.scope_id = a.id AND e.id IN "
        "(SELECT unnest(g.entities) FROM g WHERE g.scope_id = a.id) "
        f"JOIN {t.link_counts} c ON c.entity = e.id AND c.n BETWEEN 2 AND a.hop_max "
        f"JOIN {t.links} l ON l.entity = e.id AND l.own "
        "ORDER BY 1, 2, 10"
    )


class AddLogReader:
    """Carries a store's search caches across other processes' adds (``catch_up``)."""

    def __init__(self, t: Tables, store: Any) -> None:
        self._t = t
        self._store = store

    def catch_up(self, conn: Any, scopes: Sequence[tuple[int, Versions]]) -> None:
        """Before a search of ``scopes`` (ids, versions now): carry the caches holding one at
        older versions along the log, when it chains; one round trip, none when no cache is
        behind."""
        behind = {s: held for s, now in scopes if (held := self._held_behind(s, now))}
        if not behind:
            return
        hop_max = {s: self._hop_max_links(s, held) or 0 for s, held in behind.items()}
        scope_ids = sorted(behind)
        args = [
            scope_ids,
            [min(v[0] for v in behind[s].values()) for s in scope_ids],
            [min(v[1] for v in behind[s].values()) for s in scope_ids],
            [hop_max[s] for s in scope_ids],
        ]
        logs: dict[int, ScopeLog] = {s: ScopeLog() for s in scope_ids}
        for kind, scope_id, *row in conn.execute(catch_up_statement(self._t), args, binary=True):
            _take(logs[scope_id], kind, row)
        for scope_id, log in logs.items():
            self._carry(scope_id, log, behind[scope_id], hop_max[scope_id])

    def _caches(self) -> dict[str, Any]:
        store = self._store
        return {
            "rows": store.row_cache,
            "near": store.near_details,
            "entities": store.entity_cache,
        }

    def _held_behind(self, scope_id: int, now: Versions) -> dict[str, Versions]:
        """Each cache's versions of the scope when older than ``now``."""
        held = {}
        for name, cache in self._caches().items():
            entry = cache.held(scope_id)
            if entry is not None and behind(entry.versions, now):
                held[name] = entry.versions
        return held

    def _hop_max_links(self, scope_id: int, held: dict[str, Versions]) -> int | None:
        versions = held.get("entities")
        if versions is None:
            return None
        return self._store.entity_cache.hop_max_links(scope_id, versions)

    def _carry(self, scope_id: int, log: ScopeLog, held: dict[str, Versions], hop_max: int) -> None:
        if log.now is None:
            return
        caches = self._caches()
        for name, versions in held.items():
            adds = log.walk(versions)
            if adds is None:
                continue
            written = adds.entities
            if name == "rows":
                caches[name].advance(scope_id, versions, log.now)
            elif name == "near":
                caches[name].advance(scope_id, versions, log.now, written)
            else:
                hops = [(e, m) for e, m in log.hop_links if e in written]
                carried = (hop_max, hops) if hop_max else None
                caches[name].advance(scope_id, versions, log.now, written, carried, adds.linked)


def _take(log: ScopeLog, kind: int, row: Sequence[Any]) -> None:
    """One row of ``catch_up_statement`` (after its kind and scope id)."""
    if kind == 0:
        log.now = (row[0], row[1])
    elif kind == 1:
        links = list(zip(row[8], row[9], strict=True))
        log.steps[(row[0], row[1])] = ((row[2], row[3]), list(row[4]), links)
    else:
        log.hop_links.append((row[5], row[6]))
