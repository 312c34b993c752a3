"""The SQLite store's in-process vector matrices follow every write, from any connection."""

from __future__ import annotations

import pytest

from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder
from linkmem.types import Scope


@pytest.fixture
def two_handles(tmp_path):
    from helpers import CapitalisedWordsExtractor

    def open_one() -> Memory:
        return Memory(
            tmp_path / "shared.db", embedder=FakeEmbedder(), extractor=CapitalisedWordsExtractor()
        )

    first, second = open_one(), open_one()
    yield first, second
    first.close()
    second.close()


def count_loads(memory: Memory) -> list[int]:
    calls = []
    original = memory.store.memory_vectors._loader

    def loader(scope_id, since):
        calls.append(scope_id)
        return original(scope_id, since)

    memory.store.memory_vectors._loader = loader
    return calls


def test_own_writes_extend_the_cached_matrix_without_a_reload(two_handles):
    memory, _ = two_handles
    memory.add("the first note about gardening", user_id="u")
    memory.search("gardening", user_id="u")
    loads = count_loads(memory)
    memory.add_batch(["a second note on tomatoes", "a third note on Max"], user_id="u")
    found = [r["memory"] for r in memory.search("tomatoes Max", user_id="u", top_k=3)["results"]]
    assert "a second note on tomatoes" in found and "a third note on Max" in found
    assert loads == []  # extended in place after the commit
    memory.delete(memory.get_all(user_id="u")["results"][0]["id"])
    assert len(memory.search("note", user_id="u", top_k=5)["results"]) == 2
    assert len(loads) == 1  # a delete makes the next search reload the scope


def test_a_rolled_back_add_leaves_the_cache_alone(two_handles, monkeypatch):
    memory, _ = two_handles
    memory.add("kept note", user_id="u")
    memory.search("note", user_id="u")
    monkeypatch.setattr(memory.store, "append_history", lambda *a: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        memory.add("lost note", user_id="u")
    monkeypatch.undo()
    entry = memory.store.memory_vectors._entries
    assert [e.ids for e in entry.values()] == [[memory.get_all(user_id="u")["results"][0]["id"]]]


def test_writes_from_another_connection_are_seen(two_handles):
    writer, reader = two_handles
    writer.add("alpha note", user_id="u")
    assert len(reader.search("note", user_id="u")["results"]) == 1
    writer.add("beta note about Max", user_id="u")
    found = reader.search("beta Max", user_id="u", top_k=2)["results"]
    assert found[0]["memory"] == "beta note about Max"
    assert reader.store.count_memories(Scope(user_id="u")) == 2
    ids = {e["entity"] for e in reader.entities(user_id="u")["results"]}
    assert ids == {"Max"}


def test_matrix_cache_is_bounded_and_evicts_the_least_recently_used():
    import numpy as np

    from linkmem.store.vectors import LoadedScope, MatrixCache, encode

    loads = []

    def loader(scope_id, since):
        loads.append(scope_id)
        return LoadedScope(0, [1, 2], [f"{scope_id}a", f"{scope_id}b"], [encode(np.ones(4))] * 2)

    one_entry = 2 * 4 * 4 + 2 * 8 + 2 * 64  # matrix, row keys, ids
    cache = MatrixCache(4, loader, max_bytes=2 * one_entry)
    cache.get(1, 0)
    cache.get(2, 0)
    cache.get(1, 0)  # 1 is now the most recently used
    assert cache.nbytes == 2 * one_entry
    cache.get(3, 0)  # over the bound: scope 2 goes
    cache.get(1, 0)
    cache.get(2, 0)
    assert loads == [1, 2, 3, 2]


def test_appended_rows_grow_in_place_and_readers_keep_their_rows():
    import numpy as np

    from linkmem.store.vectors import ScopeMatrix

    rng = np.random.default_rng(0)
    first = rng.random((3, 4), dtype=np.float32)
    entry = ScopeMatrix(1, np.arange(3, dtype=np.int64), ["a", "b", "c"], first)
    seen, buffers = [], set()
    for step in range(40):
        row = rng.random((1, 4), dtype=np.float32)
        before = entry
        entry = entry.appended(step + 2, [100 + step], [f"m{step}"], row)
        seen.append(row[0])
        assert before.matrix.shape[0] == 3 + step  # an older reader still sees its own rows
        buffers.add(id(entry._spare[0]))
    assert np.array_equal(entry.matrix, np.vstack([first, *seen]))
    assert entry.rowids.tolist() == [0, 1, 2, *range(100, 140)]
    assert entry.ids[-1] == "m39" and entry.row_of["m39"] == 42
    assert len(buffers) <= 4  # capacity doubles: 16, 32, 64 (not one copy per row)


def test_appended_rows_carry_the_id_index_and_leave_the_older_one_alone():
    import numpy as np

    from linkmem.store.vectors import ScopeMatrix

    first = np.eye(4, dtype=np.float32)[:3]
    entry = ScopeMatrix(1, np.arange(3, dtype=np.int64), ["a", "b", "c"], first)
    assert entry.appended(2, [7], ["d"], first[:1])._rows is None  # not built: built on use
    built = dict(entry.row_of)
    grown = entry.appended(2, [7, 8], ["d", "e"], first[:2])
    assert grown._rows is not None  # carried over, not rebuilt by the next search
    assert grown.row_of == {"a": 0, "b": 1, "c": 2, "d": 3, "e": 4}
    assert entry.row_of == built  # a reader of the older matrix sees only its rows
    assert grown.appended(3, [9], ["f"], first[:1]).row_of["f"] == 5
