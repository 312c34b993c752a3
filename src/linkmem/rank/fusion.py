"""Fusion of the dense, keyword and entity signals into one score per result.

Each result's score depends only on its own signals and fixed constants, never on how the
other results scored, so a threshold means the same thing for every query. The one link to
other results is the entity hop: whether a memory is reached from the best results' entities.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from linkmem.config import RetrievalConfig
from linkmem.rank.bm25 import squash
from linkmem.rank.calibration import calibrated_cosine
from linkmem.types import ScoreParts


def link_weight(n_linked: int, decay: float) -> float:
    """Entities linked to many memories say less about any one of them."""
    n = max(1, n_linked)
    return 1.0 / (1.0 + decay * (n - 1) ** 2)


@dataclass(frozen=True)
class EntityMatch:
    """A stored entity the query matched, and the memories of it that may be boosted."""

    text: str
    similarity: float
    n_linked: int
    memory_ids: Iterable[str]
    proper: bool = False


def entity_boost(match: EntityMatch, config: RetrievalConfig) -> float:
    """The query names this entity (a proper name matched as itself): every memory linked
    to it is about it, however many there are. Otherwise the boost fades with link count."""
    similarity = calibrated_cosine(match.similarity, config.cosine_scale)
    if match.proper and match.similarity >= config.name_match_similarity:
        return similarity * config.name_boost_weight
    decay = link_weight(match.n_linked, config.entity_link_decay)
    return similarity * config.entity_boost_weight * decay


def best_boosts(
    matches: Iterable[EntityMatch], config: RetrievalConfig
) -> dict[str, tuple[float, str]]:
    """Each memory's best boost and the entity that gave it (boosts of several entities do
    not add up)."""
    best: dict[str, tuple[float, str]] = {}
    for match in matches:
        boost, text = entity_boost(match, config), match.text
        for memory_id in match.memory_ids:
            if boost > best.get(memory_id, (0.0, ""))[0]:
                best[memory_id] = (boost, text)
    return best


Boost = tuple[float, str | None]
NO_BOOST: Boost = (0.0, None)


def fuse(
    dense: float,
    bm25_raw: float,
    n_query_terms: int,
    boost: Boost,
    config: RetrievalConfig,
    hop_entity: str | None = None,
) -> ScoreParts:
    """One result's score parts; ``score`` lies in 0..1. A memory reached by the entity hop
    (``hop_entity``) gains ``hop_weight`` times its cosine: a hop amplifies a memory that
    looks like the question, it does not promote one that does not."""
    bm25 = squash(
        bm25_raw,
        n_query_terms,
        config.bm25_midpoint_base,
        config.bm25_midpoint_per_term,
        config.bm25_midpoint_cap,
        config.bm25_steepness,
    )
    cosine = calibrated_cosine(dense, config.cosine_scale)
    base = config.dense_weight * cosine + config.bm25_weight * bm25
    hop = config.hop_weight * cosine if hop_entity else 0.0
    total = min(1.0, (base + boost[0] + hop) / config.max_score)
    return ScoreParts(dense, bm25_raw, bm25, boost[0], boost[1], total, hop, hop_entity)


def fuse_all(
    candidates: Iterable[str],
    dense: Mapping[str, float],
    bm25_raw: Mapping[str, float],
    n_query_terms: int,
    boosts: Mapping[str, tuple[float, str]],
    config: RetrievalConfig,
    hops: Mapping[str, str] | None = None,
) -> list[tuple[str, ScoreParts]]:
    """Score every candidate and sort best first (ties keep a stable id order). ``hops``:
    memory id -> the entity the hop followed to it."""
    hops = hops or {}
    scored = [
        (
            mid,
            fuse(
                dense.get(mid, 0.0),
                bm25_raw.get(mid, 0.0),
                n_query_terms,
                boosts.get(mid, NO_BOOST),
                config,
                hops.get(mid),
            ),
        )
        for mid in sorted(set(candidates))
    ]
    scored.sort(key=lambda item: -item[1].score)
    return scored
