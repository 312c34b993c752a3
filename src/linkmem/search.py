"""The hybrid search pipeline: candidates from every signal, then one fused score each."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from functools import cached_property
from itertools import compress, repeat
from operator import itemgetter
from typing import Any

import numpy as np

from linkmem.config import RetrievalConfig
from linkmem.embed.base import Embedder
from linkmem.encoding import QueryEncoding, start_query
from linkmem.entities.asked import asked_boosts, kind_vector
from linkmem.entities.boost import EntitySignal, MatchedEntities, match_entities
from linkmem.entities.hop import hop_targets
from linkmem.errors import InvalidInput
from linkmem.filters import Node
from linkmem.rank.fusion import NO_BOOST, Fusion, rank
from linkmem.rank.terms import query_terms
from linkmem.rank.time_boost import Dated, query_time, rescore_asked
from linkmem.side_threads import Beside
from linkmem.store.base import Store
from linkmem.store.prefetch import SearchPlan
from linkmem.types import Hit, MemoryRecord, Scope, ScoreParts
from linkmem.validation import shown

Ranked = list[tuple[str, float]]


@dataclass(frozen=True)
class Signals:
    """Which signals a search uses (all on by default; ablations turn some off)."""

    dense: bool = True
    keyword: bool = True
    entities: bool = True
    time: bool = True  # dates the question names, "when" (linkmem.rank.time_boost)

    @classmethod
    def of(cls, value: Any) -> Signals | None:
        """A ``Signals``, or a dict of its flags (as JSON carries it), or None."""
        if value is None or isinstance(value, Signals):
            return value
        names = {f.name for f in fields(cls)}
        if not isinstance(value, Mapping) or not set(value) <= names:
            raise InvalidInput(
                f"signals must be a Signals or a dict of {', '.join(sorted(names))}, "
                f"got {shown(value)}"
            )
        if not all(isinstance(flag, bool) for flag in value.values()):
            raise InvalidInput("signals' values must be true or false")
        return cls(**value)

    def to_dict(self) -> dict[str, bool]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class SearchRequest:
    query: str
    scope: Scope
    top_k: int
    filters: Node | None
    threshold: float | None
    signals: Signals = Signals()


def run_search(
    request: SearchRequest,
    store: Store,
    embedder: Embedder,
    config: RetrievalConfig,
) -> list[Hit]:
    """The search ``request`` asks for. With the entity signal, the query's entities are
    the stored entities its words name (``linkmem.entities.query_entities``): no NER model
    runs at search time. The query's embedding runs on a side thread while this one reads
    what does not need its vector (``_search``); the store is read from this thread only,
    so a search inside the caller's open transaction sees it."""
    pool = max(config.pool_factor * request.top_k, config.pool_min)
    encoding = start_query(request.query, embedder, config, request.signals.entities)
    kind = kind_vector(request.query, embedder.embed_batch, config)
    asked = Beside(kind) if kind is not None and request.signals.entities else None
    try:
        plan = _plan(request, encoding, embedder.dim, query_terms(request.query), pool, config)
        with _reads(store, plan) as store:
            return _search(request, store, plan, config, asked)
    finally:
        encoding.rows.cancel()  # not wanted when the search failed before it started
        if asked is not None:
            asked.cancel()


def _entity_vectors(request: SearchRequest, store: Store, plan: SearchPlan) -> np.ndarray | None:
    """The query's entity vectors, from the stored entities its keys find (None: the entity
    signal is off)."""
    if plan.entities is None:
        return None
    keys = plan.entities.keys
    found = store.entities_by_key(request.scope, keys) if keys else {}
    return plan.entities.vectors(found)


@contextmanager
def _reads(store: Store, plan: SearchPlan) -> Iterator[Store]:
    """The store, or its view that fetches the search's reads ahead (fewer round trips)."""
    search_reads = getattr(store, "search_reads", None)
    if search_reads is None:
        yield store
        return
    with search_reads(plan) as reads:
        yield reads


