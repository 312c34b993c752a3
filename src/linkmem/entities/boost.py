"""Read path: the query's entities -> similar entities in scope -> boosts for linked memories."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import repeat
from operator import itemgetter

import numpy as np

from linkmem.config import RetrievalConfig
from linkmem.extract.base import EntityKind
from linkmem.rank.fusion import (
    NO_BOOST,
    Boost,
    BoostKinds,
    EntityMatch,
    entity_boost,
    is_name,
    name_gates,
)
from linkmem.store.base import Store
from linkmem.types import EntityRecord, Scope


@dataclass(frozen=True)
class EntitySignal:
    """``boosts``: memory id -> (best boost, the stored entity that gave it), empty when the
    entity signal is off, else ``CandidateBoosts`` (the same for a fuse's candidates).
    ``widen``: the memories that join the candidate pool because a specific entity links
    them. ``matched``: the ids of the stored entities the query matched."""

    boosts: Mapping[str, tuple[float, str]] | CandidateBoosts = field(default_factory=dict)
    widen: set[str] = field(default_factory=set)
    matched: frozenset[str] = frozenset()


def match_entities(
    entity_vectors: np.ndarray, scope: Scope, store: Store, config: RetrievalConfig
) -> MatchedEntities:
    """The query's entities (``entity_vectors``, one row each) matched in the scope's entity
    collection. Specific entities (at most ``entity_pool_max_links`` links) boost and pull in
    all their memories; hub entities only boost the candidates other signals found and the
    memories pulled in (``MatchedEntities.read_hub_links``), so their long link lists are
    never read. Needs no candidates: a search does it while the query's embedding runs
    (``linkmem.search``)."""
    similarity = _similar_entities(entity_vectors, scope, store, config)
    if not similarity:
        return MatchedEntities(similarity, [], {}, set())
    records = store.get_entities(list(similarity))
    specific = [e for e in records if e.link_count <= config.entity_pool_max_links]
    hubs = {e.id: e for e in records if e.link_count > config.entity_pool_max_links}
    linked = store.memories_of_entities([e.id for e in specific])
    matches = [_match(e, similarity, linked.get(e.id, [])) for e in specific]
    widen = {mid for m in matches for mid in m.memory_ids}
    kinds = BoostKinds.of(matches, config)
    weights = {i: _weight(_match(e, similarity, []), config) for i, e in hubs.items()}
    return MatchedEntities(similarity, matches, hubs, widen, kinds, weights)


class MatchedEntities:
    """The stored entities a query matched: the specific ones with their memories (``widen``)
    and the hubs, whose links are read only to the candidates (``read_hub_links``, in as
    many parts as the candidates arrive)."""

    def __init__(
        self,
        similarity: dict[str, float],
        specific: list[EntityMatch],
        hubs: dict[str, EntityRecord],
        widen: set[str],
        specific_boosts: BoostKinds | None = None,
        hub_weights: dict[str, tuple[float, bool]] | None = None,
    ) -> None:
        self.similarity = similarity
        self.specific = specific
        # The specific entities' boosts, built before the query's vector (``BoostKinds.of``),
        # and each hub's boost and whether it is a name (``_weight``), which need no links.
        self._specific_boosts = specific_boosts
        self._hub_weights = hub_weights
        # Each memory's best topic boost, the hubs' merged in as their links are read: a
        # memory's links all come in one read, so the read before the vector is merged then.
        self._topic_best = specific_boosts.topic_best if specific_boosts is not None else None
        self.hubs = hubs
        self.widen = widen
        self._asked: set[str] = set()
        self._hub_links: dict[str, list[str]] = {}
        self._hub_links_read = False

    def read_hub_links(self, store: Store, candidates: Iterable[str]) -> None:
        """Read the hubs' links to ``candidates`` and the widened memories not asked before."""
        widen = self.widen if not self._hub_links_read else ()  # asked at the first read
        ids = [mid for mid in dict.fromkeys([*candidates, *widen]) if mid not in self._asked]
        self._hub_links_read = True
        if not self.hubs or not ids:
            return
        self._asked.update(ids)
        read = _links_among(store, list(self.hubs), ids)
        for entity_id, linked in read.items():
            self._hub_links.setdefault(entity_id, []).extend(linked)
        if self._topic_best is not None and self._hub_weights is not None:
            weights = self._hub_weights
            kinds = BoostKinds.weighed(
                (*weights[i], e.text, read[i]) for i, e in self.hubs.items() if i in read
            )
            self._topic_best = kinds.after(self._topic_best)

    def candidate_boosts(
        self, config: RetrievalConfig, asked: dict[str, float] | None = None
    ) -> EntitySignal:
        """The boosts of the specific entities and of the hubs (read so far), plus ``asked``
        (memory id -> the boost of naming a thing of the kind the question asks for,
        ``entities.asked``), which adds to a memory's entity boost: ``CandidateBoosts``, which
        the fusion reads as an array over its candidates (no dict of every boosted memory)."""
        if not self.similarity:
            return EntitySignal(CandidateBoosts(BoostKinds([], [], {}), config, asked))
        kinds = self._kinds(config)
        boosts = CandidateBoosts(kinds, config, asked)
        return EntitySignal(boosts, self.widen, frozenset(self.similarity))

    @property
    def topic_best(self) -> dict[str, tuple[float, str]] | None:
        """Each memory's best topic boost so far (None: not merged as read, ``candidate_boosts``
        builds it). The memories asked by a read of the hubs' links keep theirs after later reads:
        a search takes the boosts of the candidates known before the vector from here."""
        if self._specific_boosts is None or self._hub_weights is None:
            return None
        return self._topic_best

    def _kinds(self, config: RetrievalConfig) -> BoostKinds:
        """The specific entities' and the hubs' (read so far) boosts by kind."""
        assert self._hub_links_read, "read_hub_links first: the hubs boost the candidates"
        linked = self._hub_links
        if self._specific_boosts is not None and self._hub_weights is not None:
            # The hubs' topics were merged as their links were read (``read_hub_links``).
            weights, specific = self._hub_weights, self._specific_boosts
            names = [
                (weights[i][0], e.text, list(linked[i]))
                for i, e in self.hubs.items()
                if i in linked and weights[i][1]
            ]
            assert self._topic_best is not None
            kinds = BoostKinds(specific.topics, specific.names + names, self._topic_best)
        else:
            hubs = [
                _match(e, self.similarity, linked[i]) for i, e in self.hubs.items() if i in linked
            ]
            if self._specific_boosts is None:
                kinds = BoostKinds.of(self.specific + hubs, config)
            else:
                kinds = self._specific_boosts.then(BoostKinds.of(hubs, config))
        return kinds


#: The entity named in a result's score parts when only the kind asked for boosted it.
ASKED_ENTITY = "(the kind asked for)"


class CandidateBoosts:
    """Each memory's best entity boost (boosts of several entities do not add up) over one
    fuse's candidates, as an array (``rank.fusion.rank`` calls ``array``): each candidate's
    best topic boost, replaced by its best name boost when greater (the first entity among
    equals), each name's boost gated by its margin over the candidates' text scores
    (``name_gates``), plus ``asked``'s. ``get`` gives one candidate's (boost, entity) of the
    last ``array``. A search gives the topic boosts of the candidates
    known before the vector (``align``), so only the newcomers' are looked up after it."""

    def __init__(
        self, kinds: BoostKinds, config: RetrievalConfig, asked: dict[str, float] | None = None
    ) -> None:
        self._topic_best = kinds.topic_best
        self._names = kinds.names
        self._config = config
        self._asked = asked or {}
        self._aligned: tuple[list[str], np.ndarray] | None = None
        self._last: tuple[list[str], Mapping[str, int] | None, np.ndarray, np.ndarray] | None
        self._last = None

    def align(self, ids: list[str], topic: np.ndarray) -> None:
        """The topic boosts of the first ``len(topic)`` of ``ids`` (the next ``array`` of
        these ``ids`` looks up only the others')."""
        self._aligned = (ids, topic)

    def array(
        self, ids: list[str], text: np.ndarray, rows: Mapping[str, int] | None = None
    ) -> np.ndarray:
        """Each of ``ids``'s boost (float64); ``text``: their text scores, which gate the names
        (``name_gates``); ``rows``: each id's index, when the caller has them."""
        n = len(ids)
        topic = self._topics(ids)
        winner = np.full(n, -1, dtype=np.intp)
        boost = topic
        if self._names and n:
            best = np.zeros(n)
            gates = name_gates(self._names, ids, text, rows, self._config)
            for index, ((value, _, _), (gate, own)) in enumerate(
                zip(self._names, gates, strict=True)
            ):
                gated = value * gate
                if gated > 0.0 and own:
                    at = np.asarray(own, dtype=np.intp)
                    at = at[best[at] < gated]  # the first among equals keeps it
                    best[at] = gated
                    winner[at] = index
            won = best > topic
            winner[~won] = -1
            boost = np.where(won, best, topic)
        if self._asked:
            row = rows if rows is not None else dict(zip(ids, range(n)))
            boost = boost.copy() if boost is topic else boost
            for memory_id, extra in self._asked.items():
                at = row.get(memory_id)
                if at is not None:
                    boost[at] = boost[at].item() + extra
        self._last = (ids, rows, boost, winner)
        return boost

    def get(self, memory_id: str, default: Boost = NO_BOOST) -> Boost:
        """A candidate of the last ``array``: its (boost, the entity that gave it)."""
        assert self._last is not None, "get after array"
        ids, rows, boost, winner = self._last
        if rows is None:
            rows = dict(zip(ids, range(len(ids))))
            self._last = (ids, rows, boost, winner)
        at = rows.get(memory_id)
        if at is None:
            return default
        name = winner[at].item()
        if name >= 0:
            entity: str | None = self._names[name][1]
        else:
            entity = self._topic_best.get(memory_id, NO_BOOST)[1]
        if memory_id in self._asked:
            entity = entity or ASKED_ENTITY
        return default if entity is None else (boost[at].item(), entity)

    def _topics(self, ids: list[str]) -> np.ndarray:
        """The best topic boost of each of ``ids`` (0: none)."""
        aligned, topic = self._aligned or (None, None)
        start = len(topic) if aligned is ids and topic is not None else 0
        get = self._topic_best.get
        rest = np.fromiter(
            map(_first, map(get, ids[start:], repeat(NO_BOOST))), np.float64, len(ids) - start
        )
        return rest if not start else np.concatenate([topic, rest])


def _similar_entities(
    entity_vectors: np.ndarray, scope: Scope, store: Store, config: RetrievalConfig
) -> dict[str, float]:
    """entity id -> its best similarity to any of the query's entities."""
    if not len(entity_vectors):
        return {}
    hits = store.nearest_entities(
        scope,
        entity_vectors,
        config.entity_search_k,
        config.entity_search_min_similarity,
        False,
    )
    similarity: dict[str, float] = {}
    for entity_hits in hits:
        for entity_id, sim in entity_hits:
            similarity[entity_id] = max(sim, similarity.get(entity_id, 0.0))
    return similarity


def _weight(match: EntityMatch, config: RetrievalConfig) -> tuple[float, bool]:
    """An entity's boost and whether it is a name (``BoostKinds.weighed``)."""
    return entity_boost(match, config), is_name(match, config)


def _match(
    entity: EntityRecord, similarity: dict[str, float], memory_ids: list[str]
) -> EntityMatch:
    proper = entity.kind == EntityKind.PROPER
    return EntityMatch(entity.text, similarity[entity.id], entity.link_count, memory_ids, proper)


def _links_among(
    store: Store, entity_ids: list[str], memory_ids: list[str]
) -> dict[str, list[str]]:
    """entity id -> the memories of ``memory_ids`` linked to it; through the store's
    ``links_among`` when it has one (an optional read), else from the memories' entities."""
    links_among = getattr(store, "links_among", None)
    if links_among is not None:
        return links_among(entity_ids, memory_ids)
    wanted = set(entity_ids)
    out: dict[str, list[str]] = {}
    for memory_id, entities in store.entities_of_memories(memory_ids).items():
        for entity in entities:
            if entity.id in wanted:
                out.setdefault(entity.id, []).append(memory_id)
    return out


_first = itemgetter(0)
