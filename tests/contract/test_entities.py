"""Contract: the entity collection — upsert, links both ways, boosts, inspection, concurrency."""

from __future__ import annotations

import threading

import pytest
from helpers import add_notes_from_process

from linkmem import InvalidInput, NotFound


def test_same_entity_from_200_memories_is_one_row_with_200_links(memory):
    memory.add(
        [{"role": "user", "content": f"walked with Max on day {i}"} for i in range(200)],
        user_id="u",
    )
    (entity,) = memory.entities(user_id="u")["results"]
    assert entity["entity"] == "Max" and entity["link_count"] == 200
    assert len(memory.entity_memories("Max", user_id="u")["results"]) == 200
    memory.add("Max again", user_id="u")
    assert memory.entities(user_id="u")["results"][0]["link_count"] == 201


def test_exact_key_match_is_case_and_space_insensitive(memory):
    memory.add("we met New  York friends", user_id="u")
    memory.add("I love New York", user_id="u")
    (entity,) = memory.entities(user_id="u")["results"]
    assert entity["key"] == "new york" and entity["link_count"] == 2


def test_entities_are_per_scope(memory):
    memory.add("hello Max", user_id="a")
    memory.add("hello Max", user_id="b")
    a = memory.entities(user_id="a")["results"]
    b = memory.entities(user_id="b")["results"]
    assert a[0]["id"] != b[0]["id"]
    assert a[0]["link_count"] == b[0]["link_count"] == 1


def test_links_are_queryable_both_ways(memory):
    out = memory.add(
        [
            {"role": "user", "content": "Max met Oscar in Paris"},
            {"role": "user", "content": "Oscar lives in Paris"},
        ],
        user_id="u",
    )
    first, second = (r["id"] for r in out["results"])
    of_first = {e["entity"] for e in memory.memory_entities(first)["results"]}
    assert of_first == {"Max", "Oscar", "Paris"}
    linked = {r["id"] for r in memory.entity_memories("Paris", user_id="u")["results"]}
    assert linked == {first, second}


def test_related_entities_count_shared_memories(memory):
    memory.add_batch(
        ["Max met Oscar", "Max and Oscar in Paris", "Max alone", "Luna in Paris"], user_id="u"
    )
    related = memory.related_entities("Max", user_id="u")["results"]
    assert [(e["entity"], e["shared_memories"]) for e in related] == [("Oscar", 2), ("Paris", 1)]


def test_entity_list_orders(memory):
    memory.add_batch(["Zed and Max", "Max", "Max and Amy"], user_id="u")
    by_links = [e["entity"] for e in memory.entities(user_id="u")["results"]]
    by_text = [e["entity"] for e in memory.entities(user_id="u", order="text")["results"]]
    assert by_links[0] == "Max" and by_text == ["Amy", "Max", "Zed"]
    with pytest.raises(InvalidInput):
        memory.entities(user_id="u", order="size")


def test_merge_moves_links_without_duplicates(memory):
    memory.add_batch(["Bob and Robert", "Bob runs", "Robert swims"], user_id="u")
    merged = memory.merge_entities("Bob", "Robert", user_id="u")["results"][0]
    assert merged["entity"] == "Bob" and merged["link_count"] == 3
    assert [e["entity"] for e in memory.entities(user_id="u")["results"]] == ["Bob"]
    with pytest.raises(NotFound):
        memory.entity_memories("Robert", user_id="u")


def test_rename_and_rename_onto_existing_merges(memory):
    memory.add_batch(["Jon runs", "John swims", "Jon and John"], user_id="u")
    renamed = memory.rename_entity("Jon", "Jonathan", user_id="u")["results"][0]
    assert renamed["entity"] == "Jonathan" and renamed["key"] == "jonathan"
    assert (
        memory.search("Jonathan", user_id="u", explain=True)["results"][0]["score_details"][
            "entity"
        ]
        == "Jonathan"
    )
    merged = memory.rename_entity("John", "jonathan", user_id="u")["results"][0]
    assert merged["link_count"] == 3
    assert len(memory.entities(user_id="u")["results"]) == 1


def test_entity_calls_check_scope(memory):
    memory.add("Max", user_id="a")
    max_id = memory.entities(user_id="a")["results"][0]["id"]
    with pytest.raises(NotFound):
        memory.entity_memories(max_id, user_id="b")


def test_entity_linked_memories_join_the_pool(make_memory):
    memory = make_memory(retrieval={"pool_min": 1, "pool_factor": 1})
    memory.add_batch(
        [f"notes about the garden and the weather {i}" for i in range(20)]
        + ["Zanzibar trip booked"],
        user_id="u",
    )
    found = memory.search("garden weather Zanzibar", user_id="u", top_k=5, explain=True)["results"]
    assert "Zanzibar trip booked" in [r["memory"] for r in found]


def test_filters_also_apply_to_entity_candidates(memory):
    memory.add("Max at home", user_id="u", metadata={"place": "home"})
    memory.add("Max at work", user_id="u", metadata={"place": "work"})
    found = memory.search("Max", user_id="u", filters={"place": "work"})["results"]
    assert [r["memory"] for r in found] == ["Max at work"]


def test_concurrent_adds_never_lose_a_link_or_duplicate(memory):
    errors = []

    def worker(n: int) -> None:
        try:
            for i in range(10):
                memory.add(f"Max and Oscar round {n}-{i}", user_id="u")
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    entities = {e["entity"]: e["link_count"] for e in memory.entities(user_id="u")["results"]}
    assert entities == {"Max": 60, "Oscar": 60}
    assert memory.count(user_id="u") == 60


def test_processes_adding_the_same_entity_make_one_row_and_keep_every_link(
    make_memory, backend_settings
):
    import multiprocessing

    make_memory().close()  # create the schema once, as an application would
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Event()
    workers = [
        ctx.Process(target=add_notes_from_process, args=(backend_settings, w, start))
        for w in range(4)
    ]
    for process in workers:
        process.start()
    start.set()
    for process in workers:
        process.join(120)
    assert [p.exitcode for p in workers] == [0, 0, 0, 0]
    memory = make_memory()
    links = {e["key"]: e["link_count"] for e in memory.entities(user_id="team")["results"]}
    assert links == {"worker": 32, "ana lopez": 32, "paris": 32}  # one row each, no lost link
    assert memory.count(user_id="team") == 32
