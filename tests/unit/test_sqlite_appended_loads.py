"""After another connection's (or process's) write, a cached SQLite scope reads only the rows
added since when nothing was deleted or changed (``schema.m006_rewrite_counts``), and the
matrix it grows is the one a whole load gives; any other write reloads the whole scope."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers import CapitalisedWordsExtractor, recorded_loads, run_python

from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder
from linkmem.store.vectors import LoadedScope, MatrixCache, ScopeMatrix

TEXTS = [f"note {i} about Ana and the garden" for i in range(12)]


def opened(path: Any) -> Memory:
    return Memory(path, embedder=FakeEmbedder(), extractor=CapitalisedWordsExtractor())


@pytest.fixture
def reader_writer(tmp_path: Any) -> Any:
    reader, writer = opened(tmp_path / "shared.db"), opened(tmp_path / "shared.db")
    writer.add_batch(TEXTS, user_id="u")
    reader.search("Ana in the garden", user_id="u")  # caches its memory and entity vectors
    yield reader, writer
    reader.close()
    writer.close()


def cached(cache: MatrixCache) -> ScopeMatrix:
    (entry,) = cache._entries.values()
    return entry


def assert_as_loaded_whole(tmp_path: Any, cache_of: str, grown: ScopeMatrix) -> None:
    """``grown`` is bit for bit the matrix a new handle loads whole."""
    fresh = opened(tmp_path / "shared.db")
    try:
        fresh.search("Ana in the garden", user_id="u")
        whole = cached(getattr(fresh.store, cache_of))
        assert whole.version == grown.version and whole.rewrites == grown.rewrites
        assert whole.ids == grown.ids and whole.rowids.tolist() == grown.rowids.tolist()
        assert whole.matrix.tobytes() == grown.matrix.tobytes()
        assert whole.row_of == grown.row_of
    finally:
        fresh.close()


@pytest.mark.parametrize("cache_of", ["memory_vectors", "entity_vectors"])
def test_another_handles_adds_are_read_alone_and_appended(
    reader_writer: Any, tmp_path: Any, cache_of: str
) -> None:
    reader, writer = reader_writer
    cache = getattr(reader.store, cache_of)
    before = cached(cache)
    loads = recorded_loads(cache)
    added = writer.add_batch(["Bo planted tulips", "Cy and Ana met"], user_id="u")
    found = reader.search("tulips Bo", user_id="u", top_k=3)["results"]
    assert found[0]["id"] == added["results"][0]["id"]
    assert [load.after for load in loads] == [int(before.rowids[-1])]
    assert len(loads[0].ids) == 2  # the new memories, or the new entities Bo and Cy
    assert_as_loaded_whole(tmp_path, cache_of, cached(cache))


def test_a_delete_or_a_changed_vector_reloads_the_whole_scope(
    reader_writer: Any, tmp_path: Any
) -> None:
    reader, writer = reader_writer
    cache = reader.store.memory_vectors
    loads = recorded_loads(cache)
    ids = [m["id"] for m in writer.get_all(user_id="u")["results"]]
    writer.delete(ids[0])
    assert ids[0] not in [h["id"] for h in reader.search("note", user_id="u", top_k=20)["results"]]
    writer.update(ids[1], "a new text about the moon")
    assert reader.search("moon", user_id="u", top_k=1)["results"][0]["id"] == ids[1]
    assert [load.after for load in loads] == [None, None]
    writer.add("one more note", user_id="u")
    reader.search("note", user_id="u")
    assert loads[-1].after is not None  # appends after the rewrites read alone again
    assert_as_loaded_whole(tmp_path, "memory_vectors", cached(cache))


def test_another_process_adds_are_read_alone(reader_writer: Any, tmp_path: Any) -> None:
    reader, _ = reader_writer
    cache = reader.store.memory_vectors
    loads = recorded_loads(cache)
    run_python(
        f"""
        import sys
        sys.path.insert(0, "tests")
        from helpers import CapitalisedWordsExtractor
        from linkmem import Memory
        from linkmem.embed.fake import FakeEmbedder
        with Memory({str(tmp_path / "shared.db")!r}, embedder=FakeEmbedder(),
                    extractor=CapitalisedWordsExtractor()) as m:
            m.add_batch(["Dee grows basil", "basil again"], user_id="u")
        """
    )
    assert reader.search("basil Dee", user_id="u", top_k=1)["results"][0]["memory"] == (
        "Dee grows basil"
    )
    assert [(load.after is not None, len(load.ids)) for load in loads] == [(True, 2)]
    assert_as_loaded_whole(tmp_path, "memory_vectors", cached(cache))


def test_a_cache_moved_on_meanwhile_loads_whole() -> None:
    """An appended read whose base the cache no longer holds is not grown from it."""
    rows = np.eye(4, dtype=np.float32)
    state = {"after": 1}

    def loader(scope_id: int, since: ScopeMatrix | None) -> LoadedScope:
        if since is not None and state["after"] is not None:
            cache.drop(scope_id)  # another thread's write dropped it meanwhile
            state["after"] = None
            return LoadedScope(2, [2], ["b"], [], vectors=rows[1:2], after=1)
        return LoadedScope(2, [1, 2], ["a", "b"], [], vectors=rows[:2])

    cache = MatrixCache(4, loader)
    cache._store(7, ScopeMatrix(1, np.array([1]), ["a"], rows[:1]))
    entry = cache.get(7, 2)
    assert entry.ids == ["a", "b"] and entry.matrix.tobytes() == rows[:2].tobytes()


def held_terms(memory: Memory) -> Any:
    (entry,) = memory.store.keyword_cache._entries.values()
    return entry


def bm25_hits(memory: Memory) -> list[tuple[str, float]]:
    found = memory.search("garden note", user_id="u", top_k=20, explain=True)["results"]
    return [(h["id"], h["score_details"]["bm25_raw"]) for h in found]


def as_a_new_handle_finds(tmp_path: Any) -> list[tuple[str, float]]:
    fresh = opened(tmp_path / "shared.db")
    try:
        return bm25_hits(fresh)
    finally:
        fresh.close()


def test_another_handles_adds_catch_the_postings_up(reader_writer: Any, tmp_path: Any) -> None:
    reader, writer = reader_writer
    reader.search("garden note", user_id="u")
    base = held_terms(reader)
    reads: list[Any] = []
    original = reader.store._read_postings

    def recorded(scope_id: int, terms: Any, after: Any = None) -> Any:
        reads.append(terms)
        return original(scope_id, terms, after)

    reader.store._read_postings = recorded
    writer.add_batch(["another garden note", "the garden again"], user_id="u")
    found = bm25_hits(reader)
    assert reads == [None]  # the new memories' postings alone
    caught = held_terms(reader)
    assert caught is not base and caught.n_rows == base.n_rows + 2
    assert found == as_a_new_handle_finds(tmp_path)


def test_a_rewritten_posting_reads_the_terms_again(reader_writer: Any, tmp_path: Any) -> None:
    reader, writer = reader_writer
    reader.search("garden note", user_id="u")
    before = held_terms(reader)
    store: Any = writer.store
    with store.db.transaction():  # a re-index, as a repair may do
        store.db.run(f"UPDATE {store.c}_postings SET tf = tf + 4 WHERE term = 'garden'")
    writer.add("one more garden note", user_id="u")
    found = bm25_hits(reader)
    assert held_terms(reader).rewrites != before.rewrites  # read again, not caught up
    assert found == as_a_new_handle_finds(tmp_path)


CATCH_UP = (
    "SELECT rowid, id, embedding FROM {t} INDEXED BY {t}_scope_rowids "
    "WHERE scope_id = 1 AND rowid > 5"
)


def test_a_store_from_before_the_rowid_indexes_gets_them_and_seeks(tmp_path: Any) -> None:
    path = tmp_path / "old.db"
    with opened(path) as old:
        old.add_batch(TEXTS, user_id="u")
        c, run = old.store.c, old.store.db.run
        for index in (f"{c}_scope_rowids", f"{c}_entities_scope_rowids"):
            run(f"DROP INDEX {index}")
        run(
            "DELETE FROM linkmem_migrations WHERE name = 'm007_scope_rowid_indexes' "
            f"AND collection = '{c}'"
        )
    with opened(path) as new:
        c, rows = new.store.c, new.store.db.rows
        for table in (c, f"{c}_entities"):
            plan = " ".join(
                str(row[-1]) for row in rows(f"EXPLAIN QUERY PLAN {CATCH_UP.format(t=table)}")
            )
            assert f"INDEX {table}_scope_rowids (scope_id=? AND rowid>?)" in plan
        assert len(new.search("Ana in the garden", user_id="u", top_k=20)["results"]) == 12
        assert new.check()["ok"]
