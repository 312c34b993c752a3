"""A search's entity reads answered from the entity cache (``entity_records``), and the hubs'
whole link lists it gathers from: what the cache lacks is read from the store in one snapshot
and kept when it was read at the versions the search opened at."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from linkmem.store.caches.entity_records import (
    HOP_MEMORIES_PER_SEARCH,
    LINKS_PER_SEARCH,
    EntityCache,
    HopIndex,
    LoadedEntities,
    Versions,
)
from linkmem.store.vectors import ScopeMatrix
from linkmem.types import EntityRecord


@dataclass(frozen=True)
class ScopeView:
    """One matching scope as a search sees it: its versions and its memories' matrix."""

    scope_id: int
    versions: Versions
    matrix: ScopeMatrix
    searches: int  # searches before this one at these versions


class EntityReads:
    """A search's entity reads answered from the cache (``SearchReads`` holds one): every
    answer is the store's (``EntityTables.get_entities``, ``memories_of_entities``,
    ``links_among``). What the cache lacks is read in one snapshot and kept when it was
    read at the versions the search opened at and its memories are rows of the matrix."""

    def __init__(self, store: Any, views: list[ScopeView], specific_max_links: int) -> None:
        self._store = store
        self._cache: EntityCache = store.entity_cache
        self._views = {v.scope_id: v for v in views}
        # Records read with the lists of the entities a search reads all links of.
        self._lists_up_to = specific_max_links
        # The hubs' lists as the last ``links_among`` gathered them (this search's own).
        self._hub_lists: HubLists | None = None

    def get_entities(self, ids: Sequence[str]) -> list[EntityRecord]:
        found: dict[str, EntityRecord] = {}
        for view in self._views.values():
            found.update(self._cache.lookup(view.scope_id, view.versions, ids, False))
        missing = [i for i in dict.fromkeys(ids) if i not in found]
        if missing:
            loaded = self._store._read_entities(missing, self._lists_up_to)
            found.update(loaded.records)
            self._take(loaded)
        return [found[i] for i in ids if i in found]

    def memories_of_entities(self, ids: Sequence[str]) -> dict[str, list[str]]:
        """The store's ``memories_of_entities`` (each list by row key)."""
        wanted = list(dict.fromkeys(ids))
        rows = self._rows(wanted, load=True)
        rest = [i for i in wanted if i not in rows]
        out = self._store.memories_of_entities(rest) if rest else {}
        for entity_id, (view, found) in rows.items():
            if len(found):
                ids_of = view.matrix.ids
                out[entity_id] = [ids_of[r] for r in found.tolist()]
        return out

    def links_among(
        self, entity_ids: Sequence[str], memory_ids: Sequence[str]
    ) -> dict[str, list[str]]:
        """The store's ``links_among``: the hubs' lists gathered at the candidates' rows,
        each in memory id order (the store's); hubs not held yet from SQL."""
        if not entity_ids or not memory_ids:
            return {}
        wanted = list(dict.fromkeys(entity_ids))
        hubs = self._hub_lists_of(wanted)
        rest = [i for i in wanted if i not in hubs.rows]
        searches = max((v.searches for v in self._views.values()), default=0)
        if rest and searches * LINKS_PER_SEARCH >= sum(
            e.link_count for e in self.get_entities(rest)
        ):
            loaded = self._rows(rest, load=True)
            if loaded:
                hubs = self._hub_lists = HubLists.of(hubs.key, {**hubs.rows, **loaded})
                rest = [i for i in wanted if i not in hubs.rows]
        found = self._store.links_among(rest, memory_ids) if rest else {}
        linked = hubs.among(memory_ids)
        return {
            i: linked[i] if i in linked else found[i] for i in wanted if i in linked or i in found
        }

    def _hub_lists_of(self, wanted: list[str]) -> HubLists:
        """The held lists of ``wanted`` (``HubLists``), kept for this search's next read of
        the same hubs: a search reads them before its vector for the candidates it knows, and
        after it for the dense ones."""
        key = tuple(wanted)
        hubs = self._hub_lists
        if hubs is None or hubs.key != key:
            hubs = self._hub_lists = HubLists.of(key, self._rows(wanted, load=False))
        return hubs

    def hop_may_reach(
        self, sources: Sequence[str], excluded: Collection[str], max_links: int
    ) -> bool | None:
        """Whether the second hop from ``sources`` can reach a memory (``HopIndex.may_reach``;
        the entities of ``excluded`` not followed); None when not known here (a source out of
        the scopes' matrices, an index not read yet): the hop reads the store."""
        indexes: list[tuple[ScopeView, HopIndex]] = []
        for view in self._views.values():
            index = self._cache.hop_index(view.scope_id, view.versions, max_links)
            if index is None and view.searches * HOP_MEMORIES_PER_SEARCH >= len(view.matrix.ids):
                index = self._read_hop_index(view, max_links)
            if index is not None:
                indexes.append((view, index))
        for source in sources:
            if not any(source in view.matrix.row_of for view, _ in indexes):
                return None
        return any(index.may_reach(sources, excluded) for _, index in indexes)

    def _read_hop_index(self, view: ScopeView, max_links: int) -> HopIndex | None:
        """The scope's ``HopIndex``, kept when read from committed data at the versions the
        search opened at (None when read at others)."""
        index, versions, committed = self._store._read_hop_index(view.scope_id, max_links)
        if versions != view.versions:
            return None
        if committed:
            self._cache.remember_hops(view.scope_id, view.versions, index)
        return index

    def _rows(self, ids: list[str], load: bool) -> dict[str, tuple[ScopeView, np.ndarray]]:
        """entity id -> its scope and its memories' rows in the scope's matrix: held, or
        (``load``) read. Left out: what is not held nor read, and what was read at other
        versions than the search's or links memories of another scope (the store answers)."""
        out: dict[str, tuple[ScopeView, np.ndarray]] = {}
        for view in self._views.values():
            held = self._cache.lookup(view.scope_id, view.versions, ids, True, view.matrix)
            out.update((i, (view, rows)) for i, rows in held.items())
        missing = [i for i in ids if i not in out]
        if missing and load:
            out.update(self._take(self._store._read_entities(missing, math.inf)))
        return out

    def _take(self, loaded: LoadedEntities) -> dict[str, tuple[ScopeView, np.ndarray]]:
        """The lists ``loaded`` read as rows of their scopes' matrices (those read at the
        versions the search opened at, of memories of their scope); kept with the records
        when read from committed data."""
        out: dict[str, tuple[ScopeView, np.ndarray]] = {}
        links: dict[int, dict[str, np.ndarray]] = {}
        for entity_id, rowids in loaded.links.items():
            view = self._views.get(loaded.scopes[entity_id])
            if view is None or loaded.versions.get(view.scope_id) != view.versions:
                continue
            rows = _rows_in(view.matrix, rowids)
            if rows is not None:
                links.setdefault(view.scope_id, {})[entity_id] = rows
                out[entity_id] = (view, rows)
        if not loaded.committed:
            return out
        for scope_id, view in self._views.items():
            if loaded.versions.get(scope_id) != view.versions:
                continue
            records = {i: r for i, r in loaded.records.items() if loaded.scopes[i] == scope_id}
            if records or links.get(scope_id):
                self._cache.remember(scope_id, view.versions, records, links.get(scope_id, {}))
        return out


