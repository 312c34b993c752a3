"""The second hop skipped from the SQLite entity cache (``entity_cache.HopIndex``): searches give
the plain reads' results whether the index says no hop can reach anything or the hop reads the
store; a write moves the versions, so a memory that now shares a rare entity is reached by the
next search; an entity the query matched is not followed; an index read inside an open write
transaction is not kept."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from search_reads_cases import CASES, QUERIES, SMALL_POOL, plain_reads, results, seeded_sqlite

from linkmem import Memory
from linkmem.store.sqlite import entity_cache
from linkmem.store.sqlite.entity_cache import EntityReads, HopIndex
from linkmem.types import Scope

HOP_QUERIES = [*QUERIES, "Rare1 Max book", "Rare3 and Lisbon", "Rare4 dinner", "Rare9 walk"]


def counted(monkeypatch: pytest.MonkeyPatch) -> Counter[Any]:
    """What ``EntityReads.hop_may_reach`` answers, counted."""
    answers: Counter[Any] = Counter()
    original = EntityReads.hop_may_reach

    def spy(self: EntityReads, *args: Any) -> bool | None:
        answer = original(self, *args)
        answers[answer] += 1
        return answer

    monkeypatch.setattr(EntityReads, "hop_may_reach", spy)
    return answers


def test_searches_with_the_hop_index_give_the_plain_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = counted(monkeypatch)
    with seeded_sqlite(tmp_path / "m.db", **SMALL_POOL) as memory:
        for _ in range(2):  # the index is read from the second search at the same versions
            ours = [results(memory, q, **case) for q in HOP_QUERIES for case in CASES]
        with plain_reads():
            plain = [results(memory, q, **case) for q in HOP_QUERIES for case in CASES]
    assert ours == plain
    assert answers[False] and answers[True] and answers[None]
    assert any(p["hop_entity"] for found in ours for *_, p in found)


def test_a_write_is_seen_by_the_next_hop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    query = "zebra quokka"  # the memory naming Zanzibar is the best result: a hop source
    with seeded_sqlite(tmp_path / "m.db", **SMALL_POOL) as memory:
        memory.add("Zanzibar zebra quokka", user_id="alice")
        for _ in range(3):
            before = results(memory, query, top_k=200)
        memory.add("Zanzibar joined the book club", user_id="alice")
        answers = counted(monkeypatch)
        after = results(memory, query, top_k=200)
        assert answers == {True: 1}  # the index, carried across the own add (write_follow)
        with plain_reads():
            assert after == results(memory, query, top_k=200)
        # Another connection's add: the index follows it along the log of adds (add_log).
        other = Memory(memory.store.path, embedder=memory.embedder, extractor=memory.extractor)
        other.add("Zanzibar sails on Sunday", user_id="alice")
        answers.clear()
        followed = results(memory, query, top_k=200)
        assert answers == {True: 1}
        with plain_reads():
            assert followed == results(memory, query, top_k=200)
        # Another connection's other write: the first search at the new versions reads the store.
        kept = other.get_all(user_id="alice")["results"][-1]
        other.update(kept["id"], "Zanzibar sails on Monday", user_id="alice")
        other.close()
        answers.clear()
        again = results(memory, query, top_k=200)
        assert answers == {None: 1}
        assert results(memory, query, top_k=200) == again
        assert answers == {None: 1, True: 1}  # the second the index read at them
        with plain_reads():
            assert again == results(memory, query, top_k=200)
        named = results(memory, "Zanzibar zebra quokka", top_k=200)
    assert "Zanzibar" not in {p["hop_entity"] for *_, p in before}
    assert "Zanzibar" in {p["hop_entity"] for *_, p in after}
    # A query that names Zanzibar boosts its memories: the hop does not follow it.
    assert "Zanzibar" not in {p["hop_entity"] for *_, p in named}


def test_may_reach_follows_only_shared_entities_not_excluded() -> None:
    index = HopIndex.of_links(3, [("e1", "a"), ("e1", "b"), ("e2", "a"), ("e2", "c")])
    assert index.may_reach(["a"], set())
    assert index.may_reach(["a", "b"], set())  # e2 reaches c
    assert not index.may_reach(["a", "b"], {"e2"})
    assert not index.may_reach(["a", "c"], {"e1"})  # e2 links only the sources
    assert not index.may_reach(["d"], set())


def test_an_index_read_in_an_open_transaction_is_not_kept(tmp_path: Path) -> None:
    with seeded_sqlite(tmp_path / "m.db") as memory:
        store = memory.store
        store._entity_scope_views(Scope(user_id="alice"))
        views = store._entity_scope_views(Scope(user_id="alice"))  # the second search
        reads = EntityReads(store, views, 6)
        with store.db.transaction():
            assert reads.hop_may_reach(["nope"], set(), 3) is None  # not in the scope
            index, versions, committed = entity_cache._read_hop_index(store, views[0].scope_id, 3)
        assert not committed and versions == views[0].versions and index.members
        assert store.entity_cache.hop_index(views[0].scope_id, views[0].versions, 3) is None
        assert reads.hop_may_reach(["nope"], set(), 3) is None
        held = store.entity_cache.hop_index(views[0].scope_id, views[0].versions, 3)
        assert held == index
