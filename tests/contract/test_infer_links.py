"""Contract: ``infer=True`` reconciliation keeps entity links exact on every backend (the
remote variants skip: they need a Memory with ``llm=`` settings of their own)."""

from __future__ import annotations

from llm_fixtures import decisions, facts

U = {"user_id": "alice"}


def _links(memory) -> dict[str, set[str]]:
    """Entity -> ids of the memories it links, from the entity side."""
    return {
        e["entity"]: {r["id"] for r in memory.entity_memories(e["entity"], **U)["results"]}
        for e in memory.entities(**U)["results"]
    }


def test_update_by_reconciliation_leaves_no_stale_entity_link(make_memory, llm_server):
    memory = make_memory(llm=llm_server.settings())
    old = memory.add("Alice lives in Berlin near Anna", **U)["results"][0]
    other = memory.add("Anna lives in Berlin too", **U)["results"][0]
    llm_server.queue(
        facts("Alice moved to Lisbon"),
        decisions(("f1", "UPDATE", "m1", "Alice lives in Lisbon")),
    )
    (event,) = memory.add("I moved to Lisbon", **U, infer=True)["results"]
    assert "m1: Alice lives in Berlin near Anna" in llm_server.prompts()[1]
    assert event["event"] == "UPDATE" and event["id"] == old["id"]
    links = _links(memory)
    assert links == {
        "Alice": {old["id"]},
        "Lisbon": {old["id"]},
        "Berlin": {other["id"]},  # kept: another memory still names it
        "Anna": {other["id"]},  # the updated memory no longer names Anna
    }
    assert memory.check()["ok"]


def test_delete_by_reconciliation_leaves_no_stale_entity_link(make_memory, llm_server):
    memory = make_memory(llm=llm_server.settings())
    dog = memory.add("Alice walks Max in Hyde Park", **U)["results"][0]
    park = memory.add("Alice runs in Hyde Park", **U)["results"][0]
    llm_server.queue(facts("Alice walks Max no more"), decisions(("f1", "DELETE", "m1", "")))
    (event,) = memory.add("Max went to live with my sister", **U, infer=True)["results"]
    assert "m1: Alice walks Max in Hyde Park" in llm_server.prompts()[1]
    assert event["event"] == "DELETE" and event["id"] == dog["id"]
    assert _links(memory) == {"Alice": {park["id"]}, "Hyde Park": {park["id"]}}
    assert memory.check()["ok"]
