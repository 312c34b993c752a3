"""The word lists and fallbacks behind product, software and holiday names (issue 14).

The extraction table (test_extract_table.py) holds the sentences; these tests pin what the
rules depend on: the English word list that keeps ordinary words from becoming software
names, and how the extractor behaves when a pipeline ships no lemma tables.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from spacy.lang.en.stop_words import STOP_WORDS

from linkmem.extract import SpacyEntityExtractor, load_pipeline
from linkmem.extract import lexicon as lx
from linkmem.extract import spacy as spacy_mod
from linkmem.extract.dialogue import drop_chat_openers, is_chat_word, is_greeting
from linkmem.extract.products import english_words


def _pairs(extractor: SpacyEntityExtractor, text: str) -> set[tuple[str, str]]:
    return {(e.text, e.kind.value) for e in extractor.extract(text)}


def test_word_lists_are_lower_case_and_small() -> None:
    for words in (lx.HOLIDAYS, lx.SOFTWARE_NAMES, lx.SOFTWARE_FACETS, lx.OCCASION_HEADS):
        assert all(w == w.lower() for w in words)
    assert len(lx.SOFTWARE_NAMES) < 100
    assert not lx.SOFTWARE_NAMES & STOP_WORDS


@pytest.mark.slow
def test_english_words_know_english_not_software() -> None:
    words = english_words(load_pipeline())
    assert {"server", "sink", "garden", "conversation", "install"} <= words
    assert not {"redis", "traefik", "pgbouncer", "jellyfin"} & words


@pytest.mark.slow
def test_english_words_read_from_disk_without_a_lemmatizer() -> None:
    nlp = load_pipeline()
    stub = SimpleNamespace(component_names=[], path=nlp.path)
    assert english_words(stub) == english_words(nlp)
    assert english_words(SimpleNamespace(component_names=[], path=None)) == frozenset()


@pytest.mark.slow
def test_without_lemma_tables_only_listed_software_is_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(spacy_mod, "english_words", lambda nlp: frozenset())
    extractor = SpacyEntityExtractor()
    assert _pairs(extractor, "We set up redis on the new box.") == {("redis", "PROPER")}
    assert _pairs(extractor, "I installed jellyfin on the old laptop.") == set()


@pytest.mark.slow
def test_curly_apostrophe_in_a_holiday() -> None:
    extractor = SpacyEntityExtractor()
    assert _pairs(extractor, "We had brunch on Mother’s Day.") == {("Mother’s Day", "PROPER")}


@pytest.mark.slow
def test_software_facet_topic_goes_but_other_compounds_stay() -> None:
    extractor = SpacyEntityExtractor()
    # "nginx server" adds nothing to "nginx"; "staging server" is a topic of its own
    assert _pairs(extractor, "I had to install nginx on the staging server.") == {
        ("nginx", "PROPER"),
        ("staging server", "TOPIC"),
    }
    assert _pairs(extractor, "The nginx server returns a 502.") == {("nginx", "PROPER")}


@pytest.mark.parametrize(
    "word",
    ["Idk", "LOL", "lmaooo", "Hahaha", "ahah", "lolol", "xD", "xx", "Yesss", "Sooo", "Omggg"],
)
def test_chat_shorthand_laughs_and_stretched_chat_words(word: str) -> None:
    assert is_chat_word(word)


@pytest.mark.parametrize("word", ["Lisbonnn", "Max", "Ty", "BC", "Hamilton", "He", "Coffee", "X"])
def test_names_and_other_stretched_words_are_not_chat(word: str) -> None:
    assert not is_chat_word(word)


def test_a_stretched_greeting_is_a_greeting() -> None:
    assert is_greeting("Heyyy") and is_greeting("thx") and not is_greeting("Hayley")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Ngl Hey Caroline!", "Hey Caroline!"),
        ("Great. Idk Glad you came", "Great. Glad you came"),
        ("Lmao, 😂 Max ran", "Max ran"),
        ("Yeah, Mel! Oof, John, that's sad", "Yeah, Mel! Oof, John, that's sad"),
        ("I love lol cats", "I love lol cats"),
        ("Idk tbh", ""),
    ],
)
def test_chat_shorthand_opening_a_sentence_is_dropped_greetings_stay(
    text: str, expected: str
) -> None:
    assert drop_chat_openers(text) == expected
