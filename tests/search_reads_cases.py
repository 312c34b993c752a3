"""Shared by the tests of each store's ``search_reads`` view: a seeded store, the searches to
compare, and a switch back to the plain one-read-at-a-time path."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from helpers import CapitalisedWordsExtractor

import linkmem.search
from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder
from linkmem.search import Signals

NAMES = ["Max", "Lisbon", "Ana Lopez", "Berlin", "Project Falcon", "Rome", "Little Women"]
NAMES += [f"Person{i}" for i in range(30)]
WORDS = "dog walk park coffee deploy script book film trip dinner plan garden".split()
QUERIES = [
    "How is Max doing?",
    "What did Ana Lopez read in Rome?",
    "Person3 and Person7 plan a trip",
    "coffee in Lisbon",
    "Project Falcon deploy",
    "Nobody Known here",
    "Max dog walk park",
]
CASES = [
    {},
    {"top_k": 3},
    {"top_k": 40},
    {"filters": {"topic": "pets"}},
    {"filters": {"n": 1}},  # fewer rows than the pool: the exact fallback
    {"threshold": 0.05},
    {"signals": Signals(entities=False)},
    {"signals": Signals(dense=False)},
    {"signals": Signals(keyword=False)},
]
SMALL_POOL = {"pool_min": 5, "pool_factor": 1}  # second-hop targets outside the first reads


def seed(memory: Memory) -> Memory:
    """100 memories of alice (names, words, metadata) and 20 of bob."""
    rng = random.Random(7)
    texts = [
        " ".join([*rng.sample(NAMES[:7], 1), *rng.sample(NAMES[7:], 2), *rng.sample(WORDS, 3)])
        for _ in range(90)
    ]
    # Rare names (two memories each) for the second hop.
    texts += [f"Rare{i // 2} {rng.choice(NAMES[:7])} {rng.choice(WORDS)}" for i in range(10)]
    metadata = [{"n": i % 5, "topic": rng.choice(["pets", "work"])} for i in range(100)]
    memory.add_batch(texts, user_id="alice", metadata=metadata)
    memory.add_batch(texts[:20], user_id="bob")
    return memory


def seeded_sqlite(path: Path, **retrieval: int) -> Memory:
    """A seeded SQLite memory with stand-in models, whose pool reads the links of entities of up
    to 6 links (hubs and rare ones); ``retrieval`` adds settings."""
    settings = {"entity_pool_max_links": 6, **retrieval}
    memory = Memory(
        path, embedder=FakeEmbedder(), extractor=CapitalisedWordsExtractor(), retrieval=settings
    )
    return seed(memory)


@contextmanager
def plain_reads() -> Iterator[None]:
    """Searches read the store directly, one read at a time."""
    mp = pytest.MonkeyPatch()

    @contextmanager
    def plain(store: Any, plan: Any) -> Iterator[Any]:
        yield store

    mp.setattr(linkmem.search, "_reads", plain)
    try:
        yield
    finally:
        mp.undo()


def results(memory: Memory, query: str, **kwargs: Any) -> list[tuple[Any, ...]]:
    hits = memory.search(query, user_id="alice", explain=True, **kwargs)["results"]
    return [(h["id"], h["memory"], h["score"], h["score_details"]) for h in hits]


def all_results(memory: Memory) -> list[list[tuple[Any, ...]]]:
    return [results(memory, q, **case) for q in QUERIES for case in CASES]


#: Writes that are not adds alone, for the tests of the caches carried across adds.
OTHER_WRITES = ["update", "delete", "add and update"]


def other_write(memory: Memory, write: str) -> None:
    """One of ``OTHER_WRITES`` to alice's scope (the last two in one transaction: the update
    spoils the add's carry)."""
    some = memory.get_all(user_id="alice", limit=2)["results"]
    if write == "update":
        memory.update(some[0]["id"], "Max walks the dog in Lisbon", user_id="alice")
    elif write == "delete":
        memory.delete(some[0]["id"], user_id="alice")
    else:
        with memory.store.transaction():
            memory.add("Max met Zelda Quill", user_id="alice")
            memory.update(some[1]["id"], "Ana Lopez in Rome", user_id="alice")
