"""Another ``Memory``'s (or process's) adds to the same SQLite file carry a reader's entity
cache through the log of adds (``linkmem.store.sqlite.add_log``), without the records of the
entities they wrote, whose lists gain the memories they linked; a write of any other kind
between breaks the chain and nothing is carried. Answers are a fresh ``Memory``'s."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import run_python
from search_reads_cases import OTHER_WRITES, other_write, seed
from test_sqlite_write_follow import (
    alice,
    carried_lists,
    held_at,
    opened,
    same_as_fresh,
    warmed,
)

from linkmem.store.sqlite.add_log import KEEP_VERSIONS, catch_up
from linkmem.store.sqlite.entity_cache import read_hop_index


@pytest.fixture
def two(tmp_path: Path) -> Any:
    reader = seed(opened(tmp_path / "m.db"))
    writer = opened(tmp_path / "m.db")
    yield reader, writer
    reader.close()
    writer.close()


def linked_to(store: Any, memory_ids: list[str]) -> set[str]:
    return {
        r[0]
        for r in store.db.rows(
            f"SELECT e.id FROM {store.c}_links l JOIN {store.c}_entities e ON e.rowid = l.entity "
            f"JOIN {store.c} m ON m.rowid = l.memory "
            "WHERE m.id IN (SELECT value FROM json_each(?))",
            [json.dumps(memory_ids)],
        )
    }


def assert_carried(store: Any, scope_id: int, after: tuple[int, int], kept: dict, written: set):
    """The entry is at ``after`` with the other records it held (the written entities' were
    dropped: ``kept`` without them), and its hop index is the one read now."""
    entry = store.entity_cache.held(scope_id)
    assert entry.versions == after
    untouched = set(kept) - written
    assert untouched and all(entry.records[i] is kept[i] for i in untouched)
    max_links = entry.hops.max_links
    fresh, versions, _ = read_hop_index(store, scope_id, max_links)
    assert versions == after
    assert {e: set(m) for e, m in entry.hops.members.items()} == {
        e: set(m) for e, m in fresh.members.items()
    }


def test_another_memorys_adds_carry_the_entity_cache_but_what_they_wrote(
    two: Any, tmp_path: Path
) -> None:
    reader, writer = two
    warmed(reader)
    store: Any = reader.store
    scope_id, before = alice(reader)
    kept = dict(store.entity_cache.held(scope_id).records)
    listed = set(store.entity_cache.held(scope_id).links)
    first = writer.add("Max Person2 met Rare1 and Zelda Quill in the park", user_id="alice")
    second = writer.add("Zelda Quill flew to Oslo", user_id="alice")
    _, after = alice(reader)
    assert held_at(reader, scope_id) == before
    written = linked_to(store, [first["results"][0]["id"], second["results"][0]["id"]])
    assert len(written) == 4
    catch_up(store, scope_id, after)
    assert not store.entity_cache.lookup(scope_id, after, written, False)
    # The lists held of them ("Max Person", a hub) gained the new memories: the store's links.
    carried = carried_lists(reader, scope_id, after, written)
    assert carried and set(carried) == listed & written
    assert carried == {e: set(m) for e, m in store.memories_of_entities(list(carried)).items()}
    assert_carried(store, scope_id, after, kept, written)
    same_as_fresh(reader, tmp_path / "m.db")


def test_another_processs_adds_are_followed_by_a_search(two: Any, tmp_path: Path) -> None:
    reader, _ = two
    warmed(reader)
    store: Any = reader.store
    scope_id, _ = alice(reader)
    kept = dict(store.entity_cache.held(scope_id).records)
    added = run_python(
        f"""
        import sys
        sys.path[:0] = ["tests", "tests/unit"]
        from test_sqlite_write_follow import opened
        with opened({str(tmp_path / "m.db")!r}) as m:
            for text in ("Zelda Quill flew to Oslo", "Max met Zelda Quill"):
                print(m.add(text, user_id="alice")["results"][0]["id"])
        """
    ).split()
    _, after = alice(reader)
    written = linked_to(store, added)
    reader.search("Oslo", user_id="alice")  # catches up as it opens the scope
    assert_carried(store, scope_id, after, kept, written)
    same_as_fresh(reader, tmp_path / "m.db")


@pytest.mark.parametrize("write", OTHER_WRITES)
def test_a_write_besides_adds_breaks_the_chain(two: Any, tmp_path: Path, write: str) -> None:
    reader, writer = two
    warmed(reader)
    scope_id, before = alice(reader)
    writer.add("Zelda Quill flew to Oslo", user_id="alice")
    other_write(writer, write)
    writer.add("Oslo is cold", user_id="alice")
    catch_up(reader.store, scope_id, alice(reader)[1])
    assert held_at(reader, scope_id) == before
    same_as_fresh(reader, tmp_path / "m.db")


def test_a_reader_behind_the_log_reads_again(two: Any, tmp_path: Path) -> None:
    reader, writer = two
    warmed(reader)
    scope_id, before = alice(reader)
    for i in range(KEEP_VERSIONS + 2):
        writer.add(f"note {i} about Oslo", user_id="alice")
    store: Any = reader.store
    log = f"{store.c}_add_log"
    kept = store.db.rows(f"SELECT count(*) FROM {log} WHERE scope_id = ?", [scope_id])[0][0]
    assert KEEP_VERSIONS <= kept <= KEEP_VERSIONS + 1
    catch_up(store, scope_id, alice(reader)[1])
    assert held_at(reader, scope_id) == before
    same_as_fresh(reader, tmp_path / "m.db")
    writer.reset()
    assert store.db.rows(f"SELECT count(*) FROM {log}")[0][0] == 0
