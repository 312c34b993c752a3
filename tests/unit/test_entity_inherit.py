"""Back references inherit the names of the memories just before them (entities.inherit)."""

from __future__ import annotations

from linkmem.config import RetrievalConfig
from linkmem.entities.inherit import Inheritance, refers_back
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
