"""Contract, through the public API (also over HTTP): with the default settings a memory that
refers back to a name ("he") is found by that name, and the name's link count is the number of
memories that name it (``entities.inherit``; the stored origin: ``test_link_origin``)."""

from __future__ import annotations

TRIP = ["We took Leo to Lisbon in spring", "then he slept through the whole boat tour"]


def test_a_back_reference_is_boosted_by_the_name_but_not_counted(memory):
    out = memory.add_batch([*TRIP, "Mia called about the rent"], user_id="u")
    named, refers, other = (r["id"] for r in out["results"])
    entities = {e["entity"]: e for e in memory.entities(user_id="u")["results"]}
    assert entities["Leo"]["link_count"] == 1
    hits = memory.search("Leo", user_id="u", top_k=10, explain=True)["results"]
    parts = {h["id"]: h["score_details"] for h in hits}
    assert parts[refers]["entity"] == "Leo" and parts[refers]["entity_boost"] > 0
    assert parts[other]["entity_boost"] == 0
    assert memory.check()["ok"]
