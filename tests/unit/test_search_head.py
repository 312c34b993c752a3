"""A search after the query's vector ranks and lists only its best results (``rank``'s
``head``), adds the BM25 terms of the candidates known before the vector, builds each
result's parts once (``Fusion.explained``) and the hubs' boosts from weights computed before
the vector: the same results as the full ranking and the one-pass boosts."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from search_reads_cases import CASES, QUERIES, SMALL_POOL, results, seeded_sqlite

import linkmem.search
from linkmem.config import RetrievalConfig
from linkmem.entities.boost import CandidateBoosts, MatchedEntities, match_entities
from linkmem.rank import time_boost
from linkmem.rank.fusion import NO_BOOST, BoostKinds, EntityMatch, Fusion, fuse_arrays, rank
from linkmem.types import Scope


def _candidates(seed: int) -> tuple[list[str], np.ndarray, np.ndarray, list[EntityMatch]]:
    rng = random.Random(seed)
    ids = [f"m{i:04d}" for i in range(600)]
    rng.shuffle(ids)
    dense = np.array([rng.uniform(-0.2, 0.95) for _ in ids])
    dense[:40] = 0.5  # ties
    dense[40:70] = 1.0  # with their names' boosts: tied at the top
    bm25 = np.array([rng.choice([0.0, rng.uniform(0.1, 25.0)]) for _ in ids])
    bm25[40:70] = 40.0
    matches = [
        EntityMatch("Max", 0.97, 40, ids[40:60], proper=True),
        EntityMatch("Luna", 0.95, 30, [*ids[60:70], *rng.sample(ids, 20)], proper=True),
        EntityMatch("tea", 0.8, 300, rng.sample(ids, 300)),
    ]
    return ids, dense, bm25, matches


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_head_is_the_full_rankings_first(seed: int) -> None:
    """The best ``head`` results are the first ``head`` of all of them, ties at the cut in id
    order; the rows given and the names gated the same as without them."""
    config = RetrievalConfig()
    ids, dense, bm25, matches = _candidates(seed)
    hops = {mid: "Rome" for mid in random.Random(seed).sample(ids, 15)}
    full_boosts = CandidateBoosts(BoostKinds.of(matches, config), config)
    full = fuse_arrays(ids, dense, bm25, 4, full_boosts, config, hops)
    assert sum(score == full[9][1] for _, score in full) >= 5  # ties across a cut
    fusion = Fusion(4, config)
    rows = dict(zip(ids, range(len(ids))))
    for head in (1, 2, 10, 25, 30, 31, 200, 599, 600, 1000):
        boosts = CandidateBoosts(BoostKinds.of(matches, config), config)
        ranked = rank(fusion, ids, dense, fusion.bm25_terms(bm25), boosts, hops, rows, head)
        assert ranked == full[:head]
        assert [boosts.get(m) for m in ids] == [full_boosts.get(m) for m in ids]


def test_explained_is_the_parts_with_the_final_score() -> None:
    fusion = Fusion(3, RetrievalConfig())
    for dense, raw, boost, hop in [
        (0.71, 7.5, (0.2, "Max"), None),
        (0.31, 0.0, NO_BOOST, "Rome"),
        (-0.1, 12.0, (0.05, "tea"), "Rome"),
    ]:
        parts = fusion.parts(dense, raw, boost, hop)
        expected = replace(parts, score=0.625, time_boost=0.3)
        assert fusion.explained(dense, raw, boost, hop, 0.625, 0.3) == expected


@pytest.mark.parametrize("query", ["When did Max go to Lisbon?", "Max in May 2023", "Max"])
def test_rescore_asked_is_rescore_by_time(query: str) -> None:
    config = RetrievalConfig()
    records = {
        f"m{i}": _Dated(f"m{i}", f"Max went to Lisbon {i} days ago", f"2023-05-{i + 1:02d}")
        for i in range(20)
    }
    scored = [(f"m{i}", 0.9 - i / 50) for i in range(20)]

    def get(ids: Any) -> list[_Dated]:
        return [records[mid] for mid in ids]

    expected = time_boost.rescore_by_time(query, scored, get, config)
    asked = time_boost.query_time(query)
    if asked is None:
        assert expected == (scored, {})
    else:
        assert expected[1]  # boosted
        assert time_boost.rescore_asked(asked, scored, get, config) == expected


class _Dated:
    def __init__(self, id: str, text: str, created_at: str) -> None:
        self.id, self.text, self.created_at = id, text, created_at


@pytest.mark.parametrize("retrieval", [{}, SMALL_POOL])
def test_searches_rank_only_their_head_as_the_full_ranking(
    tmp_path: Path, retrieval: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real SQLite searches (the known candidates' fast path, filters' plain path, the hop,
    "when" and dated questions, thresholds) give the results of the full ranking."""
    queries = [*QUERIES, "When did Max walk the dog?", "Ana Lopez in May 2024", "Rare1 book"]
    heads = []
    original = linkmem.search.rank

    def recorded(*args: Any) -> Any:
        heads.append(args[-1])
        return original(*args)

    with seeded_sqlite(tmp_path / "m.db", **retrieval) as memory:
        monkeypatch.setattr(linkmem.search, "rank", recorded)
        cut = [results(memory, q, **case) for q in queries for case in CASES]
        monkeypatch.setattr(linkmem.search, "rank", lambda *args: original(*args[:-1], None))
        assert [results(memory, q, **case) for q in queries for case in CASES] == cut
    assert sum(map(len, cut)) > 200
    assert {10, 40, 200} <= set(heads)


def test_hubs_weighed_before_the_vector_boost_as_the_one_pass(tmp_path: Path) -> None:
    """The hubs' boosts computed before the query's vector (``match_entities``), their links
    read in two parts: each memory's boost, the names' gating and the widened memories are
    those of the matches weighed after the links (``MatchedEntities`` without the weights)."""
    config = replace(RetrievalConfig(), entity_pool_max_links=6)
    with seeded_sqlite(tmp_path / "m.db") as memory:
        store, scope = memory.store, Scope(user_id="alice")
        ids = [r["id"] for r in memory.get_all(user_id="alice", limit=200)["results"]]
        vectors = memory.embedder.embed_batch(["Max", "Lisbon", "Ana Lopez", "Person3", "Rare1"])
        seen = 0
        for query in range(1, 6):
            matched = match_entities(np.asarray(vectors[:query]), scope, store, config)
            plain = MatchedEntities(
                matched.similarity, matched.specific, matched.hubs, matched.widen
            )
            for entities in (matched, plain):
                entities.read_hub_links(store, ids[: 10 * query])
                entities.read_hub_links(store, ids[40:70])
            weighed, reference = matched.candidate_boosts(config), plain.candidate_boosts(config)
            text = np.array([(hash(mid) % 97) / 97 for mid in ids])
            array = weighed.boosts.array(ids, text)
            assert array.tolist() == reference.boosts.array(ids, text).tolist()
            assert [weighed.boosts.get(m) for m in ids] == [reference.boosts.get(m) for m in ids]
            assert (weighed.widen, weighed.matched) == (reference.widen, reference.matched)
            seen += len(matched.hubs) > 0 and bool(array.any())
        assert seen
