"""The query's entities from the store's keys (``linkmem.entities.query_entities``)."""

from __future__ import annotations

import numpy as np

from linkmem.config import RetrievalConfig
from linkmem.embed.fake import FakeEmbedder
from linkmem.encoding import encode_query
from linkmem.entities.query_entities import (
    QueryEntities,
    chosen_entities,
    key_spans,
    name_runs,
    span_keys,
)


def stored(kind: str, value: float) -> tuple[str, np.ndarray]:
    return kind, np.full(4, value, dtype=np.float32)


def test_keys_are_the_n_grams_as_the_write_path_keys_them() -> None:
    keys = span_keys(key_spans("What did Caroline's  support groups say?", 3))
    assert "caroline's" in keys and "caroline" in keys
    assert "support group" in keys  # a topic is stored with a singular head
    assert "support groups say" in keys and "say" in keys  # edge punctuation is cut
    assert "what" not in keys and "what did" not in keys  # stop words alone are no entity


def test_no_n_gram_runs_across_a_phrase_end() -> None:
    keys = span_keys(key_spans("In Paris, Jon met Ana.", 3))
    assert "paris" in keys and "jon met ana" in keys
    assert not any("paris" in k and "jon" in k for k in keys)


def test_the_longest_stored_span_wins_and_a_name_may_sit_inside_a_topic() -> None:
    found = {
        "new york city": stored("PROPER", 1),
        "new york": stored("PROPER", 2),
        "caroline": stored("PROPER", 3),
        "caroline's art show": stored("TOPIC", 4),
        "art show": stored("TOPIC", 5),
    }
    chosen = chosen_entities(key_spans("Caroline's art show in New York City", 6), found, 8)
    assert [float(v[0]) for _, v in chosen] == [4, 3, 1]


def test_at_most_the_limit_and_each_entity_once() -> None:
    found = {"max": stored("PROPER", 1), "luna": stored("PROPER", 2)}
    spans = key_spans("Max and Luna and Max", 2)
    assert len(chosen_entities(spans, found, 8)) == 2
    assert len(chosen_entities(spans, found, 1)) == 1


def test_name_runs_are_capitalised_words_that_are_not_stop_words() -> None:
    runs = name_runs("What did Mel see in NYC, and where is iPhone Pro?", 5)
    assert [text for _, text in runs] == ["Mel", "NYC", "iPhone Pro"]
    assert name_runs("What did Mel see in NYC?", 1)[0][1] == "Mel"


def test_vectors_take_stored_entities_then_the_name_runs_none_covers() -> None:
    query = "Did Max visit NYC"
    runs = name_runs(query, 2)
    entities = QueryEntities(
        tuple(key_spans(query, 6)),
        tuple(run for run, _ in runs),
        np.array([[7.0] * 4, [8.0] * 4], dtype=np.float32),
        8,
    )
    vectors = entities.vectors({"max": stored("PROPER", 1)})
    assert vectors[:, 0].tolist() == [1, 8]  # Max from the store; NYC by its own vector
    assert entities.vectors({}).shape == (2, 4)
    assert QueryEntities((), (), np.zeros((0, 4), np.float32), 8).vectors({}).shape == (0, 4)


def test_a_long_query_is_read_for_entities_within_the_long_text_budget() -> None:
    query = "Maria in Lisbon " + "and then some more words " * 2000 + "Ken in Oslo"
    vector, entities = encode_query(query, FakeEmbedder(), RetrievalConfig())
    assert entities is not None and vector.shape == (FakeEmbedder().dim,)
    keys = entities.keys
    assert {"maria", "lisbon", "ken", "oslo"} <= set(keys)  # head and tail are read
    assert len(keys) < 500
