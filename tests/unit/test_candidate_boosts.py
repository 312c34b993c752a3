"""``CandidateBoosts`` (the entity boosts a search fuses, as an array over its candidates) give
the values and entities of the plain computation (``reference_boosts``) gated on the same
candidates: topics and names with equal boosts (the first entity among equals), gates shut,
open and in between, the kind asked for added on top, topic boosts given ahead for the first
candidates (``align``); and real searches fuse the same scores and parts as with the plain
computation."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from reference_boosts import ReferenceBoosts, reference_boosts
from search_reads_cases import CASES, QUERIES, results, seeded_sqlite

import linkmem.search
from linkmem.config import RetrievalConfig
from linkmem.entities.boost import CandidateBoosts, EntitySignal, MatchedEntities
from linkmem.extract.base import EntityKind
from linkmem.rank.fusion import NO_BOOST, BoostKinds, EntityMatch, name_gates

PROPER = EntityKind.PROPER


def random_kinds(rng: random.Random, memories: list[str]) -> BoostKinds:
    """Topics and names over ``memories``, boosts drawn from a few values (ties), some 0."""
    values = [0.0, 0.05, 0.1, 0.1, 0.2, 0.35]
    entities = [
        (
            rng.choice(values),
            rng.random() < 0.4,
            f"entity{i}",
            rng.sample(memories, rng.randint(1, 30)),
        )
        for i in range(rng.randint(0, 9))
    ]
    return BoostKinds.weighed(entities)


def test_candidate_boosts_are_the_plain_computation() -> None:
    config = RetrievalConfig()
    rng = random.Random(3)
    memories = [f"m{i:03d}" for i in range(120)]
    partial = opened = shut = 0
    for trial in range(400):
        kinds = random_kinds(rng, memories)
        asked = {m: rng.choice([0.05, 0.12]) for m in rng.sample(memories, rng.randint(0, 8))}
        ids = rng.sample(memories, rng.randint(1, 90))
        text = np.array([rng.choice([0.2, 0.4, rng.random()]) for _ in ids])
        rows = dict(zip(ids, range(len(ids)))) if trial % 2 else None
        reference = reference_boosts(kinds, config, dict(zip(ids, text.tolist())), asked)
        boosts = CandidateBoosts(kinds, config, asked)
        if trial % 3 == 0:  # the first candidates' topics given ahead, as a search does
            known = rng.randint(0, len(ids))
            ahead = [kinds.topic_best.get(m, NO_BOOST)[0] for m in ids[:known]]
            boosts.align(ids, np.array(ahead, dtype=np.float64))
        array = boosts.array(ids, text, rows)
        assert array.tolist() == [reference.get(m, NO_BOOST)[0] for m in ids]
        assert [boosts.get(m) for m in ids] == [reference.get(m, NO_BOOST) for m in ids]
        for gate, _ in name_gates(kinds.names, ids, text, rows, config):
            partial += 0.0 < gate < 1.0
            opened += gate == 1.0
            shut += gate == 0.0
    assert partial and opened and shut


def test_an_empty_signal_boosts_nothing_but_the_kind_asked() -> None:
    config = RetrievalConfig()
    ids = ["a", "b", "c"]
    text = np.array([0.3, 0.2, 0.1])
    empty = MatchedEntities({}, [], {}, set()).candidate_boosts(config)
    assert empty.boosts.array(ids, text).tolist() == [0.0, 0.0, 0.0]
    assert empty.boosts.get("a") == NO_BOOST
    asked = MatchedEntities({}, [], {}, set()).candidate_boosts(config, {"b": 0.25})
    assert asked.boosts.array(ids, text).tolist() == [0.0, 0.25, 0.0]
    assert asked.boosts.get("b") == (0.25, "(the kind asked for)")


def test_searches_fuse_the_same_as_the_plain_computation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real SQLite searches (the hop, filters, thresholds, each signal off) with
    ``CandidateBoosts`` and with the plain computation (``ReferenceBoosts``) of the entities
    matched, the hubs' with the links read, all weighed at once (no topic boosts given ahead,
    none merged in two parts): the same results and parts."""
    queries = [*QUERIES, "Rare1 Max book", "Rare3 and Lisbon", "What cities has Max seen?"]
    candidate_boosts = MatchedEntities.candidate_boosts

    def plain(
        self: MatchedEntities, config: RetrievalConfig, asked: dict[str, float] | None = None
    ) -> EntitySignal:
        signal = candidate_boosts(self, config, asked)
        links = self._hub_links
        hubs = [
            EntityMatch(e.text, self.similarity[i], e.link_count, links[i], e.kind == PROPER)
            for i, e in self.hubs.items()
            if i in links
        ]
        kinds = BoostKinds.of([*self.specific, *hubs], config)
        return EntitySignal(ReferenceBoosts(kinds, config, asked), signal.widen, signal.matched)

    with seeded_sqlite(tmp_path / "m.db") as memory:
        arrays = [results(memory, q, **case) for q in queries for case in CASES]
        monkeypatch.setattr(MatchedEntities, "candidate_boosts", plain)
        monkeypatch.setattr(linkmem.search.MatchedEntities, "topic_best", None)
        plains = [results(memory, q, **case) for q in queries for case in CASES]
    assert arrays == plains
    parts = [p for found in arrays for *_, p in found]
    assert len(parts) > 200
    assert any(p["entity"] for p in parts) and any(p["hop_entity"] for p in parts)
