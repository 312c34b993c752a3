"""A search's entity reads from the entity cache (``store.sqlite.entity_cache``) equal the
store's SQL answers, cold and warm (the hubs' links read twice by one search), after this
process's writes, another process's writes (a link alone, adds, a delete, a merge), across
scopes, with a bounded cache, and with threads searching while another writes."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest
from helpers import CapitalisedWordsExtractor, run_python
from search_reads_cases import seed
from watchdog import run_threads

from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder
from linkmem.store.sqlite.entity_cache import EntityCache, EntityReads
from linkmem.types import Scope

SCOPES = [Scope(user_id="alice"), Scope(user_id="alice", agent_id="a1"), Scope(user_id="bob")]


def open_memory(path: Path, **retrieval: int) -> Memory:
    return Memory(
        path,
        embedder=FakeEmbedder(),
        extractor=CapitalisedWordsExtractor(),
        retrieval={"entity_pool_max_links": 6, **retrieval},
    )


def seeded(path: Path) -> Memory:
    memory = seed(open_memory(path))
    memory.add_batch(
        ["Max and Rome with Person1", "Ana Lopez in Lisbon"], user_id="alice", agent_id="a1"
    )
    return memory


def entities_of(memory: Memory, scope: Scope) -> list[str]:
    return sorted(e.id for e in memory.store.list_entities(scope, "text", 10_000))


def all_memories(memory: Memory) -> list[str]:
    return sorted(r[0] for r in memory.store.db.rows("SELECT id FROM memories"))


def assert_same_as_sql(
    memory: Memory, seed_: int = 0, rounds: int = 2, foreign: bool = True
) -> None:
    """Entity reads of several searches per scope (the first cold, then warm) against SQL:
    entities of the scope, and (``foreign``) of others and none."""
    store = memory.store
    rng = random.Random(seed_)
    memories = all_memories(memory)
    everyone = entities_of(memory, Scope()) + ["no such entity"]
    for scope in SCOPES:
        for _ in range(rounds):
            reads = EntityReads(store, store._entity_scope_views(scope), 6)
            ours = entities_of(memory, scope)
            picked = rng.sample(ours, min(len(ours), 12))
            picked += rng.sample(everyone, 4) if foreign else []
            assert reads.get_entities(picked) == store.get_entities(picked)
            assert reads.memories_of_entities(picked) == store.memories_of_entities(picked)
            candidates = rng.sample(memories, min(len(memories), 40)) + ["no such memory"]
            found = reads.links_among(picked, candidates)
            assert found == store.links_among(picked, candidates)
            assert list(found) == [e for e in dict.fromkeys(picked) if e in found]
            # The same hubs again, as after the vector: the lists joined by the first read.
            later = rng.sample(memories, min(len(memories), 40))
            assert reads.links_among(picked, later) == store.links_among(picked, later)


def alice_entities(memory: Memory) -> list[str]:
    """The ids of scope alice's entities (not alice/a1's), most linked first."""
    found = memory.entities(user_id="alice", limit=200)["results"]
    return [e["id"] for e in found if "agent_id" not in e]


def held(memory: Memory) -> int:
    return sum(len(e.links) + len(e.records) for e in memory.store.entity_cache._entries.values())


def test_cached_reads_equal_sql_through_writes(tmp_path: Path) -> None:
    with seeded(tmp_path / "m.db") as memory:
        assert_same_as_sql(memory, 1)
        assert held(memory) > 0
        memory.add("Max met Person2 in Berlin", user_id="alice")
        assert_same_as_sql(memory, 2)
        first = memory.get_all(user_id="alice", limit=5)["results"]
        memory.update(first[0]["id"], "Rome and Project Falcon with Person9")
        memory.delete(first[1]["id"])
        assert_same_as_sql(memory, 3)
        keep, drop = alice_entities(memory)[:2]
        memory.merge_entities(keep, drop, user_id="alice")
        memory.rename_entity(keep, "Maximilian", user_id="alice")
        assert_same_as_sql(memory, 4)


def test_warm_searches_read_no_entity_sql(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with seeded(tmp_path / "m.db") as memory:
        assert_same_as_sql(memory, 5, foreign=False)
        reads: list[int] = []
        store = memory.store
        original = type(store)._read_entities
        monkeypatch.setattr(
            type(store), "_read_entities", lambda s, *a: reads.append(1) or original(s, *a)
        )
        assert_same_as_sql(memory, 5, foreign=False)  # the same entities again: all held
        assert reads == []


WRITER = """
import sys
from helpers import CapitalisedWordsExtractor
from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder

memory = Memory(sys.argv[1], embedder=FakeEmbedder(), extractor=CapitalisedWordsExtractor())
store = memory.store
what = sys.argv[2]
if what == "link":  # a link alone: no memory or entity written
    store.link([(sys.argv[3], sys.argv[4])], own=sys.argv[5] == "own")
