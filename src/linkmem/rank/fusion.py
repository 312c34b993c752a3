"""Fusion of the dense, keyword and entity signals into one score per result.

Each result's score depends only on its own signals and fixed constants, never on how the
other results scored, so a threshold means the same thing for every query. Two links to other
results: the entity hop (whether a memory is reached from the best results' entities) and the
name gate (whether a name's memories match the question nearly as well as the best other
candidate, ``name_gate``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter

import numpy as np

from linkmem.config import RetrievalConfig
from linkmem.rank.bm25 import squasher
from linkmem.rank.calibration import calibrated_cosine, calibrated_cosines
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
    if is_name(match, config):
        return similarity * config.name_boost_weight
    decay = link_weight(match.n_linked, config.entity_link_decay)
    return similarity * config.entity_boost_weight * decay


def is_name(match: EntityMatch, config: RetrievalConfig) -> bool:
    """The query names this entity: a proper name matched as itself."""
    return match.proper and match.similarity >= config.name_match_similarity


@dataclass(frozen=True)
class BoostKinds:
    """Entities' boosts, (boost, entity text, memory ids) each, by kind: the topics, with
    each memory's best topic boost (``topic_best``), and the names, which
    ``entities.boost.CandidateBoosts`` gates on a fuse's candidates. A search builds the
    specific entities' before the query's vector, the hubs' after it (``then``)."""

    topics: list[tuple[float, str, list[str]]]
    names: list[tuple[float, str, list[str]]]
    topic_best: dict[str, tuple[float, str]]

    @classmethod
    def of(cls, matches: Iterable[EntityMatch], config: RetrievalConfig) -> BoostKinds:
        return cls.weighed(
            (entity_boost(m, config), is_name(m, config), m.text, m.memory_ids) for m in matches
        )

    @classmethod
    def weighed(cls, entities: Iterable[tuple[float, bool, str, Iterable[str]]]) -> BoostKinds:
        """``of`` the entities' (boost, whether a name, text, memory ids): the boosts computed
        earlier (a search weighs its hubs before the query's vector, their links after)."""
        topics: list[tuple[float, str, list[str]]] = []
        names: list[tuple[float, str, list[str]]] = []
        for boost, name, text, memory_ids in entities:
            (names if name else topics).append((boost, text, list(memory_ids)))
        return cls(topics, names, _best_of(topics))

    def after(self, topic_best: dict[str, tuple[float, str]]) -> dict[str, tuple[float, str]]:
        """``topic_best`` (of entities listed before these) with these topics' merged in: the
        ``topic_best`` of ``then``."""
        return _after(topic_best, self.topic_best)

    def then(self, later: BoostKinds) -> BoostKinds:
        """These entities followed by ``later``'s: the best of both, the first among equals."""
        topic_best = _after(self.topic_best, later.topic_best)
        return BoostKinds(self.topics + later.topics, self.names + later.names, topic_best)


def name_gate(margin: float, config: RetrievalConfig) -> float:
    """0..1: how much of a name's boost applies, from ``margin``, the best text score (dense +
    squashed BM25) among the memories linked to the name minus the best among the other
    candidates. A question that names the wrong person ("What did Caroline realise after her
    charity race?" when Melanie ran it) matches the other person's memories best."""
    low = config.name_gate_margin - config.name_gate_width / 2
    if config.name_gate_width <= 0:
        return 1.0 if margin >= config.name_gate_margin else 0.0
    return min(1.0, max(0.0, (margin - low) / config.name_gate_width))


def name_gates(
    names: list[tuple[float, str, list[str]]],
    ids: list[str],
    text: np.ndarray,
    rows: Mapping[str, int] | None,
    config: RetrievalConfig,
) -> list[tuple[float, list[int]]]:
    """Each name's ``name_gate`` over the candidates ``ids`` (distinct; text scores ``text``;
    ``rows``: each id's index, when the caller has them) and the rows of its memories among
    them."""
    row = rows if rows is not None else dict(zip(ids, range(len(ids))))
    best = int(text.argmax())  # the best other candidate, unless it is the name's own
    out = []
    for _, _, memory_ids in names:
        own = {r for r in map(row.get, memory_ids) if r is not None}
        best_own = float(text[list(own)].max()) if own else 0.0
        if best not in own:
            best_other = float(text[best])
        elif len(own) < len(ids):
            others = np.ones(len(ids), dtype=bool)
            others[list(own)] = False
            best_other = float(text[others].max())
        else:
            best_other = 0.0
        out.append((name_gate(best_own - best_other, config), list(own)))
    return out


