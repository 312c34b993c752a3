"""The kind of thing a question asks for, matched to stored names (``linkmem.entities.asked``),
with the real spaCy pipeline, the real default embedder and a real SQLite store."""

from __future__ import annotations

import pytest

from linkmem import Memory
from linkmem.config import with_retrieval
from linkmem.entities.asked import ASKED_KINDS, asked_kind, raw_threshold
from linkmem.extract.base import EntityKind


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Which countries has Priya visited?", "countries"),
        ("What European countries has Maria been to?", "European countries"),
        ("How many board games does Tom own?", "board games"),
        ("What kind of music does Ana like?", "music"),
        ("what types of bread did they bake?", "bread"),
        ("When did Priya go to Portugal?", None),
        ("What is Tom allergic to?", None),
        ("Where does Ana live?", None),
        ("Who gave Tom the cello?", None),
    ],
)
def test_the_kind_asked_for_is_the_words_before_the_verb(question, kind):
    assert asked_kind(question) == kind


def test_a_threshold_is_raw_for_a_calibrated_embedder():
    assert raw_threshold(0.5, 1.0) == 0.5
    assert raw_threshold(0.5, 4.0) == pytest.approx(0.875)  # e5 crowds its cosines near 1
    assert ASKED_KINDS == {EntityKind.PROPER, EntityKind.QUOTED}


TURNS = [
    "Priya: Morning Tom! I finally finished painting the spare room yesterday.",
    "Tom: Nice, what colour did you go for?",
    "Priya: Some countries have such long winters, I could never live in one.",
    "Tom: I spent the weekend fixing my bike chain.",
    "Priya: My favourite photo is still the one of the trams I took in Portugal.",
    "Tom: I have never been on a tram.",
    "Priya: My sister keeps asking me to join her pottery class.",
    "Tom: Pottery sounds relaxing.",
    "Priya: Work has been busy, we ship the new app next month.",
    "Tom: Good luck with the launch!",
    "Priya: The snow pictures my cousin sent reminded me of my winter in Japan.",
    "Tom: Snow always looks magical in pictures.",
    "Priya: I am baking bread tonight, first time with rye flour.",
    "Tom: Let me know how it turns out.",
    "Priya: I started running again, three times a week now.",
    "Tom: That is a great habit.",
]
QUESTION = "Which countries has Priya visited?"


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    memory = Memory(tmp_path_factory.mktemp("asked") / "asked.db", store="sqlite", entities=True)
    memory.add_batch(TURNS, user_id="u")
    yield memory
    memory.close()


def _ranked(memory: Memory, query: str, weight: float) -> list[dict]:
    memory.settings = with_retrieval(memory.settings, asked_kind_weight=weight)
    try:
        return memory.search(query, user_id="u", top_k=len(TURNS), explain=True)["results"]
    finally:
        memory.settings = with_retrieval(memory.settings, asked_kind_weight=0.2)


def _rank_of(results: list[dict], word: str) -> int:
    return next(i for i, hit in enumerate(results) if word in hit["memory"])


def test_turns_naming_a_thing_of_the_kind_asked_rise(memory):
    off = _ranked(memory, QUESTION, 0.0)
    on = _ranked(memory, QUESTION, 0.2)
    # Without the kind, the turn that says "countries" but names none comes first.
    assert _rank_of(off, "long winters") < _rank_of(off, "Portugal")
    assert _rank_of(off, "long winters") < _rank_of(off, "Japan")
    # With it, both turns that name a country are above it.
    assert _rank_of(on, "Portugal") < _rank_of(on, "long winters")
    assert _rank_of(on, "Japan") < _rank_of(on, "long winters")


def test_the_kind_adds_to_the_name_boost(memory):
    on = {hit["memory"]: hit["score_details"] for hit in _ranked(memory, QUESTION, 0.2)}
    off = {hit["memory"]: hit["score_details"] for hit in _ranked(memory, QUESTION, 0.0)}
    portugal = next(text for text in on if "Portugal" in text)
    # Priya's name boosts her turns; naming a country adds to that, it does not replace it.
    assert off[portugal]["entity"] == "Priya"
    assert on[portugal]["entity"] == "Priya"
    assert on[portugal]["entity_boost"] > off[portugal]["entity_boost"] + 0.1
    winters = next(text for text in on if "long winters" in text)
    assert on[winters]["entity_boost"] == off[winters]["entity_boost"]


def test_a_kind_no_stored_name_is_near_ranks_as_before(memory):
    query = "Which desserts has Tom made?"  # no name or title of the scope is a dessert
    assert [h["id"] for h in _ranked(memory, query, 0.2)] == [
        h["id"] for h in _ranked(memory, query, 0.0)
    ]


def test_a_question_that_asks_no_kind_ranks_as_before(memory):
    query = "When did Priya start running again?"
    assert [h["id"] for h in _ranked(memory, query, 0.2)] == [
        h["id"] for h in _ranked(memory, query, 0.0)
    ]


def test_the_kind_asked_for_on_every_backend(make_memory):
    """The same ranking through each store's search reads (the real models)."""
    from linkmem.components import LazyExtractor, build_embedder
    from linkmem.config import resolve_settings

    settings = resolve_settings()
    memory = make_memory(embedder=build_embedder(settings), extractor=LazyExtractor(settings))
    memory.add_batch(TURNS, user_id="u")
    results = memory.search(QUESTION, user_id="u", top_k=len(TURNS))["results"]
    assert _rank_of(results, "Portugal") < _rank_of(results, "long winters")
    assert _rank_of(results, "Japan") < _rank_of(results, "long winters")
