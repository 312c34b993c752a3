"""Read path: the query's entities -> similar entities in scope -> boosts for linked memories."""

from __future__ import annotations

from linkmem.config import RetrievalConfig
from linkmem.embed.base import Embedder
from linkmem.extract.base import EntityExtractor
from linkmem.rank.fusion import best_boosts
from linkmem.store.base import Store
from linkmem.types import Scope


def query_entities(query: str, extractor: EntityExtractor, config: RetrievalConfig) -> list[str]:
    """Unique entity texts of the query (by key), at most ``max_query_entities``."""
    unique = {e.key: e.text for e in extractor.extract_batch([query])[0]}
    return list(unique.values())[: config.max_query_entities]


def entity_boosts(
    query: str,
    scope: Scope,
    store: Store,
    extractor: EntityExtractor,
    embedder: Embedder,
    config: RetrievalConfig,
) -> dict[str, tuple[float, str]]:
    """memory id -> (best boost, the stored entity text that gave it)."""
    texts = query_entities(query, extractor, config)
    if not texts:
        return {}
    vectors = embedder.embed_batch(texts)
    hits = store.nearest_entities(
        scope, vectors, config.entity_search_k, config.entity_search_min_similarity, False
    )
    similarity: dict[str, float] = {}
    for entity_hits in hits:
        for entity_id, sim in entity_hits:
            similarity[entity_id] = max(sim, similarity.get(entity_id, 0.0))
    if not similarity:
        return {}
    linked = store.memories_of_entities(list(similarity))
    names = {e.id: e.text for e in store.get_entities(list(linked))}
    matches = ((names[eid], similarity[eid], len(mids), mids) for eid, mids in linked.items())
    return best_boosts(matches, config)
