"""Fusion of the dense, keyword and entity signals into one score per result.

Each result's score depends only on its own signals and fixed constants, never on how the
other results scored, so a threshold means the same thing for every query. The one link to
other results is the entity hop: whether a memory is reached from the best results' entities.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from linkmem.config import RetrievalConfig
from linkmem.rank.bm25 import squasher
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
    return Fusion(n_query_terms, config).parts(dense, bm25_raw, boost, hop_entity)


class Fusion:
    """``fuse`` for one query: the constants it needs are looked up once for all results."""

    def __init__(self, n_query_terms: int, config: RetrievalConfig) -> None:
        self._squash = squasher(
            n_query_terms,
            config.bm25_midpoint_base,
            config.bm25_midpoint_per_term,
            config.bm25_midpoint_cap,
            config.bm25_steepness,
        )
        self._scale = config.cosine_scale
        self._dense_weight = config.dense_weight
        self._bm25_weight = config.bm25_weight
        self._hop_weight = config.hop_weight
        self._max_score = config.max_score

    def parts(
        self, dense: float, bm25_raw: float, boost: Boost, hop_entity: str | None = None
    ) -> ScoreParts:
        bm25, hop, total = self._components(dense, bm25_raw, boost[0], hop_entity)
        return ScoreParts(dense, bm25_raw, bm25, boost[0], boost[1], total, hop, hop_entity)

    def score(
        self, dense: float, bm25_raw: float, boost: Boost, hop_entity: str | None = None
    ) -> float:
        """``parts(...).score`` without building the parts (a search scores hundreds)."""
        return self._components(dense, bm25_raw, boost[0], hop_entity)[2]

    def _components(
        self, dense: float, bm25_raw: float, boost: float, hop_entity: str | None
    ) -> tuple[float, float, float]:
        bm25 = self._squash(bm25_raw)
        cosine = calibrated_cosine(dense, self._scale)
        base = self._dense_weight * cosine + self._bm25_weight * bm25
        hop = self._hop_weight * cosine if hop_entity else 0.0
        return bm25, hop, min(1.0, (base + boost + hop) / self._max_score)


def fuse_all(
    candidates: Iterable[str],
    dense: Mapping[str, float],
    bm25_raw: Mapping[str, float],
    n_query_terms: int,
    boosts: Mapping[str, tuple[float, str]],
    config: RetrievalConfig,
    hops: Mapping[str, str] | None = None,
) -> list[tuple[str, float]]:
    """Every candidate's score, best first (ties keep a stable id order); ``Fusion.parts``
    explains one. ``hops``: memory id -> the entity the hop followed to it."""
    hops = hops or {}
    score = Fusion(n_query_terms, config).score
    scored = [
        (
            mid,
            score(
                dense.get(mid, 0.0),
                bm25_raw.get(mid, 0.0),
                boosts.get(mid, NO_BOOST),
                hops.get(mid),
            ),
        )
        for mid in sorted(set(candidates))
    ]
    scored.sort(key=lambda item: -item[1])
    return scored
