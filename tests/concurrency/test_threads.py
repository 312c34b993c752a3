"""Threads sharing one ``Memory``: no deadlock, no word of another thread in the BM25 index."""

from __future__ import annotations

import random
import string
import threading
import time
from collections.abc import Callable

import pytest
from watchdog import run_threads

from linkmem.rank import terms as terms_module
from linkmem.types import Scope


def _words(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    suffixes = ["ing", "ness", "ational", "fulness", "ly", "ations", "ed", "ies", "ement"]
    return [
        "".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))) + rng.choice(suffixes)
        for _ in range(n)
    ]


def test_threads_stem_their_own_words():
    import snowballstemmer

    reference = snowballstemmer.stemmer("english")
    batches = [_words(seed, 20_000) for seed in range(4)]
    expected = [[reference.stemWord(w) for w in batch] for batch in batches]
    got: list[list[str]] = [[] for _ in batches]
    terms_module._stem.cache_clear()

    def stem(i: int) -> Callable[[], None]:
        return lambda: got[i].extend(terms_module._stem(w) for w in batches[i])

    run_threads([stem(i) for i in range(len(batches))])
    assert got == expected


@pytest.mark.parametrize("backend", ["sqlite"])
def test_search_loading_the_cache_while_a_writer_commits_does_not_deadlock(memory):
    """The old deadlock, forced: a search loads a stale scope matrix while a writer holds the
    connection; the writer's after-commit cache update then needs the cache. Before the fix
    the search held the cache's lock while waiting for the connection: both waited forever."""
    memory.add("Max walks in the park", user_id="u")
    gone = memory.add("Ana reads", user_id="u")["results"][0]["id"]
    memory.search("Max", user_id="u")  # the scope's matrix is cached
    memory.delete(gone)  # ... and now stale: the next search reloads it
    [(scope_id, version)] = memory.store._matching_scopes(Scope(user_id="u"))
    writer_holds_connection = threading.Event()

    def write() -> None:
        with memory.store.transaction():
            memory.add("Max runs", user_id="u")  # joins: commits when the block ends
            writer_holds_connection.set()
            time.sleep(0.5)  # the search is now waiting to load the matrix

    def search() -> None:
        writer_holds_connection.wait(10)
        assert memory.store.memory_vectors.get(scope_id, version).ids

    run_threads([write, search], timeout=20.0)
    assert len(memory.search("Max", user_id="u")["results"]) == 2


@pytest.mark.parametrize("backend", ["sqlite"])
def test_writers_and_searchers_on_one_memory_keep_going(memory):
    memory.add("Max walks in the park with Ana", user_id="u")
    stop = time.monotonic() + 2.0
    done = [0]

    def write() -> None:
        i = 0
        while time.monotonic() < stop:
            added = memory.add(f"Max met Ana at the park, visit {i}", user_id="u")["results"]
            memory.delete(added[0]["id"])
            i += 1
        done[0] += i

    def search() -> None:
        while time.monotonic() < stop:
            assert memory.search("Max park", user_id="u")["results"]

    run_threads([write, search, search], timeout=30.0)
    assert done[0] > 0 and len(memory.get_all(user_id="u")["results"]) == 1
