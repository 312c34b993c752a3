"""A search's hub links and second-hop check from the process's entity cache, PostgreSQL.

``caches.entity_records.EntityCache`` (SQLite's entity cache) holds, per scope at its
``(ent_version, mem_version)`` (``m010``, ``m011``: every write of the scope's memories,
entities or links moves one on, by any process), the whole link lists of hubs as rows of the
scope's cached vector matrix (``dense_cache``) and the scope's ``HopIndex``. When a search's
dense reads come from the process and it covers one scope:

- the hub boosts' ``links_among`` are gathered from the hubs' lists, and the pool's read in
  round trip 2 asks no hub links (with the pool's rows held too, ``search_record_reads``, no
  round trip 2 at all). Lists not held are read whole in its place once the searches at the
  scope's versions have spent as much on the hubs' links to their pools
  (``entity_records.LINKS_PER_SEARCH``), else the server's links to the pool as before;
- ``hop_may_reach``: whether the second hop from its sources can reach any memory
  (``HopIndex.may_reach``); when not, the hop's read of the sources' rare entities (round trip
  3) is skipped. The index is read (one statement) once the searches at the scope's versions
  times ``HOP_MEMORIES_PER_SEARCH`` reach its memories.

Answers are the store's: each hub's memories among those asked, in memory id order. Lists and
indexes read at other versions than the search's are not used. Locking: the cache's lock is a
leaf (``scope_budget``), taken with no other lock held, never while reading the store.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

import numpy as np

from linkmem.store.caches.entity_reads import HubLists, ScopeView
from linkmem.store.caches.entity_records import (
    HOP_MEMORIES_PER_SEARCH,
    LINKS_PER_SEARCH,
    HopIndex,
)
from linkmem.store.postgres import search_sql as q
from linkmem.store.postgres.search_keyword_reads import ScopeStats
from linkmem.store.postgres.sql import Tables
from linkmem.store.prefetch import SearchPlan
from linkmem.store.vectors import ScopeMatrix
from linkmem.types import EntityRecord


def hub_lists(t: Tables) -> str:
    """The scope ``%s``'s versions and the memories of each of its entities ``= ANY(%s)``
    (every link, own or not); one row of NULLs after the versions when none. One statement:
    one snapshot."""
    return (
        f"SELECT s.ent_version, s.mem_version, h.entity, h.memories FROM {t.scopes} s "
        "LEFT JOIN LATERAL (SELECT l.entity, array_agg(l.memory) AS memories "
        f"FROM {t.links} l JOIN {t.entities} e ON e.id = l.entity AND e.scope_id = s.id "
        "WHERE l.entity = ANY(%s::text[]) GROUP BY l.entity) h ON TRUE WHERE s.id = %s"
    )


def hop_links(t: Tables) -> str:
    """The scope ``%s``'s versions and the own links of its entities of 2 to ``%s`` own links
    (``link_counts`` counts own links), in entity seq and memory order; one statement."""
    return (
        f"SELECT s.ent_version, s.mem_version, x.entity, x.memory FROM {t.scopes} s "
        "LEFT JOIN LATERAL (SELECT l.entity, l.memory, e.seq FROM "
        f"{t.entities} e JOIN {t.link_counts} c ON c.entity = e.id AND c.n BETWEEN 2 AND %s "
        f"JOIN {t.links} l ON l.entity = e.id AND l.own WHERE e.scope_id = s.id) x ON TRUE "
        "WHERE s.id = %s ORDER BY x.seq, x.memory"
    )


class CachedEntityReads:
    """``SearchReads``' entity reads from the entity cache (a mixin)."""

    _store: Any
    _t: Tables
    _conn: Any
    _plan: SearchPlan
    _dense: Any
    _scope_stats: list[ScopeStats]
    _entities: dict[str, EntityRecord]
    _retried: Callable[..., Any]
    #: hub -> its memories' rows in the view's matrix (None: the server's links to the pool).
    _hub_lists: dict[str, np.ndarray] | None = None
    _view: ScopeView | None = None

    def searched_view(self) -> ScopeView | None:
        """The one scope this search read from the process's matrices (None: not so)."""
        return self._view

    def _queue_hop_index(self, conn: Any) -> Any | None:
        """When the dense reads come from cached matrices: open the view, and queue the read
        of its ``HopIndex`` when not held and the searches before call for it (None: none)."""
        if self._dense is None:
            return None
        self._open_view()
        view, hop = self._view, self._plan.hop_max_links
        if view is None:
            return None
        if self._store.entity_cache.hop_index(view.scope_id, view.versions, hop) is not None:
            return None
        if view.searches * HOP_MEMORIES_PER_SEARCH < len(view.matrix.ids):
            return None
        return conn.execute(hop_links(self._t), [max(0, hop), view.scope_id], binary=True)

    def _take_hop_index(self, cursor: Any | None) -> None:
        """Keep the ``HopIndex`` read (when at the view's versions); open the view when the
        dense reads were loaded in this search."""
        self._open_view()
        rows = cursor.fetchall() if cursor is not None else []
        view = self._view
        if not rows or view is None or (rows[0][0], rows[0][1]) != view.versions:
            return
        links = [(r[2], r[3]) for r in rows if r[2] is not None]
        index = HopIndex.of_links(self._plan.hop_max_links, links)
        self._store.entity_cache.remember_hops(view.scope_id, view.versions, index)

    def _open_view(self) -> None:
        """The search's one scope, counted at its versions, once (none unless the dense reads
        come from the process and it covers one scope)."""
        if self._dense is None or len(self._scope_stats) != 1 or self._view is not None:
            return
        scope_id, versions = self._scope_stats[0].id, self._scope_stats[0].versions
        matrix = self._dense.matrices[0]
        if matrix.version != versions[1]:
            return
        searches = self._store.entity_cache.opened(scope_id, versions)
        self._view = ScopeView(scope_id, versions, matrix, searches)

    def _hub_read(
        self, ids: list[str], hubs: list[str]
    ) -> tuple[Callable[[Any], Any] | None, Callable[[Any], Any]]:
        """The hubs' read of round trip 2, queued beside the pool's rows (None: none), and
        what turns its rows into ``hub_links``' rows: the server's links of the pool, or
        the lists the cache lacks read whole (``_hub_lists`` set; none when all are held).
        Lists read at other versions: the pool's links read after, a round trip of its own."""

        def server(conn: Any) -> Any:
            return conn.execute(*q.hub_links(self._t, ids, hubs), binary=True)

        if not hubs:
            return None, _nothing
        missing = self._missing_lists(hubs)
        if missing is None:
            return server, _same
        if not missing:
            return None, _nothing
        view = self._view
        assert view is not None

        def read(conn: Any) -> Any:
            return conn.execute(hub_lists(self._t), [missing, view.scope_id], binary=True)

        def finish(rows: list[Any]) -> list[Any] | None:
            if self._take_lists(missing, rows):
                return None
            self._hub_lists = None
            return self._retried(lambda: server(self._conn).fetchall())

        return read, finish

    def _missing_lists(self, hubs: Sequence[str]) -> list[str] | None:
        """The hubs whose lists to read whole (``_hub_lists``: those held); None: read the
        pool's links to them instead (no view, or too few searches at these versions)."""
        view = self._view
        if view is None:
            return None
        held = self._store.entity_cache.lookup(
            view.scope_id, view.versions, hubs, True, view.matrix
        )
        missing = [h for h in hubs if h not in held]
        links = sum(self._entities[h].link_count for h in missing if h in self._entities)
        if missing and view.searches * LINKS_PER_SEARCH < links:
            return None
        self._hub_lists = held
        return missing

    def _take_lists(self, missing: list[str], rows: list[Any]) -> bool:
        """Keep the lists read (``hub_lists``' rows); False when read at other versions."""
        view, lists = self._view, self._hub_lists
        if not rows or view is None or lists is None or (rows[0][0], rows[0][1]) != view.versions:
            return False
        read = {h: np.zeros(0, np.intp) for h in missing}
        for _, _, entity_id, memories in rows:
            if entity_id is not None:
                found = _rows_of(view.matrix, memories)
                if found is None:
                    return False
                read[entity_id] = found
        self._store.entity_cache.remember(view.scope_id, view.versions, {}, read)
        lists.update(read)
        return True

    def _cached_links_among(
        self, entity_ids: Sequence[str], memory_ids: Sequence[str]
    ) -> dict[str, list[str]] | None:
        """``links_among`` from the hubs' lists (None: not all held)."""
        lists, view = self._hub_lists, self._view
        if lists is None or view is None or not set(entity_ids) <= lists.keys():
            return None
        wanted = tuple(dict.fromkeys(entity_ids))
        return HubLists.of(wanted, {h: (view, lists[h]) for h in wanted}).among(memory_ids)

    def hop_may_reach(
        self, sources: Sequence[str], excluded: Collection[str], max_links: int
    ) -> bool | None:
        """Whether the second hop from ``sources`` can reach a memory (``HopIndex``, read
        beside round trip 1); None when not known here: the hop reads the store."""
        view = self._view
        if view is None or any(s not in view.matrix.row_of for s in sources):
            return None
        index = self._store.entity_cache.hop_index(view.scope_id, view.versions, max_links)
        return None if index is None else index.may_reach(sources, excluded)


def _nothing(rows: Any) -> None:
    return None


def _same(rows: Any) -> Any:
    return rows


def _rows_of(matrix: ScopeMatrix, memories: Sequence[str]) -> np.ndarray | None:
    """The rows of ``memories`` in ``matrix``, ascending (None: one is not there)."""
    row_of = matrix.row_of
    rows = np.fromiter((row_of.get(m, -1) for m in memories), np.intp, len(memories))
    if len(rows) and rows.min() < 0:
        return None
    return np.sort(rows)