def _best_of(entities: list[tuple[float, str, list[str]]]) -> dict[str, tuple[float, str]]:
    """memory id -> the best (boost, entity text) of ``entities``, the first among equals: the
    entities are written worst first, so the best is written last; a boost of 0 is left out."""
    best: dict[str, tuple[float, str]] = {}
    kept = [entity for entity in entities if entity[0] > 0.0]
    kept.sort(key=lambda entity: -entity[0])  # stable: the first among equals first
    for boost, text, memory_ids in reversed(kept):
        best.update(dict.fromkeys(memory_ids, (boost, text)))
    return best


def _after(
    first: dict[str, tuple[float, str]], later: dict[str, tuple[float, str]]
) -> dict[str, tuple[float, str]]:
    """The best boosts of entities listed in ``first`` and then in ``later``: a later entity's
    boost replaces an earlier one's only when greater (the first among equals wins)."""
    if not first or not later:
        return later or first
    get = first.get
    out = dict(first)
    out.update({m: b for m, b in later.items() if b[0] > get(m, NO_BOOST)[0]})
    return out


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

    def explained(
        self,
        dense: float,
        bm25_raw: float,
        boost: Boost,
        hop_entity: str | None,
        score: float,
        time_boost: float,
    ) -> ScoreParts:
        """``parts`` with the result's final ``score`` (after the time signal) and its
        ``time_boost``: one ``ScoreParts`` built, not ``parts`` and a replaced copy."""
        bm25 = self._squash(bm25_raw)
        hop = self._hop_weight * calibrated_cosine(dense, self._scale) if hop_entity else 0.0
        return ScoreParts(
            dense, bm25_raw, bm25, boost[0], boost[1], score, hop, hop_entity, time_boost
        )

    def score(
        self, dense: float, bm25_raw: float, boost: Boost, hop_entity: str | None = None
    ) -> float:
        """``parts(...).score`` without building the parts (a search scores hundreds)."""
        return self._components(dense, bm25_raw, boost[0], hop_entity)[2]

    def total(self, text: float, dense: float, boost: float, hop_entity: str | None) -> float:
        """``score`` from the ``text`` part already computed."""
        hop = self._hop_weight * calibrated_cosine(dense, self._scale) if hop_entity else 0.0
        return min(1.0, (text + boost + hop) / self._max_score)

    def text(self, dense: float, bm25_raw: float) -> float:
        """The text part of the score (dense + squashed BM25), before the division."""
        cosine = calibrated_cosine(dense, self._scale)
        return self._dense_weight * cosine + self._bm25_weight * self._squash(bm25_raw)

    def _components(
        self, dense: float, bm25_raw: float, boost: float, hop_entity: str | None
    ) -> tuple[float, float, float]:
        bm25 = self._squash(bm25_raw)
        cosine = calibrated_cosine(dense, self._scale)
        base = self._dense_weight * cosine + self._bm25_weight * bm25
        hop = self._hop_weight * cosine if hop_entity else 0.0
        return bm25, hop, min(1.0, (base + boost + hop) / self._max_score)

    # ``text`` and ``total`` of many results at once (``fuse_arrays``): the same operations.
    def cosines(self, dense: np.ndarray) -> np.ndarray:
        """``calibrated_cosine`` of each of ``dense``."""
        return calibrated_cosines(dense, self._scale)

    def texts(self, cosines: np.ndarray, bm25_raw: np.ndarray) -> np.ndarray:
        """``text`` of each result, from its calibrated cosine (``cosines``) and raw BM25."""
        return self.texts_of_terms(cosines, self.bm25_terms(bm25_raw))

    def texts_of_terms(self, cosines: np.ndarray, bm25_terms: np.ndarray) -> np.ndarray:
        """``texts`` from the BM25 terms (``bm25_terms``)."""
        return self._dense_weight * cosines + bm25_terms

    def bm25_terms(self, bm25_raw: np.ndarray) -> np.ndarray:
        """The BM25 term of each result's ``text`` (a search computes the candidates known
        before the query's vector ahead, ``rank``)."""
        return self._bm25_weight * self._squash.many(bm25_raw)

    def totals(
        self, text: np.ndarray, cosines: np.ndarray, boost: np.ndarray, hopped: np.ndarray
    ) -> np.ndarray:
        """``total`` of each result; ``hopped``: whether the hop reached it."""
        hop = np.where(hopped, self._hop_weight * cosines, 0.0)
        return np.minimum(1.0, (text + boost + hop) / self._max_score)


