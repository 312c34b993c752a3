"""Second hop: the rare entities of the best results pull in the other memories naming them.

An answer spread over several memories ("Which movies have both Joanna and Nate seen?") is
often found by text in one of them; the others share a rare entity with it ("Little Women")
but not the question's words. Only entities linked to a handful of memories are followed, so
a hop never drags in a topic half the scope talks about.

A hop follows own links only (``linkmem.entities.inherit``): a name a source merely refers
back to ("He slept through the boat tour") is not its entity, and a memory that refers back
to a name is not reached through it. ``benchmarks/entity_replay.py`` (which models the hop on
own links, the boosts on both) predicted LoCoMo dev unchanged with back references on; with
inherited links followed, "Paris" (3 own links, 9 with inherited ones) was not followed any
more (conv-30 multi-hop margin +13.6 -> 0.0).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from linkmem.config import RetrievalConfig
from linkmem.store.base import Store
from linkmem.types import EntityRecord


def hop_targets(
    ranked_ids: Sequence[str],
    query_matched: Collection[str],
    store: Store,
    config: RetrievalConfig,
) -> dict[str, str]:
    """memory id -> the entity followed, for memories sharing a rare entity with one of the
    ``hop_sources`` best results; entities the query itself matched (already boosted) and
    the sources themselves are skipped. Own links only: an entity is followed when one of the
    sources names it, to the memories that name it. The boost is the fusion's (it needs the
    cosine)."""
    sources = list(ranked_ids[: config.hop_sources])
    if not sources or config.hop_weight <= 0:
        return {}
    # The store's ``hop_may_reach`` (an optional read, the SQLite search view's) says when no
    # source owns an entity that another memory owns: most searches (the rest read the store).
    may_reach = getattr(store, "hop_may_reach", None)
    if may_reach is not None and may_reach(sources, query_matched, config.hop_max_links) is False:
        return {}
    rare = {
        entity.id: entity.text
        for entities in _rare_entities_of(store, sources, config.hop_max_links).values()
        for entity in entities
        if entity.link_count <= config.hop_max_links and entity.id not in query_matched
    }
    if not rare:
        return {}
    reached: dict[str, str] = {}
    for entity_id, memory_ids in store.memories_of_entities(list(rare), own_only=True).items():
        if not any(s in memory_ids for s in sources):
            continue  # only inherited by the sources
        for memory_id in memory_ids:
            if memory_id not in sources:
                reached.setdefault(memory_id, rare[entity_id])
    return reached


def _rare_entities_of(
    store: Store, memory_ids: list[str], max_links: int
) -> dict[str, list[EntityRecord]]:
    """memory id -> its entities (at least those with at most ``max_links`` links); through
    the store's ``rare_entities_of_memories`` when it has one (``linkmem.store.prefetch``)."""
    rare_of = getattr(store, "rare_entities_of_memories", None)
    if rare_of is not None:
        return rare_of(memory_ids, max_links)
    return store.entities_of_memories(memory_ids)
