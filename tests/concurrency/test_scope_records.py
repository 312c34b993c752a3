"""A searched scope's records read whole into the record cache (``store.sqlite.scope_records``)
give the store's records: once the scope is held, after this process's and another process's
updates, metadata changes and deletes (another process's adds keep it held), while threads
search and another Memory on the same file writes, past the byte budget, and for memories
added after the scope was held."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from helpers import CapitalisedWordsExtractor, run_python
from watchdog import run_threads

from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder
from linkmem.store.sqlite import scope_records
from linkmem.store.sqlite.record_cache import RecordCache
from linkmem.types import Scope

SCOPE = Scope(user_id="alice")
NAMES = ["Ana", "Max", "Rita", "Tom", "Lisbon", "Rome", "Oslo", "Chess"]
#: More than two pages, so a scope is held only after several searches.
N = 2 * scope_records.PAGE + 40


def open_memory(path: Path) -> Memory:
    return Memory(path, embedder=FakeEmbedder(), extractor=CapitalisedWordsExtractor())


def texts(n: int, offset: int = 0) -> list[str]:
    return [
        f"{NAMES[i % 8]} met {NAMES[(i * 3 + 1) % 8]} about note {i + offset} in spring"
        for i in range(n)
    ]


def seeded(path: Path, n: int = N) -> tuple[Memory, list[str]]:
    memory = open_memory(path)
    added = memory.add_batch(texts(n), user_id="alice", metadata=[{"n": 0}] * n)["results"]
    return memory, [r["id"] for r in added]


def search(memory: Memory, query: str = "Ana met Max about note") -> dict[str, dict]:
    found = memory.search(query, user_id="alice", top_k=10)["results"]
    return {hit["id"]: hit for hit in found}


def hold_scope(memory: Memory, n: int, timeout: float = 30.0) -> None:
    """Search until ``n`` records of the scope are held (each search reads one more page)."""
    cache = memory.store.record_cache
    deadline = time.monotonic() + timeout
    i = 0
    while cache.held(SCOPE) < n:
        assert time.monotonic() < deadline, f"held {cache.held(SCOPE)} of {n}"
        search(memory, f"{NAMES[i % 8]} met {NAMES[(i + 3) % 8]}")
        i += 1
        time.sleep(0.01)


def store_records(memory: Memory, ids: list[str]) -> dict[str, dict]:
    """The records as the store reads them (no cache)."""
    return {r.id: r.to_dict() for r in memory.store.get_memories(ids)}


def assert_store_records(memory: Memory, found: dict[str, dict]) -> None:
    expected = store_records(memory, list(found))
    for memory_id, hit in found.items():
        record = {k: hit[k] for k in expected[memory_id]}
        assert record == expected[memory_id]


def test_a_scope_searched_again_is_held_whole_and_answers_as_the_store(tmp_path: Path) -> None:
    memory, ids = seeded(tmp_path / "m.db")
    with memory:
        assert memory.store.record_cache.held(SCOPE) == 0
        first = search(memory)
        assert memory.store.record_cache.held(SCOPE) == 0  # one search reads nothing more
        hold_scope(memory, N)
        assert memory.store.record_cache.held_bytes > 0
        assert search(memory) == first
        for i in range(20):
            assert_store_records(memory, search(memory, f"{NAMES[i % 8]} note {i}"))


def test_this_process_writes_are_seen_once_held(tmp_path: Path) -> None:
    memory, ids = seeded(tmp_path / "m.db")
    with memory:
        hold_scope(memory, N)
        hit = next(iter(search(memory)))
        memory.update(hit, metadata={"n": 5})
        assert search(memory)[hit]["metadata"] == {"n": 5}
        hold_scope(memory, N)
        memory.update(hit, text="Ana met Max about note again in spring")
        assert search(memory)[hit]["memory"] == "Ana met Max about note again in spring"
        hold_scope(memory, N)
        memory.delete(hit)
        assert hit not in search(memory)
        assert_store_records(memory, search(memory))


def test_memories_added_after_the_scope_was_held_are_found_and_held(tmp_path: Path) -> None:
    memory, ids = seeded(tmp_path / "m.db")
    with memory:
        hold_scope(memory, N)
        new_texts = ["Zed met Ana about the harbour in Oslo"] * 3
        added = memory.add_batch(new_texts, user_id="alice", metadata=[{"new": 1}] * 3)
        added = added["results"]
        new_ids = {r["id"] for r in added}
        found = search(memory, "Zed harbour Oslo")
        assert new_ids <= set(found)
        assert_store_records(memory, found)
        hold_scope(memory, N + 3)  # read on from the last page


WRITER = """
import sys
from helpers import CapitalisedWordsExtractor
from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder

