"""Each memory's best entity boost built in two parts (``BoostKinds``): a search builds the
specific entities' boosts before the query's vector and adds the hubs' after it. The result
must be the one-pass answer: the best boost, and among equal boosts the first entity's
(topics, then names, each in the order given), with the names' gates open or not
(``CandidateBoosts``, the boosts a search fuses)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from reference_boosts import gate

from linkmem.config import RetrievalConfig
from linkmem.entities.boost import CandidateBoosts
from linkmem.rank.fusion import NO_BOOST, BoostKinds, EntityMatch, entity_boost, is_name

IDS = [f"m{j}" for j in range(30)]
OPEN = RetrievalConfig(name_gate_margin=-math.inf)  # every name's gate open


def _boosts(kinds: BoostKinds, config: RetrievalConfig, text: np.ndarray) -> dict:
    """``CandidateBoosts`` of ``kinds`` over every memory (text scores ``text``): each boosted
    memory's (boost, entity), checked against the array's values."""
    boosts = CandidateBoosts(kinds, config)
    array = boosts.array(IDS, text).tolist()
    out = {m: b for m in IDS if (b := boosts.get(m)) != NO_BOOST}
    assert array == [out.get(m, NO_BOOST)[0] for m in IDS]
    return out


def _one_pass(
    matches: list[EntityMatch], config: RetrievalConfig, gates: list[float] | None = None
) -> dict[str, tuple[float, str]]:
    """The reference: every entity sorted by boost (stable), written worst first."""
    topics = [m for m in matches if not is_name(m, config)]
    names = [m for m in matches if is_name(m, config)]
    gates = gates if gates is not None else [1.0] * len(names)
    entities = [(entity_boost(m, config), m.text, m.memory_ids) for m in topics]
    entities += [
        (entity_boost(m, config) * g, m.text, m.memory_ids)
        for m, g in zip(names, gates, strict=True)
    ]
    entities = sorted((e for e in entities if e[0] > 0.0), key=lambda e: -e[0])
    out: dict[str, tuple[float, str]] = {}
    for boost, text, ids in reversed(entities):
        out.update(dict.fromkeys(ids, (boost, text)))
    return out


def _matches(rng: random.Random, n: int, prefix: str) -> list[EntityMatch]:
    similarities = [0.7, 0.8, 0.9, 1.0]  # few values: many equal boosts
    return [
        EntityMatch(
            f"{prefix}{i}",
            rng.choice(similarities),
            rng.choice([1, 2, 5, 40]),
            rng.sample(IDS, rng.randint(0, 8)),
            proper=rng.random() < 0.3,
        )
        for i in range(n)
    ]


@pytest.mark.parametrize("seed", range(40))
def test_boosts_in_two_parts_are_the_one_pass_boosts(seed: int) -> None:
    rng = random.Random(seed)
    config = OPEN
    specific, hubs = _matches(rng, rng.randint(0, 12), "s"), _matches(rng, rng.randint(0, 6), "h")
    before = BoostKinds.of(specific, config)
    expected = _one_pass(specific + hubs, config)
    text = np.array([rng.random() for _ in IDS])
    assert _boosts(before.then(BoostKinds.of(hubs, config)), config, text) == expected
    assert _boosts(BoostKinds.of(specific + hubs, config), config, text) == expected


@pytest.mark.parametrize("seed", range(20))
def test_gated_names_replace_only_smaller_topic_boosts(seed: int) -> None:
    """With the names gated on the candidates' text scores, each memory keeps the one-pass
    answer with the gated name boosts (a closed gate removes a name's boost; an equal topic
    boost wins)."""
    rng = random.Random(seed)
    config = RetrievalConfig()
    specific, hubs = _matches(rng, 10, "s"), _matches(rng, 4, "h")
    kinds = BoostKinds.of(specific, config).then(BoostKinds.of(hubs, config))
    names = [m for m in specific + hubs if is_name(m, config)]
    text = np.array([rng.choice([0.1, 0.3, 0.5, 0.9]) for _ in IDS])
    scores = dict(zip(IDS, text.tolist(), strict=True))
    gates = [gate(m.memory_ids, scores, config) for m in names]
    assert len(gates) == len(names)
    assert _boosts(kinds, config, text) == _one_pass(specific + hubs, config, gates)
