"""Back references inherit the names of the memories just before them (entities.inherit)."""

from __future__ import annotations

from linkmem.config import RetrievalConfig
from linkmem.entities.inherit import Inheritance, asks, refers_back
from linkmem.entities.linker import EntityCollector
from linkmem.extract.base import EntityKind, ExtractedEntity

PROPER, TOPIC, QUOTED = EntityKind.PROPER, EntityKind.TOPIC, EntityKind.QUOTED


def _e(text: str, kind: EntityKind = PROPER) -> ExtractedEntity:
    return ExtractedEntity(text, kind)


TEXTS = [
    "Pablo: We took Leo to Lisbon two days ago.",
    "Ines: Did he behave?",
    "Pablo: He slept through the whole boat tour.",
    "Pablo: Ines, the soup is ready.",
    "Ines: It was great.",
]
EXTRACTED = [
    [_e("Pablo"), _e("Leo"), _e("Lisbon"), _e("boat", TOPIC)],
    [_e("Ines")],
    [_e("Pablo"), _e("boat tour", TOPIC)],
    [_e("Pablo"), _e("soup", TOPIC)],
    [_e("Ines")],
]


def _keys(rows: list[list[ExtractedEntity]]) -> list[list[str]]:
    return [[e.key for e in row] for row in rows]


def test_pronouns_inherit_names_through_a_chain_but_not_speakers_or_topics():
    rows = _keys(Inheritance(2).apply(TEXTS, EXTRACTED))
    assert rows[1] == ["ines", "leo", "lisbon"]
    assert rows[2] == ["pablo", "boat tour", "leo", "lisbon"]  # through "Did he behave?"
    assert rows[3] == ["pablo", "soup"]  # no pronoun
    assert rows[4] == ["ines", "leo", "lisbon"]  # two back, inheriting itself


def test_window_limits_how_far_back_and_zero_is_off():
    rows = _keys(Inheritance(1).apply(TEXTS, EXTRACTED))
    assert rows[2] == ["pablo", "boat tour", "leo", "lisbon"]
    assert rows[4] == ["ines"]  # the memory before names nobody and inherits nothing
    assert _keys(Inheritance(0).apply(TEXTS, EXTRACTED)) == _keys(EXTRACTED)


def test_a_memory_that_names_someone_inherits_too_without_duplicates():
    texts = ["Max chewed Anna's shoe.", "He's fine now, Dr. Chen and Anna were brilliant."]
    extracted = [[_e("Max"), _e("Anna")], [_e("Dr. Chen"), _e("Anna")]]
    rows = _keys(Inheritance(2).apply(texts, extracted))
    assert rows[1] == ["dr. chen", "anna", "max"]


def test_titles_are_inherited_and_chunks_carry_over():
    inheritance = Inheritance(2)
    inheritance.apply(["I finished \u201cLittle Women\u201d."], [[_e("Little Women", QUOTED)]])
    rows = inheritance.apply(["It made me cry."], [[]])
    assert _keys(rows) == [["little women"]]


def test_refers_back_reads_words_not_substrings():
    assert refers_back("They left early") and refers_back("I saw his car")
    assert refers_back("she's back")
    assert not refers_back("The theme was hectic") and not refers_back("I went there")


def test_collector_links_inherited_names_without_new_keys():
    collector = EntityCollector(RetrievalConfig(entity_inherit_window=2))
    new = collector.add(EXTRACTED[:3], TEXTS[:3])
    assert new == ["pablo", "leo", "lisbon", "boat", "ines", "boat tour"]
    assert collector.per_memory[2] == ["pablo", "boat tour", "leo", "lisbon"]
    plain = EntityCollector(RetrievalConfig(entity_inherit_window=2))
    plain.add(EXTRACTED[:3])  # no texts: nothing inherited
    assert plain.per_memory[2] == ["pablo", "boat tour"]


CHAT = [
    "Ana: Did you take Max to the vet?",
    "Ben: Yes, on Monday, all fine.",
    "Ana: Good. Lunch at Nando's tomorrow.",
    "Ben: Sounds great.",
]
CHAT_EXTRACTED = [[_e("Ana"), _e("Max")], [_e("Ben"), _e("Monday")], [_e("Ana"), _e("Nando's")], []]


def test_a_reply_to_a_question_inherits_its_names_and_only_a_reply():
    rows = _keys(Inheritance(2).apply(CHAT, CHAT_EXTRACTED))
    assert rows[1] == ["ben", "monday", "max"]  # no pronoun: the reply to a question
    assert rows[2] == ["ana", "nando's"]  # after a statement: nothing
    assert rows[3] == []  # "Sounds great." neither asks nor refers back
    off = _keys(Inheritance(2, replies=False).apply(CHAT, CHAT_EXTRACTED))
    assert off == _keys(CHAT_EXTRACTED)


def test_whether_the_last_memory_asked_carries_over_chunks():
    inheritance = Inheritance(2)
    inheritance.apply(CHAT[:1], CHAT_EXTRACTED[:1])
    rows = inheritance.apply(CHAT[1:3], CHAT_EXTRACTED[1:3])
    assert _keys(rows) == [["ben", "monday", "max"], ["ana", "nando's"]]
    assert _keys(inheritance.apply(CHAT[3:], CHAT_EXTRACTED[3:])) == [[]]  # asked was reset


def test_asks_reads_the_end_of_the_message():
    assert asks("Did you see Max?") and asks("Did you see Max?  ") and asks("Max?!")
    assert asks('She said "really?"') and asks("(Max, right?)") and asks("Did you see Max? 😂")
    assert not asks("What? No, never.") and not asks("Max!") and not asks("") and not asks("?? 2")
