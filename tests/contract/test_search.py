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
    assert set(details) == {
        "dense",
        "bm25_raw",
        "bm25",
        "entity_boost",
        "entity",
        "hop_boost",
        "hop_entity",
        "time_boost",
        "score",
    }
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


def test_the_query_names_stored_entities_by_their_keys_in_every_scope_it_covers(memory):
    memory.add("Max met Luna at the park", user_id="alice", agent_id="coach")
    memory.add("the weather was grey", user_id="alice", agent_id="diary")
    results = memory.search("what did max do", user_id="alice", explain=True)["results"]
    assert results[0]["score_details"]["entity"] == "Max"  # lower-case in the query
    assert results[0]["score_details"]["entity_boost"] > 0


def test_a_name_the_store_does_not_hold_gives_no_entity_signal(pets):
    results = pets.search("news about Zanzibar", user_id="alice", explain=True)["results"]
    assert all(r["score_details"]["entity_boost"] == 0 for r in results)


def _lines(*texts: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text} for text in texts]


def test_a_name_in_the_query_boosts_all_its_memories_however_many(make_memory):
    # Anna (3 links) is a hub; no neighbour words, so only the name boost separates the lines
    memory = make_memory(retrieval={"entity_pool_max_links": 2, "keyword_context_weight": 0.0})
    memory.add(
        _lines(
            "Anna: we went hiking in the mountains",
            "Anna: the lake was cold",
            "Anna: my sister loves painting",
            "Ben: we went hiking in the mountains",
        ),
        user_id="u",
    )
    results = memory.search("where did Anna go hiking", user_id="u", explain=True)["results"]
    assert results[0]["memory"] == "Anna: we went hiking in the mountains"
    weight = memory.settings.retrieval.name_boost_weight
    for result in results:
        details = result["score_details"]
        if result["memory"].startswith("Anna"):
            assert details["entity"] == "Anna"
            assert details["entity_boost"] == pytest.approx(weight)
        else:
            assert details["entity_boost"] == 0


def test_a_rare_entity_of_the_best_result_pulls_in_its_other_memories(make_memory):
    memory = make_memory(retrieval={"hop_sources": 1})
    memory.add(
        _lines(
            "Joanna: I watched Dune and loved the desert planet story",
            "Nate: Dune was great, what a planet",
            "Nate: my turtles are hungry",
            "Joanna: the weather is nice",
            "Joanna: the coffee is cold",
            "Joanna: the bus is late",
        ),
        user_id="u",
    )
    query = "loved the desert planet story"
    source = "Joanna: I watched Dune and loved the desert planet story"
    first = memory.search(query, user_id="u", top_k=1, signals=Signals(entities=False))
    assert first["results"][0]["memory"] == source
    results = memory.search(query, user_id="u", top_k=6, explain=True)["results"]
    details = {r["memory"]: r["score_details"] for r in results}
    hop_weight = memory.settings.retrieval.hop_weight
    nate = details["Nate: Dune was great, what a planet"]
    assert nate["hop_entity"] == "Dune" and nate["hop_boost"] > 0
    assert nate["hop_boost"] == pytest.approx(hop_weight * nate["dense"], abs=1e-5)
    # Joanna links 4 memories (more than hop_max_links): not followed; nor is the source
    for text in ("Joanna: the weather is nice", "Nate: my turtles are hungry"):
        assert details[text]["hop_boost"] == 0
    assert details[source]["hop_boost"] == 0


def test_no_hop_without_the_entity_signal(make_memory):
    memory = make_memory()
    memory.add(_lines("Joanna: I watched Dune in the desert", "Nate: Dune was great"), user_id="u")
    dense_bm25 = Signals(entities=False)
    results = memory.search("desert", user_id="u", explain=True, signals=dense_bm25)["results"]
    assert all(r["score_details"]["hop_boost"] == 0 for r in results)


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
