"""Cache entries carried across this process's own adds (``postgres.write_follow``): only from
exactly the versions before, without what the add touched, the rest as it was."""

from __future__ import annotations

import numpy as np

from linkmem.store.caches.entity_records import EntityCache, HopIndex
from linkmem.store.caches.memory_rows import RowCache
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
