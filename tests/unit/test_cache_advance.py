"""Cache entries carried across this process's own adds (``postgres.write_follow``): only from
exactly the versions before, without what the add touched, the rest as it was; the lists of
the entities it linked gain the memories it linked them to."""

from __future__ import annotations

import numpy as np

from linkmem.store.caches.entity_records import EntityCache, HopIndex
from linkmem.store.caches.memory_rows import RowCache
from linkmem.store.vectors import ScopeMatrix
from linkmem.types import EntityRecord, Scope


def record(entity_id: str, links: int) -> EntityRecord:
    return EntityRecord(entity_id, entity_id, entity_id.lower(), "PROPER", Scope("u"), links)


def test_rows_are_carried_from_exactly_the_versions_before() -> None:
    rows = RowCache(max_bytes=10**6)
    rows.remember(1, (3, 4), {"m1": ("m1", "text"), "m2": ("m2", "more")})
    held = rows.nbytes
    rows.advance(1, (3, 5), (4, 6))  # not the versions held: nothing moves
    assert rows.lookup(1, (3, 4), ["m1"]) == {"m1": ("m1", "text")}
    rows.advance(1, (3, 4), (4, 5), dropped=["m2"])
    assert rows.lookup(1, (3, 4), ["m1"]) == {}
    assert rows.lookup(1, (4, 5), ["m1", "m2"]) == {"m1": ("m1", "text")}
    assert 0 < rows.nbytes < held
    rows.advance(2, (0, 0), (1, 1))  # no entry: nothing


def test_entity_entries_lose_what_the_add_touched_and_keep_their_searches() -> None:
    cache = EntityCache(max_bytes=10**6)
    lists = {"e1": np.array([0, 2]), "e2": np.array([1])}
    cache.remember(1, (3, 4), {"e1": record("e1", 2), "e2": record("e2", 1)}, lists)
    cache.opened(1, (3, 4))
    cache.advance(1, (3, 4), (5, 5), dropped={"e2", "e9"})
    assert cache.lookup(1, (5, 5), ["e1", "e2"], False) == {"e1": record("e1", 2)}
    assert list(cache.lookup(1, (5, 5), ["e1", "e2"], True)) == ["e1"]
    assert cache.opened(1, (5, 5)) == 1  # the search before the add still counts
    assert cache.lookup(1, (3, 4), ["e1"], False) == {}


def test_the_hop_index_takes_the_rows_read_after_the_add() -> None:
    cache = EntityCache(max_bytes=10**6)
    index = HopIndex.of_links(3, [("a", "m1"), ("a", "m2"), ("b", "m2"), ("b", "m3")])
    cache.remember_hops(1, (3, 4), index)
    assert cache.hop_max_links(1, (3, 4)) == 3
    # The add linked "b" to a fourth memory (past 3 links: it leaves) and "c" to two.
    cache.advance(1, (3, 4), (5, 5), {"b", "c"}, (3, [("c", "m3"), ("c", "m9")]))
    carried = cache.hop_index(1, (5, 5), 3)
    assert carried == HopIndex.of_links(3, [("a", "m1"), ("a", "m2"), ("c", "m3"), ("c", "m9")])
    assert cache.hop_max_links(1, (3, 4)) is None
    # Without the rows (or read for another bound) the index goes; the rest is carried.
    cache.advance(1, (5, 5), (6, 6), {"a"}, (4, []))
    assert cache.hop_index(1, (6, 6), 3) is None
    assert cache.hop_max_links(1, (6, 6)) is None
    cache.remember_hops(1, (6, 6), index)
    cache.advance(1, (6, 6), (7, 7), set(), None)  # nothing linked: the index stays
    assert cache.hop_index(1, (7, 7), 3) == index


def matrix(version: int, ids: list[str]) -> ScopeMatrix:
    rowids = np.arange(1, len(ids) + 1, dtype=np.int64)
    return ScopeMatrix(version, rowids, ids, np.zeros((len(ids), 2), dtype=np.float32))


def test_lists_of_linked_entities_gain_the_added_memories() -> None:
    cache = EntityCache(max_bytes=10**6)
    lists = {"hub": np.array([0, 2]), "few": np.array([1]), "gone": np.array([0])}
    cache.remember(1, (3, 4), {"hub": record("hub", 2)}, lists)
    held = cache.nbytes
    # The add wrote m3 and m4, linked "hub" and "few" to them (and "few" again to m1, a link
    # it had); "gone" was written without the links being named: its list goes.
    linked = {"hub": {"m3", "m4"}, "few": {"m4", "m1"}}
    cache.advance(1, (3, 4), (4, 5), {"hub", "few", "gone"}, None, linked)
    assert cache.lookup(1, (4, 5), ["hub"], False) == {}  # the record's count moved
    grown = matrix(5, ["m0", "m1", "m2", "m3", "m4"])
    found = cache.lookup(1, (4, 5), ["hub", "few", "gone"], True, grown)
    assert {k: v.tolist() for k, v in found.items()} == {"hub": [0, 2, 3, 4], "few": [1, 4]}
    assert cache.lookup(1, (4, 5), ["hub"], True)["hub"].tolist() == [0, 2, 3, 4]  # settled
    assert cache.nbytes < held + 200


def test_a_list_whose_added_memory_is_not_in_the_matrix_goes() -> None:
    cache = EntityCache(max_bytes=10**6)
    cache.remember(1, (3, 4), {}, {"hub": np.array([0]), "other": np.array([1])})
    cache.advance(1, (3, 4), (4, 5), {"hub", "other"}, None, {"hub": {"m9"}, "other": {"m2"}})
    assert cache.lookup(1, (4, 5), ["other"], True) == {}  # no matrix to place m2 in
    assert cache.lookup(1, (4, 5), ["hub"], True, matrix(5, ["m0", "m1", "m2"])) == {}
    empty = EntityCache(max_bytes=10**6)
    empty.remember(1, (4, 5), {}, {})
    assert cache.nbytes == empty.nbytes  # nothing left but the scope's entry


def test_a_list_read_whole_replaces_the_added_memories() -> None:
    cache = EntityCache(max_bytes=10**6)
    cache.remember(1, (3, 4), {}, {"hub": np.array([0])})
    cache.advance(1, (3, 4), (4, 5), {"hub"}, None, {"hub": {"m1"}})
    cache.remember(1, (4, 5), {}, {"hub": np.array([0, 1])})
    assert cache.lookup(1, (4, 5), ["hub"], True)["hub"].tolist() == [0, 1]
