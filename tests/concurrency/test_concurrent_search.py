"""Many searches of one ``Memory`` at once: each embeds its query on the shared side pool
while it reads the store (``linkmem.search``), and gets what a lone search gets."""

from __future__ import annotations

import time
from concurrent.futures import wait

import numpy as np
import pytest
from backends import BACKENDS
from watchdog import WATCHDOG_SECONDS, run_threads

from linkmem.embed.fake import FakeEmbedder
from linkmem.side_threads import MAX_THREADS, side_pool

TEXTS = [
    "Max walks in the park with Ana every morning",
    "Ana reads a book about Paris in the evening",
    "Jon cooks pasta for Max and Ana on Fridays",
    "The park near the river has a new playground",
    "Paris was rainy when Jon visited in May",
    "Ana and Jon adopted a grey kitten called Luna",
    "Max plays chess with Jon at the library",
    "Luna sleeps on the sofa all afternoon",
]
QUERIES = [
    "Where does Max walk?",
    "What did Ana read about Paris?",
    "Who adopted Luna?",
    "What does Jon cook on Fridays?",
    "chess at the library",
    "When did Jon visit Paris?",
]


class SlowEmbedder(FakeEmbedder):
    """The fake embedder, slower than the store reads of a search and without the GIL while
    it waits (as onnxruntime runs): the reads run beside it, searches pile up on the pool."""

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        time.sleep(0.005)
        return super().embed_batch(texts)


def _filled(make_memory, **kwargs):
    memory = make_memory(embedder=SlowEmbedder(), **kwargs)
    memory.add_batch(TEXTS, user_id="u")
    return memory


def _results(memory, query: str) -> list[tuple]:
    hits = memory.search(query, user_id="u", top_k=5, explain=True)["results"]
    return [(h["id"], h["score"], tuple(sorted(h["score_details"].items()))) for h in hits]


@pytest.mark.parametrize("backend", BACKENDS)
def test_many_threads_searching_at_once_get_a_lone_searchs_results(make_memory):
    memory = _filled(make_memory)
    expected = {q: _results(memory, q) for q in QUERIES}
    got: list[tuple[str, list]] = []

    def searcher(offset: int):
        def work() -> None:
            for i in range(len(QUERIES)):
                query = QUERIES[(offset + i) % len(QUERIES)]
                got.append((query, _results(memory, query)))

        return work

    run_threads([searcher(i) for i in range(2 * MAX_THREADS)])  # more than the pool holds
    assert len(got) == 2 * MAX_THREADS * len(QUERIES)
    assert all(results == expected[query] for query, results in got)


@pytest.mark.parametrize("backend", ["sqlite"])
def test_searches_running_on_every_thread_of_the_side_pool_finish(make_memory):
    """Every pool thread runs a search, so no query's embedding can start on the pool: each
    search embeds its own query instead of waiting for a pool thread (no deadlock)."""
    memory = _filled(make_memory)
    expected = {q: _results(memory, q) for q in QUERIES}
    jobs = [
        (q, side_pool().submit(_results, memory, q))
        for q in QUERIES * (MAX_THREADS // len(QUERIES) + 2)
    ]
    done, running = wait([job for _, job in jobs], timeout=WATCHDOG_SECONDS)
    assert not running, f"{len(running)} searches still running: a deadlock"
    assert all(job.result() == expected[q] for q, job in jobs)


@pytest.mark.parametrize("backend", ["sqlite"])
def test_a_search_inside_an_open_transaction_sees_its_writes(make_memory):
    """The store is read on the caller's thread, which holds the connection: a read on
    another thread would wait for the transaction to end, and miss its writes."""
    memory = _filled(make_memory)
    found: list[list[str]] = []

    def write_then_search() -> None:
        with memory.store.transaction():
            memory.add("Ana learns the violin", user_id="u", infer=False)
            found.append([h["memory"] for h in memory.search("violin", user_id="u")["results"]])

    run_threads([write_then_search])
    assert found and "Ana learns the violin" in found[0]
