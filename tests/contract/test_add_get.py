"""Contract: add, get, get_all, history — on every backend."""

from __future__ import annotations

import pytest

from linkmem import InvalidInput, NotFound


def test_add_string_returns_full_record(memory):
    out = memory.add("I adopted a dog named Max", user_id="alice", metadata={"topic": "pets"})
    (item,) = out["results"]
    assert item["memory"] == "I adopted a dog named Max"
    assert item["user_id"] == "alice" and item["event"] == "ADD"
    assert item["metadata"] == {"topic": "pets"}
    assert item["created_at"] == item["updated_at"] != ""
    assert memory.get(item["id"])["memory"] == "I adopted a dog named Max"


def test_add_messages_skips_system_and_keeps_roles_and_names(memory):
    out = memory.add(
        [
            {"role": "system", "content": "You are helpful"},
            {"role": "user", "content": "My sister Ana lives in Lisbon", "name": "bob"},
            {"role": "assistant", "content": "Lisbon is lovely in spring"},
        ],
        user_id="bob",
    )
    items = out["results"]
    assert [i["role"] for i in items] == ["user", "assistant"]
    assert items[0]["actor_id"] == "bob" and "actor_id" not in items[1]
    assert memory.count() == 2


def test_add_one_dict(memory):
    out = memory.add({"role": "user", "content": "I like tea"}, agent_id="helper")
    assert out["results"][0]["agent_id"] == "helper"


def test_add_is_one_embedding_batch(make_memory):
    from linkmem.embed.fake import FakeEmbedder

    embedder = FakeEmbedder()
    memory = make_memory(embedder=embedder)
    memory.add([{"role": "user", "content": f"fact number {i}"} for i in range(50)], user_id="u")
    # one batch for the memories, one for their unique entities (none here: no capitals)
    assert embedder.batches == 1 and embedder.texts_embedded == 50


def test_get_all_newest_first_with_limit_and_offset(memory):
    memory.add([{"role": "user", "content": f"note {i}"} for i in range(5)], user_id="u")
    texts = [r["memory"] for r in memory.get_all(user_id="u")["results"]]
    assert texts == [f"note {i}" for i in reversed(range(5))]
    page = memory.get_all(user_id="u", limit=2, offset=1)["results"]
    assert [r["memory"] for r in page] == ["note 3", "note 2"]


def test_get_unknown_id_raises_not_found(memory):
    with pytest.raises(NotFound, match="no memory"):
        memory.get("does-not-exist")


def test_history_records_add_update_delete(memory):
    mid = memory.add("first text", user_id="u")["results"][0]["id"]
    memory.update(mid, "second text")
    memory.delete(mid)
    events = memory.history(mid)["results"]
    assert [e["event"] for e in events] == ["ADD", "UPDATE", "DELETE"]
    assert events[1]["old_memory"] == "first text" and events[1]["new_memory"] == "second text"
    assert events[2]["old_memory"] == "second text" and events[2]["new_memory"] is None
    assert all(e["created_at"] for e in events)


def test_history_of_unknown_id(memory):
    with pytest.raises(NotFound):
        memory.history("nope")


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.add("", user_id="u"),
        lambda m: m.add("   ", user_id="u"),
        lambda m: m.add(42, user_id="u"),
        lambda m: m.add([], user_id="u"),
        lambda m: m.add([{"role": "user"}], user_id="u"),
        lambda m: m.add([{"role": "robot", "content": "x"}], user_id="u"),
        lambda m: m.add([{"role": "system", "content": "only system"}], user_id="u"),
        lambda m: m.add("text"),
        lambda m: m.add("text", user_id="*"),
        lambda m: m.add("text", user_id=""),
        lambda m: m.add("text", user_id="two words"),
        lambda m: m.add("text", user_id=["u"]),
        lambda m: m.add("text", user_id="u", metadata="not a dict"),
        lambda m: m.add("text", user_id="u", metadata={"user_id": "other"}),
        lambda m: m.add("text", user_id="u", metadata={"x": object()}),
        lambda m: m.add("x" * 200_001, user_id="u"),
        lambda m: m.add(
            [{"role": "user", "content": "ok"}, {"role": "user", "content": ""}], user_id="u"
        ),
    ],
)
def test_bad_add_raises_and_writes_nothing(memory, call):
    with pytest.raises(InvalidInput) as info:
        call(memory)
    assert str(info.value)  # a message that says what to do
    assert memory.count() == 0


def test_int_scope_ids_are_accepted_as_text(memory):
    out = memory.add("numeric user", user_id=42)
    assert out["results"][0]["user_id"] == "42"
    assert memory.get_all(user_id="42")["results"]
