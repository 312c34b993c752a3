"""Contract: collection names are case-insensitive on every backend ("Notes" is "notes")."""

from __future__ import annotations

import uuid

import pytest

from linkmem import ConfigError
from linkmem.store.names import check_collection


def test_names_differing_only_in_case_are_one_collection(make_memory):
    suffix = uuid.uuid4().hex[:8]
    mixed = make_memory(collection=f"Notes_{suffix}")
    first = mixed.add("Max likes Lisbon", user_id="u")["results"][0]["id"]
    lower = make_memory(collection=f"notes_{suffix}")
    second = lower.add("Max visits Oscar", user_id="u")["results"][0]["id"]
    upper = make_memory(collection=f"NOTES_{suffix.upper()}")
    for memory in (mixed, lower, upper):
        listed = {r["id"] for r in memory.get_all(user_id="u")["results"]}
        assert listed == {first, second}
        names = {e["entity"]: e["link_count"] for e in memory.entities(user_id="u")["results"]}
        assert names == {"Max": 2, "Lisbon": 1, "Oscar": 1}


def test_another_name_is_another_collection(make_memory):
    suffix = uuid.uuid4().hex[:8]
    make_memory(collection=f"Notes_{suffix}").add("Max likes Lisbon", user_id="u")
    other = make_memory(collection=f"Notes_{suffix}_b")
    assert other.get_all(user_id="u")["results"] == []


@pytest.mark.parametrize("bad", ["", "9lives", "has-dash", "späti", "x" * 42, None, 7])
def test_invalid_names_are_refused_on_every_backend(make_memory, bad):
    with pytest.raises(ConfigError, match="not a valid name"):
        make_memory(collection=bad)


def test_the_canonical_name_is_lower_case():
    assert check_collection("Team_Notes") == "team_notes"
    assert check_collection("_x1") == "_x1"
