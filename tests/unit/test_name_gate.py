"""The name gate: a name's boost counts only when the name's memories match the question's text
about as well as the best other candidate (``rank.fusion.name_gate``)."""

from __future__ import annotations

import math

import pytest
from helpers import fuse_by_id

from linkmem.config import RetrievalConfig
from linkmem.entities.boost import CandidateBoosts
from linkmem.rank.fusion import NO_BOOST, BoostKinds, EntityMatch, Fusion, name_gate

NO_GATE = RetrievalConfig(name_gate_margin=-math.inf)


def _boosts(matches: list[EntityMatch], config: RetrievalConfig) -> CandidateBoosts:
    """The boosts a search fuses: the names gated on the fused candidates."""
    return CandidateBoosts(BoostKinds.of(matches, config), config)


def _caroline_and_melanie(config: RetrievalConfig) -> list[str]:
    """A question that names the wrong person ("What did Caroline realise after her charity
    race?" when Melanie ran it): Melanie's turns share its words ("charity race"), Caroline's
    small talk shares none."""
    dense = {"melanie-race": 0.60, "melanie-after-the-race": 0.40, "caroline-small-talk": 0.50}
    bm25 = {"melanie-race": 6.0, "melanie-after-the-race": 3.0}
    caroline = EntityMatch("Caroline", 1.0, 200, ["caroline-small-talk"], proper=True)
    boosts = _boosts([caroline], config)
    ranked = fuse_by_id(dense, dense, bm25, 3, boosts, config)
    return [mid for mid, _ in ranked]


def test_the_named_speaker_without_the_questions_words_no_longer_outranks_the_match():
    assert _caroline_and_melanie(NO_GATE)[1] == "caroline-small-talk"
    assert _caroline_and_melanie(RetrievalConfig())[1] == "melanie-after-the-race"


def test_a_name_whose_memories_match_best_keeps_its_whole_boost():
    config = RetrievalConfig()
    dense = {"melanie-race": 0.6, "caroline-chat": 0.5}
    boosts = _boosts([EntityMatch("Melanie", 1.0, 200, ["melanie-race"], proper=True)], config)
    fuse_by_id(dense, dense, {}, 3, boosts, config)
    assert boosts.get("melanie-race") == pytest.approx((config.name_boost_weight, "Melanie"))


def test_a_query_that_is_only_a_name_keeps_its_boost():
    """Every candidate is the name's: there is no other memory to match better."""
    config = RetrievalConfig()
    dense = {"m1": 0.2, "m2": 0.1}
    boosts = _boosts([EntityMatch("Max", 1.0, 2, ["m1", "m2"], proper=True)], config)
    fuse_by_id(dense, dense, {}, 1, boosts, config)
    assert boosts.get("m2")[0] == pytest.approx(config.name_boost_weight)


def test_topics_are_not_gated_and_a_closed_name_leaves_them_the_memory():
    config = RetrievalConfig()
    dense = {"caroline": 0.1, "race": 0.6}
    matches = [
        EntityMatch("Caroline", 1.0, 200, ["caroline", "race"], proper=True),
        EntityMatch("charity race", 0.8, 1, ["race"]),
    ]
    kinds = BoostKinds.of(matches, config)
    assert kinds.names[0][0] > kinds.topic_best["race"][0]  # ungated, Caroline's is greater
    boosts = CandidateBoosts(kinds, config)
    fuse_by_id(dense, dense, {}, 2, boosts, config)
    assert boosts.get("race")[1] == "Caroline"  # Caroline's memories include the best match
    dense["other"] = 1.0
    fuse_by_id(dense, dense, {}, 2, boosts, config)
    assert boosts.get("race")[1] == "charity race"
    assert boosts.get("caroline") == NO_BOOST


def test_the_gate_is_a_ramp_around_its_margin():
    config = RetrievalConfig(name_gate_margin=-0.15, name_gate_width=0.2)
    assert name_gate(-0.3, config) == 0.0
    assert name_gate(-0.15, config) == pytest.approx(0.5)
    assert name_gate(0.0, config) == 1.0
    step = RetrievalConfig(name_gate_margin=-0.15, name_gate_width=0.0)
    assert (name_gate(-0.16, step), name_gate(-0.14, step)) == (0.0, 1.0)
    assert name_gate(-5.0, NO_GATE) == 1.0


def test_the_text_score_is_the_fused_score_without_boosts():
    config = RetrievalConfig()
    fusion = Fusion(3, config)
    total = fusion.score(0.4, 5.0, (0.0, None))
    assert fusion.text(0.4, 5.0) == pytest.approx(total * config.max_score)