memory = Memory(sys.argv[1], embedder=FakeEmbedder(), extractor=CapitalisedWordsExtractor())
kind, memory_id = sys.argv[2], sys.argv[3]
if kind == "metadata":
    memory.update(memory_id, metadata={"n": int(sys.argv[4])})
elif kind == "text":
    memory.update(memory_id, text=sys.argv[4])
elif kind == "add":
    memory.add(sys.argv[4], user_id="alice", metadata={"new": 1})
else:
    memory.delete(memory_id)
memory.close()
"""


def other_process(path: Path, *args: str) -> None:
    run_python(WRITER, str(path), *args)


def test_another_process_writes_are_seen_by_the_next_search(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    memory, ids = seeded(path)
    with memory:
        hold_scope(memory, N)
        first, second, third = list(search(memory))[:3]
        other_process(path, "metadata", first, "7")
        assert search(memory)[first]["metadata"] == {"n": 7}
        hold_scope(memory, N)
        other_process(path, "text", second, "Ana met Max about note elsewhere")
        assert search(memory)[second]["memory"] == "Ana met Max about note elsewhere"
        hold_scope(memory, N)
        other_process(path, "delete", third)
        found = search(memory)
        assert third not in found
        assert_store_records(memory, found)


def test_another_process_adds_keep_the_scope_held(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    memory, ids = seeded(path)
    with memory:
        hold_scope(memory, N)
        cache = memory.store.record_cache
        for i in range(3):  # adds insert new records: the records held stay
            other_process(path, "add", "-", f"Zed met Ana about the harbour {i}")
            found = search(memory, "Zed harbour")
            assert cache.held(SCOPE) >= N
            assert f"Zed met Ana about the harbour {i}" in {h["memory"] for h in found.values()}
            assert_store_records(memory, found)
        first = next(iter(search(memory)))
        other_process(path, "metadata", first, "9")  # a rewrite: the scope is read again
        assert search(memory)[first]["metadata"] == {"n": 9}
        assert cache.held(SCOPE) < N


def test_threads_search_while_another_memory_writes(tmp_path: Path) -> None:
    """Searching threads never see a metadata value older than one committed (by another
    Memory on the same file, i.e. another connection) before their search started."""
    path = tmp_path / "m.db"
    memory, ids = seeded(path)
    writer = open_memory(path)
    committed = {memory_id: 0 for memory_id in ids}
    lock = threading.Lock()
    stop = threading.Event()
    with memory, writer:
        hold_scope(memory, N // 2)

        def write() -> None:
            for n in range(1, 40):
                for memory_id in ids[n % 7 :: 37]:
                    writer.update(memory_id, metadata={"n": n})
                    with lock:
                        committed[memory_id] = n
                if n % 13 == 0:
                    gone = ids[n]
                    writer.delete(gone)
                    with lock:
                        committed[gone] = -1
            stop.set()

        def read(seed: int) -> None:
            i = seed
            while not stop.is_set():
                with lock:
                    before = dict(committed)
                query = f"{NAMES[i % 8]} met {NAMES[(i * 5) % 8]} about note"
                for memory_id, hit in search(memory, query).items():
                    assert before[memory_id] != -1, "a deleted memory was found"
                    assert hit["metadata"]["n"] >= before[memory_id]
                i += 1

        run_threads([write, *(lambda s=s: read(s) for s in range(3))], timeout=60)
        for i in range(30):
            found = search(memory, f"{NAMES[i % 8]} met note {i}")
            assert_store_records(memory, found)
            for memory_id, hit in found.items():
                assert hit["metadata"]["n"] == committed[memory_id]


def test_a_scope_past_the_budget_is_not_held_and_answers_the_same(tmp_path: Path) -> None:
    memory, ids = seeded(tmp_path / "m.db")
    with memory:
        expected = [search(memory, f"{NAMES[i % 8]} note {i}") for i in range(12)]
        memory.store.record_cache = RecordCache(held_bytes=50 * scope_records.RECORD_BYTES)
        for _ in range(2):
            for i, found in enumerate(expected):
                assert search(memory, f"{NAMES[i % 8]} note {i}") == found
            time.sleep(0.05)
        assert memory.store.record_cache.held(SCOPE) == 0
        assert memory.store.record_cache.held_bytes <= 50 * scope_records.RECORD_BYTES


def test_searches_in_a_transaction_read_no_pages(tmp_path: Path) -> None:
    memory, ids = seeded(tmp_path / "m.db")
    with memory:
        with memory.store.transaction():
            for _ in range(4):
                search(memory)
        time.sleep(0.05)
        assert memory.store.record_cache.held(SCOPE) == 0
