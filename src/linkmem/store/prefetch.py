"""What one search will read, for stores that can fetch it in a few round trips.

A store may offer ``search_reads(plan)``: a context manager yielding a store-like view that
answers the reads of one search (``vector_search``, ``keyword_search``, ``entities_by_key``,
``nearest_entities``, ``get_entities``, ``memories_of_entities``, ``entities_of_memories``,
``get_memories``) with exactly the plain store's answers, fetched ahead in batches; a read it
did not fetch goes to the store. The search pipeline (``linkmem.search``) uses it when the
store has it.

A store (or its view) may also offer ``links_among(entity_ids, memory_ids)``: entity id ->
those of ``memory_ids`` linked to it, the one thing a search needs to know about its hub
entities; without it the search reads the candidates' entities (``entities_of_memories``).
Likewise ``rare_entities_of_memories(memory_ids, max_links)``: ``entities_of_memories``
without the entities of more than ``max_links`` links, what the second hop reads of its
sources (``linkmem.entities.hop``). And ``memory_dates(ids)``: the id, text and date of each
memory, all the time signal reads of a search's first results (``linkmem.rank.time_boost``);
without it the search reads their records.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from linkmem.entities.query_entities import QueryEntities
from linkmem.filters import Node
from linkmem.types import Scope


@dataclass(frozen=True)
class SearchPlan:
    """The first reads of one search: the dense and keyword (of ``terms``) top ``pool`` when
    ``dense`` / ``keyword``; with ``entities`` (the entity signal), the stored entities of
    its keys (``entities_by_key``), the entities near their vectors
    (``entities.vectors(found)``), and the links of entities with at most
    ``specific_max_links`` (boosts) or ``hop_max_links`` (second hop) links.

    The query's vector may still be under way when the plan is made (``query_vector`` waits
    for it and returns the same array each call): a view sends the reads that do not need it
    first."""

    scope: Scope
    filters: Node | None
    query_vector: Callable[[], np.ndarray]
    dim: int
    terms: list[str]
    pool: int
    dense: bool
    keyword: bool
    entities: QueryEntities | None
    entity_k: int
    entity_min_similarity: float
    specific_max_links: int
    hop_max_links: int

    @property
    def vector(self) -> np.ndarray:
        """The query's vector (waits for it)."""
        return self.query_vector()