def fuse_arrays(
    ids: list[str],
    dense: np.ndarray,
    bm25_raw: np.ndarray,
    n_query_terms: int,
    boosts: Mapping[str, tuple[float, str]],
    config: RetrievalConfig,
    hops: Mapping[str, str] | None = None,
) -> list[tuple[str, float]]:
    """Every candidate's score, best first (equal scores in id order); ``Fusion.parts`` explains
    one. ``ids``: the candidates (distinct, in any order), whose raw cosines and BM25 are
    ``dense`` and ``bm25_raw`` (float64, one per id); ``hops``: memory id -> the entity the hop
    followed to it; ``boosts``: memory id -> (boost, entity), or a search's
    ``entities.boost.CandidateBoosts``, whose names are gated on these candidates' text
    scores. Scored as arrays, each step the same float64 operation as ``Fusion.score``'s, so
    the scores are its bit for bit."""
    fusion = Fusion(n_query_terms, config)
    return rank(fusion, ids, dense, fusion.bm25_terms(bm25_raw), boosts, hops)


def rank(
    fusion: Fusion,
    ids: list[str],
    dense: np.ndarray,
    bm25_terms: np.ndarray,
    boosts: Mapping[str, tuple[float, str]],
    hops: Mapping[str, str] | None = None,
    rows: Mapping[str, int] | None = None,
    head: int | None = None,
) -> list[tuple[str, float]]:
    """``fuse_arrays`` from the candidates' BM25 terms (``Fusion.bm25_terms``, which a search
    computes before the query's vector) and, when given, each id's index in ``ids``
    (``rows``); ``head``: only the best ``head`` results (the same as the first ``head`` of
    all of them), so the others are never sorted or listed."""
    n = len(ids)
    cosines = fusion.cosines(dense)
    text = fusion.texts_of_terms(cosines, bm25_terms)
    array = getattr(boosts, "array", None)  # ``entities.boost.CandidateBoosts``
    if array is not None:
        boost = array(ids, text, rows)
    else:
        boost = np.fromiter(map(_first, map(boosts.get, ids, repeat(NO_BOOST))), np.float64, n)
    hopped = np.zeros(n, dtype=bool)
    if hops:
        hopped = np.fromiter(map(bool, map(hops.get, ids)), bool, n)
    total = fusion.totals(text, cosines, boost, hopped)
    order = _best_first(total, head)
    ranked, best = list(map(ids.__getitem__, order.tolist())), total[order]
    _ties_by_id(ranked, best)
    if head is not None:
        del ranked[head:]
        best = best[:head]
    return list(zip(ranked, best.tolist(), strict=True))


def _best_first(total: np.ndarray, head: int | None) -> np.ndarray:
    """The indices of ``total``, best first (a stable sort: equal totals in index order); with
    ``head``, only those of the ``head`` best and of any equal to the worst of them, which are
    the full order's first ones (ties at the cut are all kept, for ``_ties_by_id``)."""
    n = len(total)
    if head is None or head >= n:
        return np.argsort(-total, kind="stable")
    cut = np.partition(total, n - head)[n - head]  # the head-th best total
    top = np.flatnonzero(total >= cut)
    return top[np.argsort(-total[top], kind="stable")]


def _ties_by_id(ranked: list[str], scores: np.ndarray) -> None:
    """Put each run of equal ``scores`` (best first) in id order, in place in ``ranked``."""
    differ = scores[1:] != scores[:-1]
    if differ.all():  # no ties: most searches
        return
    ends = np.flatnonzero(differ) + 1
    tied = np.flatnonzero(np.diff(np.concatenate([[0], ends, [len(scores)]])) > 1)
    if not len(tied):
        return
    starts = np.concatenate([[0], ends])
    stops = np.concatenate([ends, [len(scores)]])
    for start, stop in zip(starts[tied].tolist(), stops[tied].tolist(), strict=True):
        ranked[start:stop] = sorted(ranked[start:stop])


_first = itemgetter(0)
