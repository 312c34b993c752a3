"""SQLite BM25 from the cached postings (``store.sqlite.keyword_cache``) equals BM25 summed in
SQL, after this process's writes (appended), another connection's writes (reloaded), updates,
deletes and repairs, across scopes, for the top-k and for given ids."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from helpers import CapitalisedWordsExtractor

from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder
from linkmem.rank.terms import query_terms
from linkmem.store.sqlite.keyword_cache import KeywordCache
from linkmem.types import Scope

WORDS = "dog walk park coffee deploy script book film trip dinner plan garden Max Lisbon".split()
QUERIES = ["dog walk", "coffee in Lisbon", "Max garden plan book", "film", "nothing matches"]
SCOPES = [Scope(user_id="alice"), Scope(user_id="alice", agent_id="a1"), Scope(user_id="bob")]


def texts(rng: random.Random, n: int) -> list[str]:
    return [" ".join(rng.choices(WORDS, k=rng.randint(1, 8))) for _ in range(n)]


def open_memory(path: Path) -> Memory:
    return Memory(path, embedder=FakeEmbedder(), extractor=CapitalisedWordsExtractor())


def rounded(ranked: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """Scores to 1e-9 (a memory's terms may be added in another order), ties by id."""
    return sorted(((i, round(s, 9)) for i, s in ranked), key=lambda x: (-x[1], x[0]))


def assert_same_as_sql(memory: Memory, k: int = 7) -> None:
    store = memory.store
    ids = [r["id"] for r in memory.get_all(user_id="alice", limit=1000)["results"]][::3]
    for scope in SCOPES:
        for query in QUERIES:
            terms = list(dict.fromkeys(query_terms(query)))
            stats = store.keyword_stats(terms, scope)
            if stats is None:
                continue
            for wanted, size in [(None, k), (ids, len(ids)), (ids[:4], 2)]:
                cached = store.keyword_scores(stats, scope, size, None, wanted)
                sql = store._sql_keyword_scores(stats, scope, size, None, wanted)
                assert rounded(cached) == rounded(sql), (scope, query, wanted)


def count_reads(memory: Memory) -> list[Any]:
    reads: list[Any] = []
    original = memory.store._read_postings

    def read(scope_id: int, terms: list[str]) -> Any:
        reads.append(scope_id)
        return original(scope_id, terms)

    memory.store._read_postings = read
    return reads


def seed(memory: Memory, rng: random.Random) -> None:
    memory.add_batch(texts(rng, 60), user_id="alice")
    memory.add_batch(texts(rng, 20), user_id="alice", agent_id="a1")
    memory.add_batch(texts(rng, 15), user_id="bob")


def test_cached_bm25_equals_sql_through_writes(tmp_path: Path) -> None:
    rng = random.Random(3)
    with open_memory(tmp_path / "m.db") as memory, open_memory(tmp_path / "m.db") as other:
        seed(memory, rng)
        assert_same_as_sql(memory)
        reads = count_reads(memory)
        memory.add_batch(texts(rng, 30), user_id="alice")  # appended to the cached terms
        memory.add("dog dog dog walk", user_id="alice")
        assert_same_as_sql(memory)
        assert reads == []
        first = memory.get_all(user_id="alice", limit=5)["results"]
        memory.update(first[0]["id"], "coffee coffee Lisbon garden")
        memory.delete(first[1]["id"])
        other.add_batch(texts(rng, 10), user_id="alice")  # another connection's write
        assert_same_as_sql(memory)
        assert reads  # reloaded after the update, delete and the other connection's add


def test_a_repair_reloads_the_postings(tmp_path: Path) -> None:
    with open_memory(tmp_path / "m.db") as memory:
        seed(memory, random.Random(5))
        assert_same_as_sql(memory)
        store = memory.store
        store.db.run(f"UPDATE {store.c}_postings SET tf = tf + 2 WHERE term = 'dog'")
        memory.check(repair=True)
        assert_same_as_sql(memory)


@pytest.mark.parametrize("max_bytes", [0, 3000])
def test_a_bounded_cache_gives_the_same_scores(tmp_path: Path, max_bytes: int) -> None:
    with open_memory(tmp_path / "m.db") as memory:
        memory.store.keyword_cache = KeywordCache(max_bytes)
        seed(memory, random.Random(9))
        assert_same_as_sql(memory)
        memory.add_batch(texts(random.Random(1), 10), user_id="bob")
        assert_same_as_sql(memory)
        assert memory.store.keyword_cache.nbytes <= max_bytes


def test_keyword_search_uses_the_cache_once_warm(tmp_path: Path) -> None:
    with open_memory(tmp_path / "m.db") as memory:
        seed(memory, random.Random(4))
        memory.search("dog walk park", user_id="alice")
        reads = count_reads(memory)
        found = memory.search("park walk dog", user_id="alice")["results"]
        assert found and reads == []
