"""The records and link lists of searched entities kept in process memory (issue 15).

Before the query's vector arrives, a search reads the records of the entities its query
matched (``get_entities``), every memory of the specific ones (``memories_of_entities``) and
the hubs' links to its candidates (``links_among``): at 1k memories 3-5 ms of SQL and row
building per search, as long as the query's embedding. Here each scope's entities are kept
as they were read, at the scope's versions: ``ent_version`` (entities, and links: every link
or unlink bumps it, ``EntityTables.link``) and ``mem_version`` (memories: a deleted memory
takes its links). A link list is kept as rows of the scope's vector matrix at that
``mem_version`` (``linkmem.store.vectors.ScopeMatrix``, in row key order, as the SQL orders
them): the ids are the matrix's, and a hub's links to the candidates are one gather over a
mask of the candidates' rows. Any write, by this process or another, moves a version on; the
next search reads what it needs again (lazily: the entities it matched). On PostgreSQL a
process's own add carries the entry instead, without the entities it wrote (``advance``,
``postgres.write_follow``). The hubs' whole
lists (6.7k links for ~37 hubs a search at 10k memories: 1.4 ms to read, against ~0.5 ms for
a search's SQL reads of their links to its candidates) are read once the searches at the same
versions have spent as much on SQL (``LINKS_PER_SEARCH``): a scope written between every few
searches reads the hubs' links to the candidates in SQL as before.

The second hop (``linkmem.entities.hop``) follows the entities of at most ``hop_max_links``
own links that its sources own to the other memories owning them. Few entities have two to
``hop_max_links`` own links (13 links in the 1k bench scope, 34 at 10k), so a scope's are read
in one statement (``HopIndex``, kept at the scope's versions like the rest) once enough
searches ran at the same versions (``HOP_MEMORIES_PER_SEARCH``), and a search whose sources
own none of them, but the ones the query matched, skips the hop's two statements
(``EntityReads.hop_may_reach``). It holds the scope's own entities: a memory is linked to
entities of its scope (the linker's), whose writes move the scope's versions.

Bounded: ``DEFAULT_ENTITY_CACHE_BYTES`` per store (estimated bytes of records and lists);
past it the least recently searched scopes are dropped.

Locking: the cache's lock is a leaf, as the matrix caches' (``linkmem.store.vectors``) and the
keyword cache's: it is never held while reading the store or while taking another lock (the
store's connection lock, then the file's, then a cache's: ``sqlite.connection``).

The reads are the store's: ``_read_entities`` (``LoadedEntities``), ``_read_hop_index``,
``memories_of_entities`` and ``links_among`` (SQLite: ``sqlite.entities``, ``entity_cache``).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from linkmem.store.caches.scope_budget import ScopeBudget
from linkmem.store.vectors import ScopeMatrix
from linkmem.types import EntityRecord

#: Bytes kept per store: 32 MiB, about 40k entity records with their link lists.
DEFAULT_ENTITY_CACHE_BYTES = 32 * 2**20

#: The hubs' links whose whole lists cost one search's SQL reads of their links to its
#: candidates: lists are read once the searches before at the same versions times this
#: reach the hubs' link count (at 1k, ~120 links: from the second search).
LINKS_PER_SEARCH = 2000

#: The hop's reads of one search cost about as much as reading the ``HopIndex`` of a scope of
#: this many memories: a scope's index is read once the searches before at the same versions
#: times this reach its memories (at 1k from the second search).
HOP_MEMORIES_PER_SEARCH = 1000

#: A scope's (ent_version, mem_version).
Versions = tuple[int, int]

#: Estimated bytes of one cached record (the dataclass, its strings and dict slot), of one
#: link list beside its rows, and of a scope's entry (so a process that searches thousands
#: of scopes keeps a bounded number of them).
_RECORD_BYTES = 600
_LIST_BYTES = 200
_SCOPE_BYTES = 1000


@dataclass(frozen=True)
class LoadedEntities:
    """Entities as one snapshot held them (``EntityTables._read_entities``): each one's scope,
    record, and, when asked for, its linked memories' row keys (ascending); the versions of
    their scopes; ``committed``: False when read inside an open write transaction."""

    scopes: dict[str, int]
    records: dict[str, EntityRecord]
    links: dict[str, np.ndarray]
    versions: dict[int, Versions]
    committed: bool


@dataclass(frozen=True)
class HopIndex:
    """A scope's entities of 2 to ``max_links`` own links (those a hop can follow from one
    memory to another): the ones each memory owns (``of_memory``) and each one's memories
    (``members``), all by public id."""

    max_links: int
    of_memory: dict[str, tuple[str, ...]]
    members: dict[str, tuple[str, ...]]

    @classmethod
    def of_links(cls, max_links: int, links: Iterable[tuple[str, str]]) -> HopIndex:
        """From (entity id, memory id) own links."""
        of_memory: dict[str, list[str]] = {}
        members: dict[str, list[str]] = {}
        for entity_id, memory_id in links:
            of_memory.setdefault(memory_id, []).append(entity_id)
            members.setdefault(entity_id, []).append(memory_id)
        return cls(
            max_links,
            {m: tuple(e) for m, e in of_memory.items()},
            {e: tuple(m) for e, m in members.items()},
        )

    @property
    def nbytes(self) -> int:
        return _LIST_BYTES * (len(self.of_memory) + len(self.members))

    def replaced(self, entities: Collection[str], links: Iterable[tuple[str, str]]) -> HopIndex:
        """This index with ``entities`` as their own ``links`` now give them (those of the
        entities that have 2 to ``max_links`` own links)."""
        members = self.members.items()
        kept = ((e, m) for e, memories in members if e not in entities for m in memories)
        return HopIndex.of_links(self.max_links, [*kept, *links])

    def may_reach(self, sources: Sequence[str], excluded: Collection[str]) -> bool:
        """Whether one of ``sources`` (memories of the scope) owns an entity not in
        ``excluded`` that another memory than the sources owns too."""
        for source in sources:
            for entity_id in self.of_memory.get(source, ()):
                if entity_id not in excluded and any(
                    m not in sources for m in self.members[entity_id]
                ):
                    return True
        return False


@dataclass
class ScopeEntities:
    """One scope's cached entities at one pair of versions."""

    versions: Versions
    records: dict[str, EntityRecord] = field(default_factory=dict)
    links: dict[str, np.ndarray] = field(default_factory=dict)  # rows in the scope's matrix
    searches: int = 0  # searches that opened at these versions
    nbytes: int = _SCOPE_BYTES
    hops: HopIndex | None = None


