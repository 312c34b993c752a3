"""Stored data for the explorer tests: a short conversation whose search, entity graph and
merge have known answers, and a large scope (10k memories naming 2k entities) for the load
test. Seeded through an embedded ``Memory`` opened on the server's store."""

from __future__ import annotations

import itertools
import random
from typing import Any

from helpers import CapitalisedWordsExtractor

from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder

#: Alice's conversation. "Max" is named in three memories (the search's boost), "Lisbon"
#: shares memories with Max, Ana and Carlos (the graph), and "Lisboa" is the duplicate a
#: person would merge into Lisbon.
CONVERSATION = [
    "I adopted a dog named Max last spring",
    "Max loves running on the beach in Lisbon",
    "My sister Ana lives in Lisbon near the river",
    "Ana visited Porto with Carlos last week",
    "Carlos works in Lisbon and walks Max on Sundays",
    "We flew to Lisboa for the marathon",
    "Ana thinks Porto has the best coffee",
]
SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "be", "da", "fu", "go", "pe", "zu"]


def open_store(settings: dict[str, Any]) -> Memory:
    return Memory(embedder=FakeEmbedder(), extractor=CapitalisedWordsExtractor(), **settings)


def seed_conversation(settings: dict[str, Any], user_id: str = "alice") -> None:
    with open_store(settings) as memory:
        memory.add_batch(CONVERSATION, user_id=user_id)


def names(n: int) -> list[str]:
    """``n`` distinct made-up two-word names ("Kaka Kalomi", ...)."""
    first = ["".join(p).capitalize() for p in itertools.product(SYLLABLES, repeat=2)]
    last = ["".join(p).capitalize() for p in itertools.product(SYLLABLES, repeat=3)]
    return [f"{first[i % len(first)]} {last[(i * 11) % len(last)]}" for i in range(n)]


def seed_large_scope(
    settings: dict[str, Any], user_id: str, memories: int, entities: int, chunk: int = 1000
) -> None:
    """``memories`` memories naming ``entities`` entities, 2-3 each, a few names far more
    often than the rest (as in a real conversation); seeded, so always the same data."""
    rng = random.Random(12)
    pool = names(entities)
    weights = [1.0 / (rank + 1) ** 0.8 for rank in range(entities)]
    texts = []
    for i in range(memories):
        picked = {pool[i % entities]} | set(rng.choices(pool, weights, k=rng.randint(1, 2)))
        texts.append(f"note {i}: " + " and ".join(sorted(picked)) + f" talked about item {i % 97}")
    with open_store(settings) as memory:
        for start in range(0, memories, chunk):
            memory.add_batch(texts[start : start + chunk], user_id=user_id)
