"""``fuse_arrays`` scores candidates as arrays: each score is ``Fusion.score``'s, bit for bit."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest
from helpers import fuse_by_id

from linkmem.config import RetrievalConfig
from linkmem.rank.fusion import NO_BOOST, Fusion, fuse_arrays


def _candidates(seed: int) -> tuple[list[str], dict, dict, dict, dict]:
    rng = random.Random(seed)
    ids = [f"m{i:04d}" for i in range(600)]
    dense = {mid: rng.uniform(-0.2, 0.95) for mid in ids}
    dense.update({mid: 0.5 for mid in ids[:40]})  # ties: kept in id order
    bm25 = {mid: rng.choice([0.0, rng.uniform(0.1, 25.0)]) for mid in ids}
    boosts = {mid: (rng.uniform(0.0, 0.3), "Max") for mid in rng.sample(ids, 150)}
    hops = {mid: "Luna" for mid in rng.sample(ids, 20)}
    return ids, dense, bm25, boosts, hops


@pytest.mark.parametrize("scale", [1.0, 4.36])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_each_score_is_the_scalar_score_bit_for_bit(scale: float, seed: int) -> None:
    config = replace(RetrievalConfig(), cosine_scale=scale)
    ids, dense, bm25, boosts, hops = _candidates(seed)
    fusion = Fusion(5, config)
    expected = [
        (mid, fusion.score(dense[mid], bm25[mid], boosts.get(mid, NO_BOOST), hops.get(mid)))
        for mid in sorted(ids)
    ]
    expected.sort(key=lambda item: -item[1])
    assert fuse_by_id(ids, dense, bm25, 5, boosts, config, hops) == expected


def test_no_candidates_score_nothing() -> None:
    assert fuse_by_id([], {}, {}, 3, {}, RetrievalConfig()) == []


@pytest.mark.parametrize("seed", [1, 2])
def test_candidates_in_any_order_rank_ties_by_id(seed: int) -> None:
    """``fuse_arrays`` takes its candidates in any order: equal scores still come in id
    order, so the ranking is that of the sorted ids."""
    config = RetrievalConfig()
    ids, dense, bm25, boosts, hops = _candidates(seed)
    dense.update({mid: 1.0 for mid in ids[100:130]})  # with boosts: clamped at 1.0, tied
    boosts.update({mid: (0.9, "Max") for mid in ids[100:130]})
    expected = fuse_by_id(sorted(ids), dense, bm25, 5, boosts, config, hops)
    shuffled = random.Random(seed).sample(ids, len(ids))
    cosines = np.array([dense[mid] for mid in shuffled])
    raw = np.array([bm25[mid] for mid in shuffled])
    assert fuse_arrays(shuffled, cosines, raw, 5, boosts, config, hops) == expected
    assert fuse_by_id(shuffled, dense, bm25, 5, boosts, config, hops) == expected
    assert sum(score == 1.0 for _, score in expected) >= 10
