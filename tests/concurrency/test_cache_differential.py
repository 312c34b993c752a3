"""A long-lived Memory's caches against a fresh Memory's reads (both backends).

A searching Memory keeps much between searches: records, a searched scope's rows, postings,
the entities' records and lists, the hop index, the nearest entities, the dense rows, and
carries some of it across its own adds. After every random write, made by it or by another
Memory on the same store (another connection, as another process would be), each search it
answers must equal a fresh Memory's, which has nothing cached: same ids, texts, metadata,
dates, scores and score parts."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
from stress_worker import NAMES as SHARED

from linkmem import Memory
from linkmem.search import Signals

NAMES = [*SHARED, "Rome", "Project Falcon", *(f"Rare{i}" for i in range(6))]
WORDS = "dog walk park coffee deploy script book film trip dinner".split()
QUERIES = [
    "How is Max doing?",
    "Ana Lopez and Oscar in Tokyo",
    "When did Max go to Lisbon?",
    "Rare2 coffee",
    "Project Falcon deploy script",
    "park walk",
]
CASES: list[dict[str, Any]] = [
    {},
    {"top_k": 3},
    {"top_k": 30},
    {"filters": {"n": 1}},
    {"threshold": 0.05},
    {"signals": Signals(entities=False)},
    {"signals": Signals(dense=False)},
    {"signals": Signals(keyword=False)},
]
#: Small entity pools, so searches read hubs' lists and second hops beyond the first reads.
RETRIEVAL = {"entity_pool_max_links": 1, "pool_min": 5, "pool_factor": 1}
STEPS = 36


def sentence(rng: random.Random) -> str:
    names = rng.sample(NAMES[:-6], rng.randint(1, 3))
    if rng.random() < 0.2:
        names.append(rng.choice(NAMES[-6:]))
    return " ".join([*names, *rng.sample(WORDS, 2)])


def add(memory: Memory, rng: random.Random, user: str = "alice") -> None:
    n = rng.randint(1, 4)
    dated = rng.random() < 0.5
    memory.add_batch(
        [sentence(rng) for _ in range(n)],
        user_id=user,
        metadata=[{"n": rng.randint(0, 2)} for _ in range(n)],
        timestamp=[f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T10:00:00" for _ in range(n)]
        if dated
        else None,
    )


def write(memory: Memory, rng: random.Random) -> str:
    """One random write by ``memory``; returns its name."""
    ids = [r["id"] for r in memory.get_all(user_id="alice", limit=1000)["results"]]
    kinds = ["add", "add", "add", "text", "metadata", "delete", "bob", "bob gone", "two", "reset"]
    kind = rng.choices(kinds, weights=[1] * 9 + [0.2])[0]
    if kind == "add" or len(ids) < 5:
        add(memory, rng)
        return "add"
    if kind == "text":
        memory.update(rng.choice(ids), sentence(rng), user_id="alice")
    elif kind == "metadata":
        memory.update(rng.choice(ids), metadata={"n": rng.randint(0, 2)}, user_id="alice")
    elif kind == "delete":
        memory.delete(rng.choice(ids), user_id="alice")
    elif kind == "bob":
        add(memory, rng, user="bob")
    elif kind == "bob gone":
        memory.delete_all(user_id="bob")
    elif kind == "two":  # an add and an update in one transaction
        with memory.store.transaction():
            add(memory, rng)
            memory.update(rng.choice(ids), sentence(rng), user_id="alice")
    else:
        memory.reset()
    return kind


def results(memory: Memory, query: str, case: dict[str, Any]) -> list[dict[str, Any]]:
    return memory.search(query, user_id="alice", explain=True, **case)["results"]


def assert_alike(got: Any, want: Any, where: str) -> None:
    """Equal, but floats within 2e-6 (a fresh Memory may add in another order)."""
    if isinstance(want, float) and isinstance(got, float):
        assert math.isclose(got, want, abs_tol=2e-6), where
    elif isinstance(want, dict) and isinstance(got, dict):
        assert got.keys() == want.keys(), where
        for key in want:
            assert_alike(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list) and isinstance(got, list):
        assert len(got) == len(want), f"{where}: {len(got)} results, a fresh Memory {len(want)}"
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            assert_alike(a, b, f"{where}[{i}]")
    else:
        assert got == want, where


def check(kept: Memory, fresh: Memory, rng: random.Random, step: str) -> None:
    cases = rng.sample(CASES, 3)
    for query in QUERIES:
        for case in cases:
            results(kept, query, case)  # the first search at new versions warms; the second reads
            got = results(kept, query, case)
            assert_alike(got, results(fresh, query, case), f"{step}: {query!r} {case}")


@pytest.mark.slow
@pytest.mark.embedded
@pytest.mark.parametrize("seed", [1, 2])
def test_a_searching_memory_answers_as_a_fresh_one_after_every_write(make_memory, seed):
    rng = random.Random(seed)
    kept, other = make_memory(retrieval=RETRIEVAL), make_memory(retrieval=RETRIEVAL)
    for _ in range(4):
        add(kept, rng)
    for i in range(STEPS):
        writer = rng.choice([kept, other])
        kind = write(writer, rng)
        fresh = make_memory(retrieval=RETRIEVAL)
        try:
            check(kept, fresh, rng, f"step {i}: {'own' if writer is kept else 'other'} {kind}")
        finally:
            fresh.close()
