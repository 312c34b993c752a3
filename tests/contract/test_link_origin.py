"""Contract: links are the memory's own or inherited (back references, ``entities.inherit``).

An inherited link boosts its memory like an own one, but counts in no ``link_count`` and leads
no second hop; it round-trips through export / import; a store from before links had an
origin (SQLite m005, PostgreSQL m007) opens with every link own.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from helpers import exported_rows, older_export

from linkmem.config import RetrievalConfig
from linkmem.entities.hop import hop_targets
from linkmem.store.postgres.schema import m003_link_counts
from linkmem.types import Scope

pytestmark = pytest.mark.embedded

BACK = {"entity_inherit_window": 2}
#: "Leo" and "Lisbon" are named by the first; the second refers back to them.
TRIP = ["We took Leo to Lisbon in spring", "then he slept through the whole boat tour"]


def ids_of(result: dict) -> list[str]:
    return [r["id"] for r in result["results"]]


def entity_ids(memory, scope: str = "u") -> dict[str, str]:
    return {e.text: e.id for e in memory.store.list_entities(Scope(scope), "text", 100)}


def counts(memory, scope: str = "u") -> dict[str, int]:
    return {e.text: e.link_count for e in memory.store.list_entities(Scope(scope), "text", 100)}


def own_links(memory, entity_id: str) -> list[str]:
    return memory.store.memories_of_entities([entity_id], own_only=True).get(entity_id, [])


def all_links(memory, entity_id: str) -> list[str]:
    return memory.store.memories_of_entities([entity_id]).get(entity_id, [])


def test_an_inherited_link_does_not_raise_the_link_count(make_memory):
    memory = make_memory(retrieval=BACK)
    named, refers = ids_of(memory.add_batch(TRIP, user_id="u"))
    leo = entity_ids(memory)["Leo"]
    assert counts(memory) == {"Leo": 1, "Lisbon": 1}
    assert all_links(memory, leo) == [named, refers]
    assert own_links(memory, leo) == [named]
    assert memory.entities(user_id="u")["results"][0]["link_count"] == 1
    assert memory.check()["ok"]


def test_inspection_says_which_memories_refer_back(make_memory):
    memory = make_memory(retrieval=BACK)
    named, refers = ids_of(memory.add_batch(TRIP, user_id="u"))
    linked = memory.entity_memories("Leo", user_id="u")["results"]
    assert {r["id"]: r["link"] for r in linked} == {named: "own", refers: "inherited"}
    of_refers = memory.memory_entities(refers, user_id="u")["results"]
    assert {e["entity"]: e["link"] for e in of_refers} == {
        "Leo": "inherited",
        "Lisbon": "inherited",
    }
    of_named = memory.memory_entities(named, user_id="u")["results"]
    assert {e["link"] for e in of_named} == {"own"}


def test_without_back_references_nothing_is_inherited(make_memory):
    memory = make_memory(retrieval={"entity_inherit_window": 0})
    named, _ = ids_of(memory.add_batch(TRIP, user_id="u"))
    assert all_links(memory, entity_ids(memory)["Leo"]) == [named]


def test_the_hop_follows_own_links_only(make_memory):
    memory = make_memory(retrieval=BACK)
    named, refers = ids_of(memory.add_batch(TRIP, user_id="u"))
    (again,) = ids_of(memory.add_batch(["Leo loves boats"], user_id="u"))
    config = RetrievalConfig(hop_sources=1)
    store = memory.store
    # From a memory that names Leo: the other memory naming him, not the one referring back.
    assert hop_targets([named], (), store, config) == {again: "Leo"}
    # A memory that only refers back to Leo leads nowhere through him.
    assert hop_targets([refers], (), store, config) == {}


def test_an_inherited_link_boosts_its_memory(make_memory):
    for window, boosted in ((0, False), (2, True)):
        memory = make_memory(retrieval={"entity_inherit_window": window})
        user = f"w{window}"
        _, refers, _ = ids_of(memory.add_batch([*TRIP, "Mia called about the rent"], user_id=user))
        hits = memory.search("Leo", user_id=user, top_k=10, explain=True)["results"]
        parts = {h["id"]: h["score_details"] for h in hits}
        assert (parts[refers]["entity_boost"] > 0) is boosted
        assert (parts[refers]["entity"] == "Leo") is boosted


def test_an_own_link_over_an_inherited_one_turns_it_own(make_memory):
    memory = make_memory(retrieval=BACK)
    named, refers = ids_of(memory.add_batch(TRIP, user_id="u"))
    leo = entity_ids(memory)["Leo"]
    memory.store.link([(refers, leo)], own=False)  # inherited again: no change
    assert counts(memory)["Leo"] == 1
    memory.store.link([(refers, leo)])
    assert counts(memory)["Leo"] == 2 and own_links(memory, leo) == [named, refers]
    memory.store.link([(refers, leo)], own=False)  # never turns an own link inherited
    assert counts(memory)["Leo"] == 2
    assert memory.check()["ok"]


def test_merging_keeps_the_own_link(make_memory):
    memory = make_memory(retrieval=BACK)
    named, refers = ids_of(memory.add_batch(TRIP, user_id="u"))
    (lisbon_leo,) = ids_of(memory.add_batch(["Leon met Lisbon friends"], user_id="u"))
    ids = entity_ids(memory)
    memory.store.link([(refers, ids["Leon"])])  # refers: Leo inherited, Leon own
    memory.merge_entities("Leo", "Leon", user_id="u")
    leo = entity_ids(memory)["Leo"]
    assert own_links(memory, leo) == [named, refers, lisbon_leo]
    assert counts(memory)["Leo"] == 3
    assert memory.check()["ok"]


def test_an_entity_no_memory_names_any_more_is_dropped(make_memory):
    memory = make_memory(retrieval=BACK)
    named, refers = ids_of(memory.add_batch(TRIP, user_id="u"))
    memory.delete(named)
    assert entity_ids(memory) == {}
    assert memory.memory_entities(refers)["results"] == []
    assert memory.check()["ok"]


def test_an_update_relinks_from_the_new_text_alone(make_memory):
    memory = make_memory(retrieval=BACK)
    named, refers = ids_of(memory.add_batch(TRIP, user_id="u"))
    memory.update(refers, "then he slept through the whole boat tour, twice")
    leo = entity_ids(memory)["Leo"]
    assert all_links(memory, leo) == [named]
    assert memory.check()["ok"]


def test_export_and_import_keep_the_origin(make_memory, tmp_path: Path):
    source = make_memory(retrieval=BACK)
    named, refers = ids_of(source.add_batch(TRIP, user_id="u"))
    rows = exported_rows(source, tmp_path / "out.jsonl")
    links = [r for r in rows if r["type"] == "link"]
    assert sorted(r.get("inherited", False) for r in links) == [False, False, True, True]
    target = make_memory(collection="r_" + uuid.uuid4().hex[:12])
    target.restore(tmp_path / "out.jsonl")
    leo = entity_ids(target)["Leo"]
    assert counts(target) == {"Leo": 1, "Lisbon": 1}
    assert own_links(target, leo) == [named] and all_links(target, leo) == [named, refers]
    assert target.check()["ok"]


def test_an_older_export_imports_every_link_as_own(make_memory, tmp_path: Path):
    source = make_memory(retrieval=BACK)
    named, refers = ids_of(source.add_batch(TRIP, user_id="u"))
    older = older_export(source, tmp_path, 2, "inherited")
    target = make_memory(collection="r_" + uuid.uuid4().hex[:12])
    target.restore(older)
    assert counts(target) == {"Leo": 2, "Lisbon": 2}
    assert own_links(target, entity_ids(target)["Leo"]) == [named, refers]


def test_a_store_from_before_link_origins_opens_with_every_link_own(make_memory):
    old = make_memory(retrieval={"entity_inherit_window": 0})
    ids = ids_of(old.add_batch([*TRIP, "Leo loves boats"], user_id="u"))
    before = old.search("Leo boats", user_id="u", top_k=3)["results"]
    downgrade(old)
    old.close()
    new = make_memory(retrieval=BACK)
    assert counts(new) == {"Leo": 2, "Lisbon": 1}
    assert own_links(new, entity_ids(new)["Leo"]) == [ids[0], ids[2]]
    assert new.search("Leo boats", user_id="u", top_k=3)["results"] == before
    assert new.check()["ok"]
    _, refers = ids_of(new.add_batch(TRIP, user_id="u"))
    leo = entity_ids(new)["Leo"]
    assert counts(new)["Leo"] == 3 and refers in all_links(new, leo)
    assert new.check()["ok"]


def downgrade(memory) -> None:
    """Take the store back to its schema before link origins (as an older linkmem left it)."""
    store = memory.store
    if hasattr(store, "c"):
        c, name = store.c, "m005_link_origin"
        statements = [f"ALTER TABLE {c}_links DROP COLUMN own"]
        run = store.db.run
    else:
        t, name = store.t, "m007_link_origin"
        c, turn = t.c, t.index("_link_counts_turn")
        # m003's trigger functions, which counted every link
        old_counts = [
            sql.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION")
            for sql in m003_link_counts(t, store.dim)
            if sql.startswith("CREATE FUNCTION")
        ]
        statements = [
            f"DROP TRIGGER {turn} ON {t.links}",
            f"DROP FUNCTION {turn}()",
            *old_counts,
            f"ALTER TABLE {t.links} DROP COLUMN own",
        ]
        run = store.db.run
    for statement in statements:
        run(statement)
    run(f"DELETE FROM linkmem_migrations WHERE name = '{name}' AND collection = '{c}'")


#: The first names Sprout with a noun; the second calls him by it (``entities.aliases``).
DOG = ["We've got a dog! A spaniel cross called Sprout.", "The dog can open the cupboard now."]


@pytest.mark.parametrize("aliases", [True, False])
def test_an_alias_links_as_inherited_and_only_when_on(make_memory, aliases: bool):
    memory = make_memory(retrieval={"entity_inherit_window": 0, "entity_aliases": aliases})
    named, called = ids_of(memory.add_batch(DOG, user_id="u"))
    linked = memory.entity_memories("Sprout", user_id="u")["results"]
    expected = {named: "own", called: "inherited"} if aliases else {named: "own"}
    assert {r["id"]: r["link"] for r in linked} == expected
    assert counts(memory)["Sprout"] == 1
    assert memory.check()["ok"]
