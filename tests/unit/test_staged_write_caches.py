"""A staged add_batch (several chunks, one transaction) into a searched SQLite scope: the
in-process caches drop the scope instead of keeping every chunk's rows until the commit, and
searches after it see exactly what a fresh handle sees."""

from __future__ import annotations

import pytest

import linkmem.staged_write as staged_write
from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder
from linkmem.types import Scope


@pytest.fixture
def open_memory(tmp_path):
    from helpers import CapitalisedWordsExtractor

    opened: list[Memory] = []

    def open_one() -> Memory:
        memory = Memory(
            tmp_path / "m.db", embedder=FakeEmbedder(), extractor=CapitalisedWordsExtractor()
        )
        opened.append(memory)
        return memory

    yield open_one
    for memory in opened:
        memory.close()


def texts(n: int) -> list[str]:
    names = ["Max", "Lisbon", "Ana", "Bo"]
    return [f"note {i} about {names[i % 4]} and gardening tomatoes {i % 7}" for i in range(n)]


def ranked(memory: Memory, query: str) -> list[tuple[str, float]]:
    found = memory.search(query, user_id="u", top_k=10)["results"]
    return [(r["memory"], round(r["score"], 6)) for r in found]


def test_a_staged_batch_into_a_searched_scope_drops_it_and_searches_stay_exact(
    open_memory, monkeypatch
):
    monkeypatch.setattr(staged_write, "WRITE_CHUNK", 4)
    memory = open_memory()
    memory.add_batch(texts(3), user_id="u")
    before = ranked(memory, "Max tomatoes")  # caches the scope's vectors and these terms
    assert memory.store.memory_vectors.nbytes > 0 and memory.store.keyword_cache.nbytes > 0
    memory.add_batch(texts(14), user_id="u")  # 4 chunks in one transaction
    scope_id = memory.store._scope_id(Scope(user_id="u"), create=False)
    assert scope_id not in memory.store.memory_vectors._entries
    assert scope_id not in memory.store.keyword_cache._entries
    after = ranked(memory, "Max tomatoes")
    assert after == ranked(open_memory(), "Max tomatoes")
    assert after != before and len(memory.get_all(user_id="u", limit=100)["results"]) == 17


def test_one_chunk_still_extends_the_caches_in_place(open_memory):
    memory = open_memory()
    memory.add_batch(texts(3), user_id="u")
    ranked(memory, "Max tomatoes")
    loads: list[int] = []
    original = memory.store.memory_vectors._loader
    memory.store.memory_vectors._loader = lambda s, since: loads.append(s) or original(s, since)
    memory.add_batch(texts(5), user_id="u")
    assert ranked(memory, "Max tomatoes") == ranked(open_memory(), "Max tomatoes")
    assert loads == []
