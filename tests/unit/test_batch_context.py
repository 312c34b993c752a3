"""``rank.context.for_batch``: neighbour blending and neighbour words stay on for a
conversation and go off for short requests beside long answers."""

from __future__ import annotations

import pytest

from linkmem.config import RetrievalConfig
from linkmem.rank.context import for_batch, neighbour_length_ratio

CONFIG = RetrievalConfig()
SHORT, LONG = "x" * 40, "y" * 2000


def test_the_ratio_is_the_median_of_neighbouring_lengths():
    assert neighbour_length_ratio(["ab", "abcd", "abcdefgh"]) == pytest.approx(2.0)
    assert neighbour_length_ratio([SHORT, LONG, SHORT]) == pytest.approx(50.0)
    assert neighbour_length_ratio(["", "abc"]) == pytest.approx(3.0)


def test_a_conversation_keeps_its_context():
    turns = ["How was the concert last night?", "Amazing, they played for three hours!"] * 5
    assert for_batch(CONFIG, turns) is CONFIG


def test_requests_and_long_answers_lose_both_kinds_of_context():
    config = for_batch(CONFIG, [SHORT, LONG] * 4)
    assert config.context_weight == 0.0 and config.keyword_context_weight == 0.0
    assert config.context_window == CONFIG.context_window
    assert config.dense_weight == CONFIG.dense_weight


def test_one_text_or_a_zero_limit_changes_nothing():
    assert for_batch(CONFIG, [LONG]) is CONFIG
    always = RetrievalConfig(context_length_ratio_max=0.0)
    assert for_batch(always, [SHORT, LONG] * 4) is always
