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
next search reads what it needs again (lazily: the entities it matched). An add carries the
entry instead (``advance``; a process's own through ``write_follow``, another's through the
log of adds, ``add_log``, on both backends): the entities it wrote lose their records, and
their lists gain the memories it linked them to (by id, turned into rows of the grown matrix
by the next search that reads the list: an add appends to the matrix, so every row held
stays where it was). The hubs' whole lists (6.7k links for ~37 hubs a search at 10k
memories: 1.4 ms to read, against ~0.5 ms for a search's SQL reads of their links to its
candidates) are read once the searches at the same versions have spent as much on SQL
(``LINKS_PER_SEARCH``): a scope updated or deleted from between every few searches reads the
hubs' links to the candidates in SQL as before.

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

A search's reads from the cache are ``entity_reads.EntityReads``; what it lacks it reads from
the store: ``_read_entities`` (``LoadedEntities``), ``_read_hop_index``,
``memories_of_entities`` and ``links_among`` (SQLite: ``sqlite.entities``, ``entity_cache``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
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
#: link list beside its rows, of a scope's entry (so a process that searches thousands
#: of scopes keeps a bounded number of them), and of a memory id a list gained by an add
#: and has not turned into a row yet.
_RECORD_BYTES = 600
_LIST_BYTES = 200
_SCOPE_BYTES = 1000
_PENDING_BYTES = 100


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
    # Memories adds linked to a held list's entity, not yet rows of the matrix.
    pending: dict[str, set[str]] = field(default_factory=dict)
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
        self,
        scope_id: int,
        versions: Versions,
        ids: Iterable[str],
        links: bool,
        matrix: ScopeMatrix | None = None,
    ) -> dict[str, Any]:
        """The records (or, with ``links``, the link lists, as rows of ``matrix``: the
        scope's at ``versions``) of ``ids`` cached for the scope at exactly ``versions``."""
        with self._lock:
            entry = self._entries.get(scope_id)
            if entry is None or entry.versions != versions:
                return {}
            self._entries.move_to_end(scope_id)
            if not links:
                return {i: entry.records[i] for i in ids if i in entry.records}
            wanted = [i for i in ids if i in entry.links]
            for entity_id in wanted:
                if entity_id in entry.pending:
                    self._settle(entry, entity_id, matrix)
            return {i: entry.links[i] for i in wanted if i in entry.links}

    def _settle(self, entry: ScopeEntities, entity_id: str, matrix: ScopeMatrix | None) -> None:
        """Turn the memories an add linked to ``entity_id`` into rows of its list (the list
        goes when one of them is not in ``matrix``, or there is no matrix)."""
        memories = entry.pending.pop(entity_id)
        rows = entry.links.pop(entity_id)
        freed = _PENDING_BYTES * len(memories) + _LIST_BYTES + rows.nbytes
        row_of = matrix.row_of if matrix is not None else {}
        added = [row_of.get(m, -1) for m in memories]
        if matrix is not None and min(added, default=0) >= 0:
            rows = np.union1d(rows, np.asarray(added, dtype=np.intp))
            entry.links[entity_id] = rows
            freed -= _LIST_BYTES + rows.nbytes
        entry.nbytes -= freed
        self._bytes -= freed

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
            for entity_id in links:  # read whole at these versions: nothing left to add
                added -= _PENDING_BYTES * len(entry.pending.pop(entity_id, ()))
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
        linked: Mapping[str, Collection[str]] | None = None,
    ) -> None:
        """Carry the scope's entry from exactly ``before`` to ``after`` (this process's add,
        ``write_follow``; another's, ``add_log``), with its count of searches: the records of
        ``dropped`` (the entities the add linked or inserted) go, and so do their lists, but
        for those ``linked`` names: entity id -> every memory the add linked it to (its list
        gains them); the ``HopIndex`` takes ``hops`` (its ``max_links`` and the own links of
        those of ``dropped`` it now holds, read with the versions after) in place of theirs,
        and goes without them. Any other entry stays."""
        linked = linked or {}
        with self._lock:
            entry = self._entries.get(scope_id)
            if entry is None or entry.versions != before:
                return
            gone = sum(_RECORD_BYTES for i in dropped if entry.records.pop(i, None) is not None)
            for entity_id in dropped:
                if entity_id in linked and entity_id in entry.links:
                    pending = entry.pending.setdefault(entity_id, set())
                    new = set(linked[entity_id]) - pending
                    pending |= new
                    gone -= _PENDING_BYTES * len(new)
                    continue
                rows = entry.links.pop(entity_id, None)
                memories = entry.pending.pop(entity_id, ())
                gone += 0 if rows is None else _LIST_BYTES + rows.nbytes
                gone += _PENDING_BYTES * len(memories)
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
            self._evict()

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
