"""Contract: tenants never see each other's memories; no wildcard widens a scope."""

from __future__ import annotations

import pytest

from linkmem import InvalidInput, NotFound


@pytest.fixture
def two_users(memory):
    memory.add("alice likes Paris in the spring", user_id="alice")
    memory.add("bob likes Paris in the autumn", user_id="bob")
    memory.add("alice's agent knows Paris", user_id="alice", agent_id="planner")
    return memory


def test_search_and_list_stay_in_scope(two_users):
    for user in ("alice", "bob"):
        found = two_users.search("Paris", user_id=user, top_k=10)["results"]
        assert found and all(r["user_id"] == user for r in found)
        listed = two_users.get_all(user_id=user)["results"]
        assert all(r["user_id"] == user for r in listed)
    assert len(two_users.get_all(user_id="alice")["results"]) == 2
    agent_only = two_users.get_all(user_id="alice", agent_id="planner")["results"]
    assert [r["memory"] for r in agent_only] == ["alice's agent knows Paris"]


def test_entity_boost_stays_in_scope(two_users):
    found = two_users.search("Paris", user_id="bob", explain=True)["results"]
    assert [r["user_id"] for r in found] == ["bob"]


@pytest.mark.parametrize("wild", ["*", "", " ", "%", "alice*"])
def test_wildcards_never_widen(two_users, wild):
    with pytest.raises(InvalidInput):
        two_users.search("Paris", user_id=wild)
    with pytest.raises(InvalidInput):
        two_users.delete_all(user_id=wild)
    assert two_users.count() == 3


def test_id_calls_check_the_scope_when_given(two_users):
    bob_id = two_users.get_all(user_id="bob")["results"][0]["id"]
    for call in (
        lambda: two_users.get(bob_id, user_id="alice"),
        lambda: two_users.update(bob_id, "hijacked", user_id="alice"),
        lambda: two_users.delete(bob_id, user_id="alice"),
    ):
        with pytest.raises(NotFound):
            call()
    assert two_users.get(bob_id, user_id="bob")["memory"] == "bob likes Paris in the autumn"


def test_delete_all_only_touches_its_scope(two_users):
    deleted = two_users.delete_all(user_id="alice")["results"]
    assert len(deleted) == 2
    assert two_users.get_all(user_id="bob")["results"]
    assert not two_users.get_all(user_id="alice")["results"]
    bob_entities = two_users.entities(user_id="bob")["results"]
    assert [e["entity"] for e in bob_entities] == ["Paris"]
    assert two_users.entities(user_id="alice")["results"] == []


def test_missing_scope_is_an_error(two_users):
    for call in (
        lambda: two_users.get_all(),
        lambda: two_users.delete_all(),
        lambda: two_users.entities(),
    ):
        with pytest.raises(InvalidInput, match="user_id"):
            call()