def _plan(
    request: SearchRequest,
    encoding: QueryEncoding,
    dim: int,
    terms: list[str],
    pool: int,
    config: RetrievalConfig,
) -> SearchPlan:
    return SearchPlan(
        scope=request.scope,
        filters=request.filters,
        query_vector=encoding.vector,
        dim=dim,
        terms=terms,
        pool=pool,
        dense=request.signals.dense,
        keyword=request.signals.keyword,
        entity_k=config.entity_search_k,
        entity_min_similarity=config.entity_search_min_similarity,
        specific_max_links=config.entity_pool_max_links,
        hop_max_links=config.hop_max_links if config.hop_weight > 0 else 0,
        entities=encoding.entities,
    )


def _search(
    request: SearchRequest,
    store: Store,
    plan: SearchPlan,
    config: RetrievalConfig,
    asked_kind: Beside[np.ndarray] | None = None,
) -> list[Hit]:
    scores = _Scores(request, store, plan, config)
    # What needs no query vector, while the embedding runs: BM25, the matched entities, the
    # BM25 of the memories they pull in, their hubs' links to these, what the question asks
    # about time.
    scores.keyword.update(_keyword(request, store, plan.terms, plan.pool))
    matched = _matched_entities(request, store, plan, config)
    widen = matched.widen if matched is not None else set()
    scores.complete_keyword(widen)
    if matched is not None:
        matched.read_hub_links(store, scores.keyword)
    scores.prepare(set(scores.keyword) | widen, matched.topic_best if matched else None)
    asked = query_time(request.query) if request.signals.time else None
    # Only the best results are ranked and listed: those kept, the hop's sources, and those
    # the time signal reads.
    head = max(request.top_k, config.hop_sources, config.time_depth if asked else 0)
    scores.dense.update(_dense(request, store, plan.vector, plan.pool))  # waits for the vector
    entities = EntitySignal()
    kind: dict[str, float] = {}
    if matched is not None:
        if asked_kind is not None:  # the kind of thing asked for (``entities.asked``)
            kind = asked_boosts(asked_kind.result(), request.scope, store, config)
        matched.read_hub_links(store, [*scores.dense, *kind])
        entities = matched.candidate_boosts(config, kind)
    scored = scores.fuse(entities.widen, entities.boosts, head=head, extra=kind)
    if matched is not None:
        hops = hop_targets([mid for mid, _ in scored], entities.matched, store, config)
        if hops:
            scored = scores.fuse(entities.widen, entities.boosts, hops, head, kind)
    records = _RecordReads(store)
    time_boosts: dict[str, float] = {}
    if asked is not None:
        scored, time_boosts = rescore_asked(asked, scored, records.dated, config)
    if request.threshold is not None:
        scored = [(mid, score) for mid, score in scored if score >= request.threshold]
    scored = scored[: request.top_k]
    records.get([mid for mid, _ in scored])
    return [
        Hit(records[mid], score, scores.parts(mid, score, time_boosts.get(mid, 0.0)))
        for mid, score in scored
        if mid in records
    ]


def _matched_entities(
    request: SearchRequest, store: Store, plan: SearchPlan, config: RetrievalConfig
) -> MatchedEntities | None:
    """The stored entities the query matches (None: the entity signal is off)."""
    entity_vectors = _entity_vectors(request, store, plan)
    if entity_vectors is None:
        return None
    return match_entities(entity_vectors, request.scope, store, config)


