"""The entity reads of one search (``search_reads``): nearest entities, their records and
memories, the hubs' links to the pool and the second hop's rare entities, answered from the
batches ``SearchReads`` fetched (a read with other arguments than the plan's goes to the
store)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from operator import itemgetter
from typing import Any

import numpy as np

from linkmem.store.postgres.entities import _entity_from_row
from linkmem.store.prefetch import SearchPlan
from linkmem.types import EntityRecord, Scope

_first = itemgetter(0)


class EntityReads:
    """``SearchReads``' entity reads; the state is ``SearchReads``' (see its ``__init__``)."""

    _store: Any
    _plan: SearchPlan
    _near: list[list[tuple[str, float]]] | None
    _entity_vectors: np.ndarray
    _links_max: int
    _by_key: dict[str, tuple[str, np.ndarray]]
    _entities: dict[str, EntityRecord]
    _links: dict[str, list[tuple[int, str, bool]]]
    _unsequenced: set[str]
    _hubs: set[str]
    _hub_rows: list[tuple[str, str]]
    _hub_rows_of: set[str]
    _rare_rows: list[tuple[str, str]]
    _rare_rows_of: set[str]

    def _cached_links_among(
        self, entity_ids: Sequence[str], memory_ids: Sequence[str]
    ) -> dict[str, list[str]] | None:
        """``links_among`` from the entity cache (``search_entity_cache``); None: not held."""
        raise NotImplementedError

    def _fetch_rare(self, ids: list[str]) -> None:
        """Read the rare entities of ``ids`` (``SearchReads._fetch_rare``)."""
        raise NotImplementedError

    def _read_near(self, rows: list[Sequence[Any]]) -> list[list[tuple[str, float]]]:
        out: list[list[tuple[str, float]]] = [[] for _ in range(len(self._entity_vectors))]
        for row in rows:
            out[row[0] - 1].append((row[1], float(row[2])))
            self._remember_entity(row[3:], self._links_max)
        return out

    def _remember_entity(self, row: Sequence[Any], links_max: int) -> str:
        """Keep one entity (``select_entities``' columns, then the seqs and ids of its
        memories and whether each link is own, when it has at most ``links_max`` links); its
        id. A list without seqs (NULL) is in ``_unsequenced`` until ``_sequence_lists``."""
        entity = _entity_from_row(row[:8])
        self._entities[entity.id] = entity
        seqs, ids, owns = row[8], row[9] or [], row[10] or []
        if entity.link_count <= links_max:
            if seqs is None:
                seqs = [None] * len(ids)
                self._unsequenced.add(entity.id)
            self._links[entity.id] = list(zip(seqs, ids, owns))
        return entity.id

    def _sequence_lists(self, rows: Mapping[str, Sequence[Any]]) -> None:
        """Give the lists read without seqs those of their memories (``rows``: memory -> its
        row, seq second to last, of the pool's records), each list in seq order (a stable
        sort: ``memories_of_entities``); a memory without one (deleted since) is left out."""
        get = rows.get
        for entity_id in self._unsequenced:
            kept = []
            for _, mid, own in self._links[entity_id]:
                row = get(mid)
                if row is not None:
                    kept.append((row[-2], mid, own))
            kept.sort(key=_first)
            self._links[entity_id] = kept
        self._unsequenced.clear()

    def nearest_entities(
        self, scope: Scope, vectors: np.ndarray, k: int, min_similarity: float, exact_scope: bool
    ) -> list[list[tuple[str, float]]]:
        plan = self._plan
        if (
            self._near is None
            or exact_scope
            or scope != plan.scope
            or k != plan.entity_k
            or min_similarity != plan.entity_min_similarity
            or not np.array_equal(np.asarray(vectors), self._entity_vectors)
        ):
            return self._store.nearest_entities(scope, vectors, k, min_similarity, exact_scope)
        return [list(hits) for hits in self._near]

    def entities_by_key(
        self, scope: Scope, keys: Sequence[str]
    ) -> dict[str, tuple[str, np.ndarray]]:
        plan = self._plan
        if plan.entities is None or scope != plan.scope or list(keys) != plan.entities.keys:
            return self._store.entities_by_key(scope, keys)
        return dict(self._by_key)

    def get_entities(self, ids: Sequence[str]) -> list[EntityRecord]:
        if not set(ids) <= self._entities.keys():
            return self._store.get_entities(ids)
        return [self._entities[i] for i in ids]

    def memories_of_entities(
        self, entity_ids: Sequence[str], own_only: bool = False
    ) -> dict[str, list[str]]:
        if not set(entity_ids) <= self._links.keys():
            return self._store.memories_of_entities(entity_ids, own_only)
        # Each list is in memory seq order (``_detailed``, ``_sequence_lists``); the plain
        # store's dict lists the entities by their first memory's seq, ties in asked order.
        found = []
        for index, eid in enumerate(dict.fromkeys(entity_ids)):
            links = self._links[eid]
            if own_only:
                links = [link for link in links if link[2]]
            if links:
                found.append((links[0][0], index, eid, [mid for _, mid, _ in links]))
        found.sort(key=lambda f: (f[0], f[1]))
        return {eid: mids for _, _, eid, mids in found}

    def rare_entities_of_memories(
        self, memory_ids: Sequence[str], max_links: int
    ) -> dict[str, list[EntityRecord]]:
        """``entities_of_memories`` without the entities of more than ``max_links`` links
        (``linkmem.store.prefetch``): the pool's, when they were fetched."""
        if not memory_ids:
            return {}
        if max_links > self._plan.hop_max_links:
            return {
                mid: kept
                for mid, records in self._store.entities_of_memories(memory_ids).items()
                if (kept := [e for e in records if e.link_count <= max_links])
            }
        missing = [mid for mid in dict.fromkeys(memory_ids) if mid not in self._rare_rows_of]
        if missing:
            self._fetch_rare(missing)
        wanted = set(memory_ids)
        out: dict[str, list[EntityRecord]] = defaultdict(list)
        for mid, eid in self._rare_rows:
            entity = self._entities[eid]
            if mid in wanted and entity.link_count <= max_links:
                out[mid].append(entity)
        return dict(out)

    def links_among(
        self, entity_ids: Sequence[str], memory_ids: Sequence[str]
    ) -> dict[str, list[str]]:
        """entity id -> those of ``memory_ids`` linked to it (``linkmem.store.prefetch``),
        from the pool's links: the hub boosts need no entity records of the candidates."""
        cached = self._cached_links_among(entity_ids, memory_ids)
        if cached is not None:  # the hubs' whole lists (``search_entity_cache``)
            return cached
        entities, memories = set(entity_ids), set(memory_ids)
        out: dict[str, list[str]] = defaultdict(list)
        if memories <= self._hub_rows_of and entities <= self._hubs:
            for mid, eid in self._hub_rows:
                if eid in entities and mid in memories:
                    out[eid].append(mid)
            return dict(out)
        for mid, records in self._store.entities_of_memories(list(memory_ids)).items():
            for entity in records:
                if entity.id in entities:
                    out[entity.id].append(mid)
        return dict(out)