class EntityCache(ScopeBudget[ScopeEntities]):
    """Per-scope entity records and link lists, bounded by bytes (least recently searched
    scopes go first)."""

    def __init__(self, max_bytes: int = DEFAULT_ENTITY_CACHE_BYTES) -> None:
        super().__init__(max_bytes)

    def opened(self, scope_id: int, versions: Versions) -> int:
        """Count a search of the scope at ``versions``; how many came before it."""
        with self._lock:
            entry = self._entry(scope_id, versions)
            if entry is None:
                return 0
            entry.searches += 1
            self._evict()
            return entry.searches - 1

    def lookup(
        self, scope_id: int, versions: Versions, ids: Iterable[str], links: bool
    ) -> dict[str, Any]:
        """The records (or, with ``links``, the link lists) of ``ids`` cached for the scope at
        exactly ``versions``."""
        with self._lock:
            entry = self._entries.get(scope_id)
            if entry is None or entry.versions != versions:
                return {}
            self._entries.move_to_end(scope_id)
            held = entry.links if links else entry.records
            return {i: held[i] for i in ids if i in held}

    def remember(
        self,
        scope_id: int,
        versions: Versions,
        records: dict[str, EntityRecord],
        links: dict[str, np.ndarray],
    ) -> None:
        """Keep what was read at ``versions`` (an entry at older versions is replaced)."""
        with self._lock:
            entry = self._entry(scope_id, versions)
            if entry is None:
                return
            added = sum(_RECORD_BYTES for i in records if i not in entry.records)
            added += sum(_LIST_BYTES + r.nbytes for i, r in links.items() if i not in entry.links)
            entry.records.update(records)
            entry.links.update(links)
            entry.nbytes += added
            self._bytes += added
            self._evict()

    def hop_index(self, scope_id: int, versions: Versions, max_links: int) -> HopIndex | None:
        """The scope's ``HopIndex`` for ``max_links`` held at exactly ``versions``."""
        with self._lock:
            entry = self._entries.get(scope_id)
            if entry is None or entry.versions != versions:
                return None
            hops = entry.hops
            return hops if hops is not None and hops.max_links == max_links else None

    def remember_hops(self, scope_id: int, versions: Versions, index: HopIndex) -> None:
        """Keep the scope's ``HopIndex`` read at ``versions``."""
        with self._lock:
            entry = self._entry(scope_id, versions)
            if entry is None:
                return
            added = index.nbytes - (entry.hops.nbytes if entry.hops is not None else 0)
            entry.hops = index
            entry.nbytes += added
            self._bytes += added
            self._evict()

    def hop_max_links(self, scope_id: int, versions: Versions) -> int | None:
        """The ``max_links`` of the scope's ``HopIndex`` held at exactly ``versions``."""
        with self._lock:
            entry = self._entries.get(scope_id)
            if entry is None or entry.versions != versions or entry.hops is None:
                return None
            return entry.hops.max_links

    def advance(
        self,
        scope_id: int,
        before: Versions,
        after: Versions,
        dropped: Collection[str],
        hops: tuple[int, list[tuple[str, str]]] | None = None,
    ) -> None:
        """Carry the scope's entry from exactly ``before`` to ``after`` (this process's add,
        ``postgres.write_follow``), with its count of searches: the records and lists of
        ``dropped`` (the entities the add linked or inserted) go; the ``HopIndex`` takes
        ``hops`` (its ``max_links`` and the own links of those of ``dropped`` it now holds,
        read with the versions after) in place of theirs, and goes without them. Any other
        entry stays."""
        with self._lock:
            entry = self._entries.get(scope_id)
            if entry is None or entry.versions != before:
                return
            gone = sum(_RECORD_BYTES for i in dropped if entry.records.pop(i, None) is not None)
            for entity_id in dropped:
                rows = entry.links.pop(entity_id, None)
                gone += 0 if rows is None else _LIST_BYTES + rows.nbytes
            index = entry.hops
            if index is not None and dropped:
                gone += index.nbytes
                entry.hops = None
                if hops is not None and hops[0] == index.max_links:
                    entry.hops = index.replaced(dropped, hops[1])
                    gone -= entry.hops.nbytes
            entry.nbytes -= gone
            self._bytes -= gone
            entry.versions = after

    def _entry(self, scope_id: int, versions: Versions) -> ScopeEntities | None:
        """The scope's entry at ``versions``, new when the one held is older; None when the
        one held is newer (``versions`` were read before a write)."""
        entry = self._entries.get(scope_id)
        if entry is not None and entry.versions == versions:
            self._entries.move_to_end(scope_id)
            return entry
        if entry is not None and not _older(entry.versions, versions):
            return None
        if entry is not None:
            self._bytes -= entry.nbytes
        entry = self._entries[scope_id] = ScopeEntities(versions)
        self._entries.move_to_end(scope_id)
        self._bytes += entry.nbytes
        return entry


def _older(held: Versions, read: Versions) -> bool:
    return held[0] <= read[0] and held[1] <= read[1]


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
            held = self._cache.lookup(view.scope_id, view.versions, ids, True)
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