class _RecordReads:
    """The records one search reads, each read once."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._read: dict[str, MemoryRecord] = {}

    def get(self, ids: list[str]) -> list[MemoryRecord]:
        missing = [mid for mid in ids if mid not in self._read]
        if missing:
            self._read.update((r.id, r) for r in self._store.get_memories(missing))
        return [self._read[mid] for mid in ids if mid in self._read]

    def dated(self, ids: list[str]) -> Sequence[Dated]:
        """What the time signal reads of ``ids``: the store's ``memory_dates`` (id, text,
        created_at) when it has that optional read, else the records (kept for the results)."""
        memory_dates = getattr(self._store, "memory_dates", None)
        return self.get(ids) if memory_dates is None else memory_dates(ids)

    def __getitem__(self, memory_id: str) -> MemoryRecord:
        return self._read[memory_id]

    def __contains__(self, memory_id: object) -> bool:
        return memory_id in self._read


#: A function of the query's vector: some candidates' cosines and which of them have one.
Cosines = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class _Known:
    """The candidates known before the query's vector (``ids``: ``members`` listed), their raw
    BM25 and its terms of the fused score (``Fusion.bm25_terms``), each id's index in ``ids``
    (``rows``), a function of the vector that gives their cosines
    (``SearchReads.cosines_of``) and their best topic boosts (``topics``:
    ``MatchedEntities.topic_best``, final for them once their hub links are read)."""

    members: set[str]
    ids: list[str]
    bm25: np.ndarray
    bm25_terms: np.ndarray
    rows: dict[str, int]
    cosines: Cosines
    topics: np.ndarray | None = None


@dataclass
class _Scores:
    """Dense and BM25 scores gathered so far; ``fuse`` completes them for new candidates."""

    request: SearchRequest
    store: Store
    plan: SearchPlan
    config: RetrievalConfig
    dense: dict[str, float] = field(default_factory=dict)
    keyword: dict[str, float] = field(default_factory=dict)

    boosts: dict[str, tuple[float, str]] = field(default_factory=dict)
    hops: dict[str, str] = field(default_factory=dict)
    _keyword_asked: set[str] = field(default_factory=set)  # BM25 read (a zero is not kept)
    _known: _Known | None = None
    # The last fuse's candidates, cosines and BM25; each id's row in them.
    _fused: tuple[list[str], np.ndarray, np.ndarray] | None = None
    _row: Mapping[str, int] | None = None

    def complete_keyword(self, candidates: set[str]) -> None:
        """BM25 for every candidate, so no score depends on whether it made the keyword top-N."""
        missing = candidates - self._keyword_asked
        _complete_keyword(self.request, self.store, self.plan.terms, missing, self.keyword)
        self._keyword_asked |= missing

    def prepare(
        self, known: set[str], topic_best: Mapping[str, tuple[float, str]] | None = None
    ) -> None:
        """Before the query's vector: the candidates known so far (the keyword top-N and the
        memories the entities pull in), their BM25 and its terms of the fused score, their
        rows when the store looks cosines up (``cosines_of``), so ``fuse`` gathers only the
        newcomers' scores; with ``topic_best`` (each memory's best topic boost, final for
        these), their topic boosts (``CandidateBoosts.align``)."""
        cosines_of = getattr(self.store, "cosines_of", None)
        ids = list(known)
        cosines = cosines_of(ids) if cosines_of is not None else None
        if cosines is not None:
            n = len(ids)
            bm25 = np.fromiter(map(self.keyword.get, ids, repeat(0.0)), np.float64, n)
            terms = self._fusion.bm25_terms(bm25)
            rows = dict(zip(ids, range(n)))
            topics = None
            if topic_best is not None:
                best = map(topic_best.get, ids, repeat(NO_BOOST))
                topics = np.fromiter(map(itemgetter(0), best), np.float64, n)
            self._known = _Known(known, ids, bm25, terms, rows, cosines, topics)

    def fuse(
        self,
        widen: set[str],
        boosts: dict[str, tuple[float, str]],
        hops: dict[str, str] | None = None,
        head: int | None = None,
        extra: Mapping[str, float] | None = None,
    ) -> Ranked:
        """The candidates' fused scores, best first (only the ``head`` best when given): the
        dense and keyword top-N, the memories the entities pull in (``widen``), the hop's
        targets (``hops``: memory id -> the entity followed), ``extra``'s memories (those of
        the kind the question asks for)."""
        self.boosts, self.hops = boosts, hops or {}
        known = self._known
        if known is None:
            candidates = set(self.dense) | set(self.keyword) | widen | self.hops.keys()
            ids, dense, bm25 = self._gather(candidates | set(extra or ()))
            terms, rows = self._fusion.bm25_terms(bm25), None
        else:  # known.members holds the keyword top-N and ``widen``
            ids, dense, bm25, terms, rows, topics = self._gather_known(known, extra or {})
            align = getattr(boosts, "align", None)  # ``CandidateBoosts``
            if align is not None and topics is not None:
                align(ids, topics)
        if not self.request.signals.dense:
            dense = np.zeros(len(ids))
        self._fused, self._row = (ids, dense, bm25), rows
        return rank(self._fusion, ids, dense, terms, boosts, hops, rows, head)

    def _gather(self, candidates: set[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
        """The candidates with a cosine (dense scoring checked scope and filters), with their
        cosines and BM25."""
        _complete_dense(self.request, self.store, self.plan.vector, candidates, self.dense)
        self.complete_keyword(candidates)
        ids = list(candidates & self.dense.keys())
        return ids, self._dense_of(ids), self._keyword_of(ids)

    def _gather_known(
        self, known: _Known, extra: Mapping[str, float]
    ) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, Mapping[str, int], np.ndarray | None]:
        """``_gather`` from the known candidates' arrays and the newcomers' reads (the dense
        top-N's, the hop's targets and ``extra`` not known), with the BM25 terms, each id's
        row and the known ones' topic boosts (the first of ``ids``)."""
        members, dense = known.members, self.dense
        newcomers = {mid for mid in dense if mid not in members}
        newcomers.update(mid for mid in self.hops if mid not in members)
        newcomers.update(mid for mid in extra if mid not in members)
        new_ids, new_dense, new_bm25 = self._gather(newcomers)
        cosines, found = known.cosines(self.plan.vector)
        ids, bm25, terms, rows = known.ids, known.bm25, known.bm25_terms, known.rows
        topics = known.topics
        if not found.all():  # some known ids out of the scope's matrices
            ids = list(compress(ids, found.tolist()))
            bm25, terms, rows = bm25[found], terms[found], dict(zip(ids, range(len(ids))))
            topics = topics[found] if topics is not None else None
        if new_ids:
            rows = dict(rows)
            rows.update(zip(new_ids, range(len(ids), len(ids) + len(new_ids))))
            ids = ids + new_ids
            cosines = np.concatenate([cosines, new_dense])
            new_terms = self._fusion.bm25_terms(new_bm25)
            bm25, terms = np.concatenate([bm25, new_bm25]), np.concatenate([terms, new_terms])
        return ids, cosines, bm25, terms, rows, topics

    def _dense_of(self, ids: list[str]) -> np.ndarray:
        return np.fromiter(map(self.dense.__getitem__, ids), np.float64, len(ids))

    def _keyword_of(self, ids: list[str]) -> np.ndarray:
        return np.fromiter(map(self.keyword.get, ids, repeat(0.0)), np.float64, len(ids))

    def parts(self, memory_id: str, score: float, time_boost: float = 0.0) -> ScoreParts:
        """The parts of one result's ``score`` (fused by the last ``fuse``, then ``time_boost``
        added)."""
        assert self._fused is not None, "parts of a fused candidate"
        ids, dense, bm25 = self._fused
        if self._row is None:
            self._row = dict(zip(ids, range(len(ids))))
        row = self._row[memory_id]
        return self._fusion.explained(
            dense[row].item(),
            bm25[row].item(),
            self.boosts.get(memory_id, NO_BOOST),
            self.hops.get(memory_id),
            score,
            time_boost,
        )

    @cached_property
    def _fusion(self) -> Fusion:
        return Fusion(len(self.plan.terms), self.config)


