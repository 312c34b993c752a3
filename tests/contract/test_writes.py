"""Contract: update, delete, delete_all, reset, transactions and persistence."""

from __future__ import annotations

import pytest

from linkmem import EmbedderMismatch, InvalidInput, NotFound
from linkmem.embed.fake import FakeEmbedder
from linkmem.rank.terms import query_terms
from linkmem.types import Scope


def store_state(memory, user="u"):
    """Everything a write can leave behind, read straight from the store's primitives."""
    store, scope = memory.store, Scope(user_id=user)
    vector = memory.embedder.embed_batch(["probe"])[0]
    return {
        "memories": store.count_memories(scope),
        "vectors": len(store.vector_search(vector, scope, 1000)),
        "keywords": len(store.keyword_search(query_terms("Max walks dog park"), scope, 1000)),
        "entities": len(store.list_entities(scope, "links", 1000)),
    }


EMPTY = {"memories": 0, "vectors": 0, "keywords": 0, "entities": 0}


def test_update_text_reindexes_and_relinks(memory):
    mid = memory.add("Max walks in the park", user_id="u")["results"][0]["id"]
    memory.add("Luna sleeps all day", user_id="u")
    out = memory.update(mid, "Luna chased Oscar", metadata={"mood": "happy"})
    assert out["results"][0]["memory"] == "Luna chased Oscar"
    record = memory.get(mid)
    assert record["metadata"] == {"mood": "happy"} and record["updated_at"] > record["created_at"]
    names = {e["entity"]: e["link_count"] for e in memory.entities(user_id="u")["results"]}
    assert names == {"Luna": 2, "Oscar": 1}  # Max lost its only link and is gone
    assert (
        memory.search("park", user_id="u", explain=True)["results"][0]["score_details"]["bm25_raw"]
        == 0
    )
    assert memory.search("chased", user_id="u")["results"][0]["id"] == mid


def test_update_metadata_only_merges_and_keeps_links(memory):
    mid = memory.add("Max walks", user_id="u", metadata={"a": 1})["results"][0]["id"]
    memory.update(mid, metadata={"b": 2})
    assert memory.get(mid)["metadata"] == {"a": 1, "b": 2}
    assert memory.entities(user_id="u")["results"][0]["link_count"] == 1


def test_update_validates(memory):
    mid = memory.add("Max walks", user_id="u")["results"][0]["id"]
    with pytest.raises(InvalidInput):
        memory.update(mid)
    with pytest.raises(InvalidInput):
        memory.update(mid, "")
    with pytest.raises(NotFound):
        memory.update("missing-id", "text")
    assert memory.get(mid)["memory"] == "Max walks"


@pytest.mark.embedded
def test_delete_removes_everything_but_history(memory):
    mid = memory.add("Max walks the dog park", user_id="u")["results"][0]["id"]
    memory.delete(mid)
    assert store_state(memory) == EMPTY
    with pytest.raises(NotFound):
        memory.delete(mid)
    assert [e["event"] for e in memory.history(mid)["results"]] == ["ADD", "DELETE"]


@pytest.mark.embedded
def test_delete_all_and_reset(memory):
    memory.add("Max walks", user_id="u")
    memory.add("Max sleeps in the park", user_id="u")
    memory.add("kept", user_id="other")
    assert len(memory.delete_all(user_id="u")["results"]) == 2
    assert store_state(memory) == EMPTY
    memory.reset()
    assert memory.count() == 0
    assert memory.get_all(user_id="other")["results"] == []


@pytest.mark.parametrize("fail_in", ["append_history", "link", "insert_entities"])
@pytest.mark.embedded
def test_failure_mid_add_leaves_no_trace(memory, monkeypatch, fail_in):
    memory.add("Max walks in the park", user_id="u")
    before = store_state(memory)

    def boom(*args, **kwargs):
        raise RuntimeError("injected failure")

    monkeypatch.setattr(memory.store, fail_in, boom)
    with pytest.raises(RuntimeError, match="injected"):
        memory.add(
            [
                {"role": "user", "content": "Max walks the dog"},
                {"role": "user", "content": "Oscar visits the park"},
            ],
            user_id="u",
        )
    monkeypatch.undo()
    assert store_state(memory) == before
    assert len(memory.get_all(user_id="u")["results"]) == 1
    histories = [memory.history(r["id"]) for r in memory.get_all(user_id="u")["results"]]
    assert [len(h["results"]) for h in histories] == [1]


@pytest.mark.embedded
def test_failure_mid_delete_leaves_links(memory, monkeypatch):
    mid = memory.add("Max walks in the park", user_id="u")["results"][0]["id"]
    monkeypatch.setattr(
        memory.store,
        "drop_orphan_entities",
        lambda *a: (_ for _ in ()).throw(RuntimeError("injected")),
    )
    with pytest.raises(RuntimeError):
        memory.delete(mid)
    monkeypatch.undo()
    assert memory.get(mid)["memory"] == "Max walks in the park"
    assert memory.entity_memories("Max", user_id="u")["results"][0]["id"] == mid


def test_everything_persists_across_reopen(make_memory):
    first = make_memory()
    mid = first.add("Max walks in the park", user_id="u", metadata={"k": 1})["results"][0]["id"]
    first.add("Oscar met Max", user_id="u")
    first.update(mid, "Max walks in the big park")
    first.close()
    again = make_memory()
    assert again.get(mid)["metadata"] == {"k": 1}
    assert again.search("big park", user_id="u")["results"][0]["id"] == mid
    assert {e["entity"]: e["link_count"] for e in again.entities(user_id="u")["results"]} == {
        "Max": 2,
        "Oscar": 1,
    }
    assert len(again.history(mid)["results"]) == 2


def test_delete_after_reopen_leaves_no_stale_link(make_memory):
    first = make_memory()
    ids = [
        r["id"]
        for r in first.add(
            [{"role": "user", "content": "Max runs"}, {"role": "user", "content": "Max and Oscar"}],
            user_id="u",
        )["results"]
    ]
    first.close()
    again = make_memory()
    again.delete(ids[1])
    entities = {e["entity"]: e["link_count"] for e in again.entities(user_id="u")["results"]}
    assert entities == {"Max": 1}
    assert [r["id"] for r in again.entity_memories("Max", user_id="u")["results"]] == [ids[0]]
    again.delete(ids[0])
    assert again.entities(user_id="u")["results"] == []


def test_reopen_with_another_embedder_is_refused(make_memory):
    make_memory().add("text", user_id="u")
    with pytest.raises(EmbedderMismatch, match="embedder"):
        make_memory(embedder=FakeEmbedder(dim=16))


def test_update_limits_the_merged_metadata(make_memory):
    memory = make_memory(max_metadata_bytes=200)
    mid = memory.add("Max walks", user_id="u", metadata={"a": "x" * 120})["results"][0]["id"]
    with pytest.raises(InvalidInput, match="max_metadata_bytes"):
        memory.update(mid, metadata={"b": "y" * 120})
    assert memory.get(mid)["metadata"] == {"a": "x" * 120}