elif what == "add":
    memory.add("Person4 and Max went to Lisbon with Ana Lopez", user_id="alice")
elif what == "delete":
    memory.delete(sys.argv[3])
elif what == "merge":
    memory.merge_entities(sys.argv[3], sys.argv[4], user_id="alice")
memory.close()
"""


def other_process(path: Path, *args: str) -> None:
    run_python(WRITER, str(path), *args)


def test_another_process_writing_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with seeded(path) as memory:
        store = memory.store
        assert_same_as_sql(memory, 6)
        scope = Scope(user_id="alice")
        hub = next(e for e in memory.entities(user_id="alice")["results"] if "agent_id" not in e)
        linked = set(store.memories_of_entities([hub["id"]])[hub["id"]])
        unlinked = next(
            m
            for m in memory.get_all(user_id="alice", limit=200)["results"]
            if m["id"] not in linked
        )
        EntityReads(store, store._entity_scope_views(scope), 6).links_among(
            [hub["id"]], [unlinked["id"]]
        )
        for own in ("own", "inherited"):
            other_process(path, "link", unlinked["id"], hub["id"], own)
            reads = EntityReads(store, store._entity_scope_views(scope), 6)
            assert reads.links_among([hub["id"]], [unlinked["id"]]) == {hub["id"]: [unlinked["id"]]}
            assert unlinked["id"] in reads.memories_of_entities([hub["id"]])[hub["id"]]
            [record] = reads.get_entities([hub["id"]])
            assert record.link_count == hub["link_count"] + 1  # own, then inherited: no more
            assert_same_as_sql(memory, 7)
        other_process(path, "add")
        assert_same_as_sql(memory, 8)
        other_process(path, "delete", unlinked["id"])
        assert_same_as_sql(memory, 9)
        keep, drop = alice_entities(memory)[:2]
        other_process(path, "merge", keep, drop)
        assert_same_as_sql(memory, 10)


def test_a_rolled_back_write_leaves_nothing_cached(tmp_path: Path) -> None:
    """Reads inside an open write transaction see it and are not kept."""
    with seeded(tmp_path / "m.db") as memory:
        assert_same_as_sql(memory, 13)
        with pytest.raises(RuntimeError), memory.store.transaction():
            memory.add("Max and Person5 in Lisbon with Ana Lopez", user_id="alice")
            assert_same_as_sql(memory, 14)
            raise RuntimeError("rolled back")
        assert_same_as_sql(memory, 13)
        memory.add("Person5 went to Rome", user_id="alice")
        assert_same_as_sql(memory, 14)


@pytest.mark.parametrize("max_bytes", [0, 5000])
def test_a_bounded_cache_gives_the_same_answers(tmp_path: Path, max_bytes: int) -> None:
    with seeded(tmp_path / "m.db") as memory:
        memory.store.entity_cache = EntityCache(max_bytes)
        assert_same_as_sql(memory, 11, rounds=3)
        assert memory.store.entity_cache.nbytes <= max_bytes


def test_links_keep_the_entity_matrix_cached(tmp_path: Path) -> None:
    """A link bumps ent_version; the scope's entity matrix follows it without a reload."""
    with seeded(tmp_path / "m.db") as memory:
        store = memory.store
        memory.search("Max", user_id="alice")
        [(scope_id, _)] = store._matching_scopes(Scope(user_id="alice", agent_id=""), "ent_version")
        memory.add("Max walks the dog in Rome", user_id="alice")  # links only: known names
        [(_, version)] = store._matching_scopes(Scope(user_id="alice", agent_id=""), "ent_version")
        assert store.entity_vectors.holds(scope_id, version)


def test_searches_in_threads_while_another_writes(tmp_path: Path) -> None:
    with seeded(tmp_path / "m.db") as memory:
        queries = ["How is Max doing?", "Ana Lopez in Rome", "Person3 trip", "Lisbon coffee"]
        stop = time.monotonic() + 2.0
        searched = [0]

        def write() -> None:
            i = 0
            while time.monotonic() < stop:
                added = memory.add(f"Max met Person{i % 30} in Rome, visit {i}", user_id="alice")
                if i % 2:
                    memory.delete(added["results"][0]["id"])
                i += 1

        def search(offset: int) -> None:
            while time.monotonic() < stop:
                for query in queries[offset:] + queries[:offset]:
                    assert memory.search(query, user_id="alice")["results"]
                    searched[0] += 1

        run_threads([write, *(lambda o=o: search(o) for o in range(3))], timeout=60.0)
        assert searched[0] > 0
        assert_same_as_sql(memory, 12)
