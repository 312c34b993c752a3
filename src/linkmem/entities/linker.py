"""Write path: extract entities of a batch of memories, dedup them, embed once, upsert, link."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from linkmem.config import RetrievalConfig
from linkmem.embed.base import Embedder
from linkmem.entities.inherit import Inheritance, InheritedKey
from linkmem.extract.base import EntityExtractor, ExtractedEntity
from linkmem.ids import new_id
from linkmem.store.base import NewEntity, Store
from linkmem.types import Scope


@dataclass(frozen=True)
class LinkPlan:
    """Entities of a batch, computed before the transaction (model work stays outside it)."""

    # entity keys of each memory, in text order, then those it inherits (``InheritedKey``)
    per_memory: list[list[str]]
    entities: dict[str, ExtractedEntity]  # unique key -> first occurrence
    vectors: dict[str, np.ndarray]  # unique key -> embedding

    @property
    def empty(self) -> bool:
        return not self.entities


class EntityCollector:
    """Gathers the entities of a batch chunk by chunk: each memory's keys (capped at
    ``max_entities_per_memory``, then the names it inherits: ``entities.inherit``) and the
    first occurrence of each unique key."""

    def __init__(self, config: RetrievalConfig, inheritance: Inheritance | None = None) -> None:
        self.cap = config.max_entities_per_memory
        self.inheritance = inheritance or write_call_inheritance(config)
        self.per_memory: list[list[str]] = []
        self.entities: dict[str, ExtractedEntity] = {}

    def add(
        self, extracted: Sequence[Sequence[ExtractedEntity]], texts: Sequence[str] = ()
    ) -> list[str]:
        """Take one chunk's extractions (one list per text, in the order written) and, for
        inheritance, its texts; return the keys new to the batch."""
        capped = [list(entities[: self.cap]) for entities in extracted]
        linked = self.inheritance.apply(texts, capped) if texts else capped
        new: list[str] = []
        for own, entities in zip(capped, linked, strict=True):
            keys: list[str] = []
            for i, entity in enumerate(entities):
                if entity.key not in self.entities:
                    self.entities[entity.key] = entity
                    new.append(entity.key)
                keys.append(entity.key if i < len(own) else InheritedKey(entity.key))
            self.per_memory.append(list(dict.fromkeys(keys)))  # own first: an own key wins
        return new

    def texts(self, keys: Sequence[str]) -> list[str]:
        return [self.entities[k].text for k in keys]

    def plan(self, vectors: dict[str, np.ndarray]) -> LinkPlan:
        return LinkPlan(self.per_memory, self.entities, vectors)


def write_call_inheritance(config: RetrievalConfig) -> Inheritance:
    """The back-reference state of one write call: a staged batch's chunks share it, so a
    memory at a chunk's edge inherits from the one before it as anywhere else."""
    return Inheritance(
        config.entity_inherit_window, config.entity_inherit_replies, config.entity_aliases
    )


def plan_links(
    texts: Sequence[str],
    extractor: EntityExtractor,
    embedder: Embedder,
    config: RetrievalConfig,
) -> LinkPlan:
    """Extract every text's entities in one pass and embed the unique ones in one batch
    (``linkmem.encoding`` runs this beside the texts' own embedding)."""
    collector = EntityCollector(config)
    keys = collector.add(extractor.extract_batch(list(texts)), texts)
    if not keys:
        return collector.plan({})
    return collector.plan(dict(zip(keys, embedder.embed_batch(collector.texts(keys)))))


def apply_links(
    store: Store, scope: Scope, memory_ids: Sequence[str], plan: LinkPlan, config: RetrievalConfig
) -> int:
    """Resolve each key to an entity of ``scope`` (exact key, else cosine >= merge threshold,
    else a new row) and link the memories. Runs inside the caller's transaction."""
    if plan.empty:
        return 0
    resolved = store.find_entities(scope, list(plan.entities))
    unmatched = [k for k in plan.entities if k not in resolved]
    resolved.update(_semantic_matches(store, scope, unmatched, plan, config))
    new = _new_entities(scope, [k for k in unmatched if k not in resolved], plan, config)
    resolved.update(_insert(store, new))
    own: dict[tuple[str, str], None] = {}
    inherited: dict[tuple[str, str], None] = {}
    for mid, keys in zip(memory_ids, plan.per_memory):
        for key in keys:
            (inherited if isinstance(key, InheritedKey) else own)[mid, resolved[key]] = None
    store.link(list(own))
    # Two keys may resolve to one entity: the memory's own link to it wins.
    store.link([pair for pair in inherited if pair not in own], own=False)
    return len(own) + len(inherited)


def _semantic_matches(
    store: Store, scope: Scope, keys: list[str], plan: LinkPlan, config: RetrievalConfig
) -> dict[str, str]:
    if not keys:
        return {}
    vectors = np.stack([plan.vectors[k] for k in keys])
    nearest = store.nearest_entities(
        scope, vectors, 1, config.entity_merge_similarity, exact_scope=True
    )
    return {key: hits[0][0] for key, hits in zip(keys, nearest) if hits}


def _new_entities(
    scope: Scope, keys: list[str], plan: LinkPlan, config: RetrievalConfig
) -> list[tuple[str, NewEntity]]:
    """New rows for ``keys``; a key within merge distance of an earlier new key of the same
    batch becomes an alias of it instead of a second row."""
    rows: list[tuple[str, NewEntity]] = []
    kept: list[NewEntity] = []
    for key in keys:
        vector = plan.vectors[key]
        twin = next(
            (e for e in kept if float(e.vector @ vector) >= config.entity_merge_similarity), None
        )
        if twin is None:
            entity = plan.entities[key]
            twin = NewEntity(new_id(), entity.text, key, entity.kind.value, scope, vector)
            kept.append(twin)
        rows.append((key, twin))
    return rows


def _insert(store: Store, rows: list[tuple[str, NewEntity]]) -> dict[str, str]:
    if not rows:
        return {}
    unique = list({e.key: e for _, e in rows}.values())
    ids = store.insert_entities(unique)
    return {key: ids[entity.key] for key, entity in rows}
