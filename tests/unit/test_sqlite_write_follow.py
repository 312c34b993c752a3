"""A process's own adds carry its SQLite entity cache (records, hub lists, hop index) to the
versions they leave, without the records of the entities they wrote, whose lists gain the
memories they linked them to (``linkmem.store.sqlite.write_follow``); any other write in the
transaction carries nothing. Answers are a fresh ``Memory``'s."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import CapitalisedWordsExtractor
from search_reads_cases import OTHER_WRITES, QUERIES, other_write, seed

from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder
from linkmem.store.sqlite.entity_cache import read_hop_index
from linkmem.types import Scope

RETRIEVAL = {"entity_pool_max_links": 6}


def opened(path: Path) -> Memory:
    return Memory(
        path, embedder=FakeEmbedder(), extractor=CapitalisedWordsExtractor(), retrieval=RETRIEVAL
    )


@pytest.fixture
def memory(tmp_path: Path) -> Any:
    seeded = seed(opened(tmp_path / "m.db"))
    yield seeded
    seeded.close()


def scores(memory: Memory) -> list[list[tuple[str, float]]]:
    return [
        [(h["id"], h["score"]) for h in memory.search(q, user_id="alice", top_k=8)["results"]]
        for q in QUERIES
    ]


def warmed(memory: Memory) -> list[list[tuple[str, float]]]:
    for _ in range(3):
        found = scores(memory)
    return found


def alice(memory: Memory) -> tuple[int, tuple[int, int]]:
    store: Any = memory.store
    (scope_id, ent, mem), *_ = store.db.rows(
        f"SELECT id, ent_version, mem_version FROM {store.c}_scopes WHERE user_id = 'alice'"
    )
    return scope_id, (ent, mem)


def held_at(memory: Memory, scope_id: int) -> tuple[int, int] | None:
    entry = memory.store.entity_cache._entries.get(scope_id)  # type: ignore[attr-defined]
    return None if entry is None else entry.versions


def carried_lists(
    memory: Memory, scope_id: int, versions: tuple[int, int], entity_ids: set[str]
) -> dict[str, set[str]]:
    """The memories of each of ``entity_ids`` whose list the entity cache holds."""
    store: Any = memory.store
    (view,) = [v for v in store._entity_scope_views(Scope("alice")) if v.scope_id == scope_id]
    held = store.entity_cache.lookup(scope_id, versions, entity_ids, True, view.matrix)
    return {e: {view.matrix.ids[r] for r in rows.tolist()} for e, rows in held.items()}


def same_as_fresh(memory: Memory, path: Path) -> None:
    fresh = opened(path)
    try:
        for mine, theirs in zip(scores(memory), scores(fresh), strict=True):
            assert [h[0] for h in mine] == [h[0] for h in theirs]
            assert all(abs(a[1] - b[1]) <= 2e-6 for a, b in zip(mine, theirs, strict=True))
    finally:
        fresh.close()


def test_an_own_add_carries_the_entity_cache_but_what_it_wrote(
    memory: Memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    warmed(memory)
    store: Any = memory.store
    scope_id, before = alice(memory)
    assert held_at(memory, scope_id) == before
    max_links = store.entity_cache.hop_max_links(scope_id, before)
    assert max_links is not None
    listed = set(store.entity_cache._entries[scope_id].links)
    added = memory.add("Max met Rare1 and Zelda Quill in the park", user_id="alice")
    _, after = alice(memory)
    assert after != before and held_at(memory, scope_id) == after
    linked = {
        r[0]
        for r in store.db.rows(
            f"SELECT e.id FROM {store.c}_links l JOIN {store.c}_entities e ON e.rowid = l.entity "
            f"JOIN {store.c} m ON m.rowid = l.memory WHERE m.id = ?",
            [added["results"][0]["id"]],
        )
    }
    assert len(linked) == 3
    assert not store.entity_cache.lookup(scope_id, after, linked, False)
    # The lists held of them gained the new memory: the links the store gives.
    carried = carried_lists(memory, scope_id, after, linked)
    assert carried and set(carried) == listed & linked
    assert carried == {e: set(m) for e, m in store.memories_of_entities(list(carried)).items()}
    fresh, versions, _ = read_hop_index(store, scope_id, max_links)
    assert versions == after
    carried = store.entity_cache.hop_index(scope_id, after, max_links)
    assert carried is not None
    assert {e: set(m) for e, m in carried.members.items()} == {
        e: set(m) for e, m in fresh.members.items()
    }
    # The hubs' links come from the carried lists: no SQL ``links_among`` after the add.
    calls: list[Any] = []
    links_among = store.links_among
    monkeypatch.setattr(store, "links_among", lambda *a: calls.append(a) or links_among(*a))
    scores(memory)
    assert calls == []
    same_as_fresh(memory, tmp_path / "m.db")


@pytest.mark.parametrize("write", OTHER_WRITES)
def test_other_writes_carry_nothing(memory: Memory, tmp_path: Path, write: str) -> None:
    warmed(memory)
    scope_id, before = alice(memory)
    other_write(memory, write)
    _, after = alice(memory)
    assert after != before and held_at(memory, scope_id) != after
    same_as_fresh(memory, tmp_path / "m.db")
