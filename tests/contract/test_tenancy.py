"""Contract: a tenant-bound view reaches its own scope only, on every call (both backends)."""

from __future__ import annotations

import pytest

from linkmem import InvalidInput, NotFound, PermissionDenied, Tenant

#: Tenancy of an embedded Memory (for_tenant); over HTTP see tests/server/.
pytestmark = pytest.mark.embedded


@pytest.fixture
def two_users(memory):
    alice = memory.add("Alice walks Max in Paris", user_id="alice", agent_id="coach")
    bob = memory.add("Bob walks Max in Lisbon", user_id="bob", agent_id="coach")
    return memory, alice["results"][0]["id"], bob["results"][0]["id"]


def test_a_user_tenant_never_reaches_another_user(two_users):
    memory, alice_id, bob_id = two_users
    alice = memory.for_tenant(Tenant(user_id="alice"))
    assert [r["id"] for r in alice.search("Max walks")["results"]] == [alice_id]
    assert [r["id"] for r in alice.get_all(agent_id="coach")["results"]] == [alice_id]
    assert [r["id"] for r in alice.entity_memories("Max")["results"]] == [alice_id]
    assert {e["entity"] for e in alice.entities()["results"]} == {"Alice", "Max", "Paris"}
    for call in (alice.get, alice.delete, alice.history, alice.memory_entities):
        with pytest.raises(NotFound):
            call(bob_id)
    with pytest.raises(NotFound):
        alice.update(bob_id, "stolen")
    for scope in ({"user_id": "bob"}, {"filters": {"user_id": "bob"}}):
        with pytest.raises(PermissionDenied):
            alice.get_all(**scope)
    with pytest.raises(PermissionDenied):
        alice.add("planted", user_id="bob")
    assert memory.get(bob_id)["memory"] == "Bob walks Max in Lisbon"
    assert alice.delete_all()["results"] == [{"id": alice_id, "event": "DELETE"}]
    assert memory.get(bob_id)


def test_a_tenant_may_narrow_its_scope_and_writes_under_its_own_ids(two_users):
    memory, alice_id, _ = two_users
    alice = memory.for_tenant(Tenant(user_id="alice"))
    added = alice.add("Alice plans a run", agent_id="runner")["results"][0]
    assert (added["user_id"], added["agent_id"]) == ("alice", "runner")
    assert [r["id"] for r in alice.get_all(agent_id="coach")["results"]] == [alice_id]


def test_an_agent_tenant_spans_its_users_only_when_asked(two_users):
    memory, alice_id, bob_id = two_users
    memory.add("Carol's note", user_id="carol", agent_id="other")
    coach = memory.for_tenant(Tenant(agent_id="coach"))
    assert {r["id"] for r in coach.get_all()["results"]} == {alice_id, bob_id}
    assert [r["id"] for r in coach.get_all(user_id="alice")["results"]] == [alice_id]
    with pytest.raises(InvalidInput, match="across_users"):
        coach.delete_all()
    assert len(coach.delete_all(across_users=True)["results"]) == 2
    assert memory.get_all(user_id="carol")["results"]


def test_whole_store_calls_are_not_offered_to_a_tenant(memory):
    alice = memory.for_tenant(Tenant(user_id="alice"))
    for name in ("reset", "export", "restore", "check", "store"):
        with pytest.raises(AttributeError):
            getattr(alice, name)
    with pytest.raises(InvalidInput):
        Tenant()
