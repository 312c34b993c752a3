"""A search's results' records from the record cache (``store.sqlite.record_cache``) are the
store's: after this process's updates (metadata alone, text), deletes and a reset, after
another process's metadata update, inside an open transaction and after its rollback, and
when a caller changes what a result holds; and so are the dates the time signal reads
(``memory_dates``)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import CapitalisedWordsExtractor

from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder
from linkmem.store.sqlite.record_cache import RecordCache

TESTS = Path(__file__).parents[1]
TEXTS = [
    "Ana Lopez moved to Lisbon last spring",
    "Max the dog sleeps all day in Lisbon",
    "Ana Lopez plays chess with Max on Sundays",
    "The Rome trip was in October",
]


def open_memory(path: Path) -> Memory:
    return Memory(path, embedder=FakeEmbedder(), extractor=CapitalisedWordsExtractor())


def seeded(path: Path) -> tuple[Memory, list[str]]:
    memory = open_memory(path)
    added = memory.add_batch(TEXTS, user_id="alice", metadata=[{"n": 1}] * len(TEXTS))["results"]
    return memory, [r["id"] for r in added]


def results(memory: Memory, query: str = "Ana Lopez Lisbon Max") -> dict[str, dict]:
    found = memory.search(query, user_id="alice", top_k=10)["results"]
    return {hit["id"]: hit for hit in found}


def test_this_process_writes_are_seen(tmp_path: Path) -> None:
    memory, ids = seeded(tmp_path / "m.db")
    with memory:
        first = results(memory)
        assert set(first) == set(ids)
        assert memory.store.record_cache.nbytes > 0  # the results' records are held
        assert results(memory) == first
        memory.update(ids[0], metadata={"n": 2})  # metadata alone: no version moves
        assert results(memory)[ids[0]]["metadata"] == {"n": 2}
        memory.update(ids[1], text="Max the dog sleeps all night in Lisbon")
        assert results(memory)[ids[1]]["memory"] == "Max the dog sleeps all night in Lisbon"
        memory.delete(ids[2])
        assert ids[2] not in results(memory)
        memory.reset()
        assert results(memory) == {}


WRITER = """
import sys
from helpers import CapitalisedWordsExtractor
from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder

memory = Memory(sys.argv[1], embedder=FakeEmbedder(), extractor=CapitalisedWordsExtractor())
memory.update(sys.argv[2], metadata={"n": int(sys.argv[3])})
memory.close()
"""


def test_another_process_metadata_update_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    memory, ids = seeded(path)
    with memory:
        assert results(memory)[ids[0]]["metadata"] == {"n": 1}
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), *sys.path])}
        subprocess.run(
            [sys.executable, "-c", textwrap.dedent(WRITER), str(path), ids[0], "7"],
            check=True,
            env=env,
            timeout=120,
        )
        assert results(memory)[ids[0]]["metadata"] == {"n": 7}
        assert results(memory)[ids[0]]["metadata"] == {"n": 7}


def test_a_search_inside_a_transaction_sees_it_and_keeps_nothing(tmp_path: Path) -> None:
    memory, ids = seeded(tmp_path / "m.db")
    with memory:
        results(memory)
        with pytest.raises(RuntimeError), memory.store.transaction():
            memory.update(ids[0], metadata={"n": 5})
            assert results(memory)[ids[0]]["metadata"] == {"n": 5}
            raise RuntimeError("rolled back")
        assert results(memory)[ids[0]]["metadata"] == {"n": 1}


def test_changing_a_result_changes_no_later_result(tmp_path: Path) -> None:
    memory = open_memory(tmp_path / "m.db")
    with memory:
        added = memory.add("Ana Lopez moved to Lisbon", user_id="alice", metadata={"tags": ["a"]})
        memory_id = added["results"][0]["id"]
        hit = results(memory, "Ana Lopez Lisbon")[memory_id]
        hit["metadata"]["tags"].append("changed")
        hit["metadata"]["new"] = 1
        assert results(memory, "Ana Lopez Lisbon")[memory_id]["metadata"] == {"tags": ["a"]}


def test_a_bounded_cache_gives_the_same_records(tmp_path: Path) -> None:
    memory, ids = seeded(tmp_path / "m.db")
    with memory:
        expected = results(memory)
        memory.store.record_cache = RecordCache(max_bytes=500)  # about one record
        for _ in range(3):
            assert results(memory) == expected
        assert memory.store.record_cache.nbytes <= 500


def test_the_time_signals_dates_are_the_stores(tmp_path: Path) -> None:
    memory, ids = seeded(tmp_path / "m.db")
    with memory:
        store, cache = memory.store, memory.store.record_cache
        cache.get_memories(store, ids[:2])  # two held, two read
        asked = [ids[3], "no such memory", *ids, ids[0]]
        assert cache.memory_dates(store, asked) == store.memory_dates(asked)
        assert [d.id for d in cache.memory_dates(store, asked)] == [ids[3], *ids, ids[0]]
        memory.update(ids[0], text="Ana Lopez moved to Porto")
        cache.get_memories(store, ids)
        dates = cache.memory_dates(store, ids)
        assert dates == store.memory_dates(ids)
        assert dates[0].text == "Ana Lopez moved to Porto"
        with pytest.raises(RuntimeError), store.transaction():
            memory.update(ids[1], text="Max sleeps in Rome")
            assert cache.memory_dates(store, ids)[1].text == "Max sleeps in Rome"
            raise RuntimeError("rolled back")
        assert cache.memory_dates(store, ids) == store.memory_dates(ids)
        assert cache.memory_dates(store, ids)[1].text == TEXTS[1]