def _dense(request: SearchRequest, store: Store, vector: np.ndarray, pool: int) -> Ranked:
    if not request.signals.dense:
        return []
    return store.vector_search(vector, request.scope, pool, request.filters)


def _keyword(request: SearchRequest, store: Store, terms: list[str], pool: int) -> Ranked:
    if not request.signals.keyword or not terms:
        return []
    return store.keyword_search(terms, request.scope, pool, request.filters)


def _complete_dense(
    request: SearchRequest,
    store: Store,
    vector: np.ndarray,
    candidates: set[str],
    dense: dict[str, float],
) -> None:
    """Exact cosine for candidates that came from another signal (also checks scope+filters)."""
    missing = list(candidates - dense.keys())
    if missing:
        dense.update(
            store.vector_search(vector, request.scope, len(missing), request.filters, ids=missing)
        )


def _complete_keyword(
    request: SearchRequest,
    store: Store,
    terms: list[str],
    candidates: set[str],
    keyword: dict[str, float],
) -> None:
    """BM25 for every candidate, so no score depends on whether it made the keyword top-N."""
    if not request.signals.keyword or not terms:
        return
    missing = list(candidates - keyword.keys())
    if missing:
        keyword.update(
            store.keyword_search(terms, request.scope, len(missing), request.filters, ids=missing)
        )
