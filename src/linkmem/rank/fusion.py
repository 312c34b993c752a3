"""Fusion of the dense, keyword and entity signals into one score per result.

Each result's score depends only on its own signals and fixed constants, never on the other
results, so a threshold means the same thing for every query.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from linkmem.config import RetrievalConfig
from linkmem.rank.bm25 import squash
from linkmem.types import ScoreParts


def link_weight(n_linked: int, decay: float) -> float:
    """Entities linked to many memories say less about any one of them."""
    n = max(1, n_linked)
    return 1.0 / (1.0 + decay * (n - 1) ** 2)


def entity_boost(similarity: float, n_linked: int, config: RetrievalConfig) -> float:
    return similarity * config.entity_boost_weight * link_weight(n_linked, config.entity_link_decay)


def best_boosts(
    matches: Iterable[tuple[str, float, int, Iterable[str]]], config: RetrievalConfig
) -> dict[str, tuple[float, str]]:
    """``(entity_text, similarity, n_linked, memory_ids)`` -> each memory's best boost and the
    entity that gave it (boosts of several entities do not add up)."""
    best: dict[str, tuple[float, str]] = {}
    for text, similarity, n_linked, memory_ids in matches:
        boost = entity_boost(similarity, n_linked, config)
        for memory_id in memory_ids:
            if boost > best.get(memory_id, (0.0, ""))[0]:
                best[memory_id] = (boost, text)
    return best


def fuse(
    dense: float,
    bm25_raw: float,
    n_query_terms: int,
    boost: tuple[float, str | None],
    config: RetrievalConfig,
) -> ScoreParts:
    """One result's score parts; ``score`` lies in 0..1."""
    bm25 = squash(
        bm25_raw,
        n_query_terms,
        config.bm25_midpoint_base,
        config.bm25_midpoint_per_term,
        config.bm25_midpoint_cap,
        config.bm25_steepness,
    )
    base = config.dense_weight * max(0.0, dense) + config.bm25_weight * bm25
    total = (base + boost[0]) / config.max_score
    return ScoreParts(dense, bm25_raw, bm25, boost[0], boost[1], min(1.0, total))


def fuse_all(
    candidates: Iterable[str],
    dense: Mapping[str, float],
    bm25_raw: Mapping[str, float],
    n_query_terms: int,
    boosts: Mapping[str, tuple[float, str]],
    config: RetrievalConfig,
) -> list[tuple[str, ScoreParts]]:
    """Score every candidate and sort best first (ties keep a stable id order)."""
    scored = [
        (
            mid,
            fuse(
                dense.get(mid, 0.0),
                bm25_raw.get(mid, 0.0),
                n_query_terms,
                boosts.get(mid, (0.0, None)),
                config,
            ),
        )
        for mid in sorted(set(candidates))
    ]
    scored.sort(key=lambda item: -item[1].score)
    return scored
