"""Contract: hybrid search, explain, threshold, candidate union, filters inside the query."""

from __future__ import annotations

import pytest

from linkmem import InvalidInput
from linkmem.search import Signals


@pytest.fixture
def pets(memory):
    memory.add(
        [
            {"role": "user", "content": "I adopted a dog named Max in March"},
            {"role": "user", "content": "my favourite food is spicy ramen"},
            {"role": "user", "content": "I work as a nurse at the city hospital"},
            {"role": "user", "content": "the vet said Max needs more exercise"},
        ],
        user_id="alice",
    )
    return memory


def test_search_finds_relevant_memories_with_score_parts(pets):
    results = pets.search("spicy ramen food", user_id="alice", explain=True)["results"]
    assert results[0]["memory"] == "my favourite food is spicy ramen"
    details = results[0]["score_details"]
    assert set(details) == {"dense", "bm25_raw", "bm25", "entity_boost", "entity", "score"}
    assert details["bm25_raw"] > 0 and 0 < details["bm25"] <= 1
    assert details["score"] == results[0]["score"]
    assert all(0.0 <= r["score"] <= 1.0 for r in results)
    assert [r["score"] for r in results] == sorted((r["score"] for r in results), reverse=True)


def test_entity_boost_is_explained(pets):
    results = pets.search("news about Max", user_id="alice", explain=True)["results"]
    boosted = [r for r in results if r["score_details"]["entity_boost"] > 0]
    assert {r["memory"] for r in boosted} == {
        "I adopted a dog named Max in March",
        "the vet said Max needs more exercise",
    }
    assert all(r["score_details"]["entity"] == "Max" for r in boosted)


def test_threshold_gates_the_returned_score(pets):
    everything = pets.search("spicy food", user_id="alice", top_k=10)["results"]
    assert everything[0]["score"] > everything[-1]["score"]
    cut = (everything[0]["score"] + everything[-1]["score"]) / 2
    gated = pets.search("spicy food", user_id="alice", top_k=10, threshold=cut)["results"]
    assert gated and all(r["score"] >= cut for r in gated)
    assert len(gated) < len(everything)


def test_score_does_not_depend_on_other_memories(memory):
    memory.add("the quarterly report is due on Friday", user_id="u")
    before = memory.search("quarterly report", user_id="u", explain=True)["results"][0]
    memory.add("unrelated words about gardening tomatoes", user_id="v")  # another scope
    after = memory.search("quarterly report", user_id="u", explain=True)["results"][0]
    assert before["score"] == after["score"]


def test_keyword_only_match_joins_the_candidate_pool(make_memory):
    memory = make_memory(retrieval={"pool_min": 2, "pool_factor": 1})
    memory.add(
        [
            {"role": "user", "content": f"meeting notes about budget item {i} and meeting plans"}
            for i in range(30)
        ],
        user_id="u",
    )
    memory.add("xylophone", user_id="u")
    dense_only = memory.search(
        "meeting xylophone", user_id="u", top_k=2, signals=Signals(True, False, False)
    )["results"]
    full = memory.search("meeting xylophone", user_id="u", top_k=2, explain=True)["results"]
    assert "xylophone" not in [r["memory"] for r in dense_only]
    assert "xylophone" in [r["memory"] for r in full]


def test_search_validates_input(pets):
    with pytest.raises(InvalidInput):
        pets.search("", user_id="alice")
    with pytest.raises(InvalidInput):
        pets.search("food")
    with pytest.raises(InvalidInput):
        pets.search("food", user_id="alice", top_k=0)
    with pytest.raises(InvalidInput):
        pets.search("food", user_id="alice", threshold=2)
    with pytest.raises(InvalidInput):
        pets.search("food", user_id="alice", filters={"n": {"between": 1}})


def test_mem0_style_scope_in_filters(pets):
    results = pets.search("food", filters={"user_id": "alice"})["results"]
    assert results and all(r["user_id"] == "alice" for r in results)
    with pytest.raises(InvalidInput):
        pets.search("food", user_id="alice", filters={"user_id": "bob"})