@dataclass(frozen=True)
class HubLists:
    """Hubs' link lists as rows of their scopes' matrices (``rows``: hub id -> its scope and
    rows), each scope's concatenated once (``joined``: its view, every row, the index in
    ``hubs`` of each row's hub), so their links to a search's candidates are one gather."""

    key: tuple[str, ...]
    rows: dict[str, tuple[ScopeView, np.ndarray]]
    hubs: list[str]
    joined: list[tuple[ScopeView, np.ndarray, np.ndarray]]

    @classmethod
    def of(cls, key: tuple[str, ...], rows: dict[str, tuple[ScopeView, np.ndarray]]) -> HubLists:
        hubs = [i for i in key if i in rows]
        by_scope: dict[int, list[int]] = {}
        for index, hub in enumerate(hubs):
            by_scope.setdefault(rows[hub][0].scope_id, []).append(index)
        joined = []
        for indexes in by_scope.values():
            lists = [rows[hubs[i]][1] for i in indexes]
            owner = np.repeat(np.asarray(indexes, dtype=np.intp), [len(x) for x in lists])
            joined.append((rows[hubs[indexes[0]]][0], np.concatenate(lists), owner))
        return cls(key, rows, hubs, joined)

    def among(self, memory_ids: Sequence[str]) -> dict[str, list[str]]:
        """hub id -> those of ``memory_ids`` linked to it, in id order (hubs linked to none
        left out; not in ``key`` order)."""
        found: dict[int, list[str]] = {}
        for view, rows, owner in self.joined:
            at = np.flatnonzero(_mask(view.matrix, memory_ids)[rows])
            ids_of = view.matrix.ids
            for index, row in zip(owner[at].tolist(), rows[at].tolist(), strict=True):
                found.setdefault(index, []).append(ids_of[row])
        return {self.hubs[i]: sorted(linked) for i, linked in found.items()}


def _mask(matrix: ScopeMatrix, memory_ids: Sequence[str]) -> np.ndarray:
    """True at the rows of ``memory_ids`` in ``matrix``."""
    row_of = matrix.row_of
    rows = [row_of[m] for m in memory_ids if m in row_of]
    mask = np.zeros(len(matrix.ids), dtype=bool)
    mask[rows] = True
    return mask


def _rows_in(matrix: ScopeMatrix, rowids: np.ndarray) -> np.ndarray | None:
    """Each row key's row in ``matrix`` (whose keys ascend); None when one is not there."""
    rows = np.searchsorted(matrix.rowids, rowids)
    if len(rows) and (rows.max() >= len(matrix.rowids) or (matrix.rowids[rows] != rowids).any()):
        return None
    return rows.astype(np.intp)
