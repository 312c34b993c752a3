"""The entity boosts computed the plain way, a memory at a time, as the reference the tests hold
``entities.boost.CandidateBoosts`` (the arrays a search fuses) to: each memory's greatest
boost (boosts of several entities do not add up), the first entity among equals (topics, then
names, each in the order given), a boost of 0 boosting nothing; each name's boost gated by
``name_gate`` of the best text score among its memories minus the best among the other
candidates; the boost of the kind asked for added on top."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from linkmem.config import RetrievalConfig
from linkmem.entities.boost import ASKED_ENTITY
from linkmem.rank.fusion import NO_BOOST, Boost, BoostKinds, name_gate

Entity = tuple[float, str, Iterable[str]]


def best_of_each(entities: Iterable[Entity]) -> dict[str, tuple[float, str]]:
    """memory id -> the greatest (boost, entity text) of ``entities``; the first among equals."""
    best: dict[str, tuple[float, str]] = {}
    for boost, text, memory_ids in entities:
        for memory_id in memory_ids:
            if boost > best.get(memory_id, NO_BOOST)[0]:
                best[memory_id] = (boost, text)
    return best


def gate(memory_ids: Iterable[str], text: Mapping[str, float], config: RetrievalConfig) -> float:
    """A name's gate over the candidates ``text`` (candidate id -> text score)."""
    own = set(memory_ids)
    best_own = max((t for m, t in text.items() if m in own), default=0.0)
    best_other = max((t for m, t in text.items() if m not in own), default=0.0)
    return name_gate(best_own - best_other, config)


def reference_boosts(
    kinds: BoostKinds,
    config: RetrievalConfig,
    text: Mapping[str, float],
    asked: Mapping[str, float] | None = None,
) -> dict[str, tuple[float, str]]:
    """Each memory's boost and entity, the names gated on the candidates ``text``."""
    gated = [(b * gate(ids, text, config), name, ids) for b, name, ids in kinds.names]
    best = best_of_each([*kinds.topics, *gated])
    for memory_id, extra in (asked or {}).items():
        boost, entity = best.get(memory_id, NO_BOOST)
        best[memory_id] = (boost + extra, entity or ASKED_ENTITY)
    return best


class ReferenceBoosts:
    """``reference_boosts`` read as the fusion reads ``CandidateBoosts``: ``array`` and ``get``."""

    def __init__(
        self, kinds: BoostKinds, config: RetrievalConfig, asked: Mapping[str, float] | None
    ) -> None:
        self._kinds, self._config, self._asked = kinds, config, asked
        self._last: dict[str, tuple[float, str]] = {}

    def array(
        self, ids: list[str], text: np.ndarray, rows: Mapping[str, int] | None = None
    ) -> np.ndarray:
        scores = dict(zip(ids, text.tolist(), strict=True))
        self._last = reference_boosts(self._kinds, self._config, scores, self._asked)
        return np.array([self._last.get(m, NO_BOOST)[0] for m in ids], dtype=np.float64)

    def get(self, memory_id: str, default: Boost = NO_BOOST) -> Boost:
        return self._last.get(memory_id, default)
