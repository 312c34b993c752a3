"""A question that lists the instances of a one-word kind matches the stored topics whose head
is that word (``linkmem.entities.asked.listed_head``, ``asked_kind_topic_heads``), with the
real spaCy pipeline, the real default embedder and a real SQLite store."""

from __future__ import annotations

import pytest

from linkmem import Memory
from linkmem.config import with_retrieval
from linkmem.entities.asked import asked_kind, listed_head, topic_head_is


@pytest.mark.parametrize(
    ("question", "head"),
    [
        ("What shelters does Maria volunteer at?", "shelters"),
        ("How many games has John mentioned winning?", "games"),
        ("What types of yoga has Maria practiced?", "yoga"),
        ("What kind of music does Ana like?", "music"),
        ("Which countries has Priya visited?", "countries"),
        # A count of occasions, not of things.
        ("How many times has Nate taken his turtles on a walk?", None),
        # One thing asked for, not a list of them.
        ("Which book was John reading during his recovery?", None),
        # A kind of several words: its modifier narrows it ("board games" are no video games).
        ("How many board games does Tom own?", None),
        ("What European countries has Maria been to?", None),
        ("What is Tom allergic to?", None),
    ],
)
def test_the_head_of_a_listed_kind(question, head):
    assert listed_head(question, asked_kind(question)) == head


def test_a_topic_has_the_head_in_its_last_word():
    assert topic_head_is("animal shelter", "shelters")
    assert topic_head_is("Animal Shelters", "shelters")
    assert topic_head_is("horror movie", "movies")  # not "movy"
    assert topic_head_is("local city", "cities")
    assert topic_head_is("kundalini yoga", "yoga")
    assert not topic_head_is("shelter dog", "shelters")
    assert not topic_head_is("", "shelters")


TURNS = [
    "Priya: Volunteering at shelters is something I have always wanted to try, someday.",
    "Tom: Ha, you always end up volunteering for everything.",
    "Priya: Next month I start helping at the animal shelter on weekends.",
    "Tom: I spent the weekend fixing my bike chain.",
    "Priya: I volunteered at the bake sale and sold every single cupcake.",
    "Tom: I prefer a slow walk, to be honest.",
    "Priya: We played a long board game night with my cousins.",
    "Tom: My video game tournament went badly, we lost in the first round.",
    "Priya: I have been trying kundalini yoga lately, it is intense.",
    "Tom: Let me know how it turns out.",
]
QUESTION = "What shelters has Priya volunteered at?"


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    memory = Memory(tmp_path_factory.mktemp("heads") / "heads.db", store="sqlite", entities=True)
    memory.add_batch(TURNS, user_id="u")
    yield memory
    memory.close()


def _ranked(memory: Memory, query: str, heads: bool) -> list[dict]:
    memory.settings = with_retrieval(memory.settings, asked_kind_topic_heads=heads)
    try:
        return memory.search(query, user_id="u", top_k=len(TURNS), explain=True)["results"]
    finally:
        memory.settings = with_retrieval(memory.settings, asked_kind_topic_heads=True)


def _rank_of(results: list[dict], words: str) -> int:
    return next(i for i, hit in enumerate(results) if words in hit["memory"])


def test_a_topic_of_the_kind_listed_rises_over_the_same_persons_turns(memory):
    off = _ranked(memory, QUESTION, False)
    on = _ranked(memory, QUESTION, True)
    # Without heads, Priya's turn that says "shelters" but names none comes first.
    assert _rank_of(off, "someday") < _rank_of(off, "animal shelter")
    # With them, the turn naming a shelter ("animal shelter") leads.
    assert _rank_of(on, "animal shelter") == 0
    shelter = on[0]["score_details"]
    before = off[_rank_of(off, "animal shelter")]["score_details"]
    # It adds to the name's boost (Priya's), it does not replace it.
    assert before["entity"] == shelter["entity"] == "Priya"
    assert shelter["entity_boost"] > before["entity_boost"] + 0.1


def test_only_topics_with_that_head_gain(memory):
    on = {hit["memory"]: hit["score_details"] for hit in _ranked(memory, QUESTION, True)}
    off = {hit["memory"]: hit["score_details"] for hit in _ranked(memory, QUESTION, False)}
    for text in TURNS:
        if "animal shelter" not in text:
            assert on[text]["entity_boost"] == off[text]["entity_boost"], text


def test_a_kind_of_several_words_boosts_no_topic(memory):
    query = "How many board games does Tom own?"
    assert [h["id"] for h in _ranked(memory, query, True)] == [
        h["id"] for h in _ranked(memory, query, False)
    ]


def test_types_of_lists_the_topics_of_its_head(memory):
    on = _ranked(memory, "What types of yoga has Priya tried?", True)
    off = _ranked(memory, "What types of yoga has Priya tried?", False)
    yoga_on = on[_rank_of(on, "kundalini")]["score_details"]
    yoga_off = off[_rank_of(off, "kundalini")]["score_details"]
    assert yoga_on["entity_boost"] > yoga_off["entity_boost"] + 0.1


def test_listed_heads_on_every_backend(make_memory):
    """The same ranking through each store's search reads (the real models)."""
    from linkmem.components import LazyExtractor, build_embedder
    from linkmem.config import resolve_settings

    settings = resolve_settings()
    memory = make_memory(embedder=build_embedder(settings), extractor=LazyExtractor(settings))
    memory.add_batch(TURNS, user_id="u")
    results = memory.search(QUESTION, user_id="u", top_k=len(TURNS))["results"]
    assert _rank_of(results, "animal shelter") == 0
