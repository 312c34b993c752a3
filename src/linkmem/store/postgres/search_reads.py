"""One search's reads in at most four round trips (``search_connections`` takes them).

The plain store answers each read of a search with its own statements (scope lookup, BEGIN,
settings, query, COMMIT): about 13 round trips, one after another. ``SearchReads`` fetches them
ahead with psycopg's pipeline mode:

0. the ids of the scopes the search covers (the plain store's lookup) and their sizes;
1. then: the dense top-k (none when the process holds the scopes' vectors at the versions of
   0, or their vectors instead when they fit its cache: ``dense_cache``), the BM25 scores
   (all of them when the scopes hold at most ``KEYWORD_ALL`` memories, else the top-k) and
   the entities near the query's entities with their records and, for entities with few
   links, their memories (``EntityReads._sequence_lists``; from the process when held:
   ``search_near_cache``; with every read held, no round trip 1 at all: ``search_queue``);
2. then, for every memory those can bring into the candidate pool (``S``): records with
   exact cosine (unless cached), BM25 (unless all are known; from the first read's N,
   lengths and idfs, so only the pool's postings are read: ``sql.bm25_given``), and its
   links to the hubs among the entities of 1 (the hub boosts' ``links_among``);
3. when the second hop asks for its sources' entities of at most ``hop_max_links`` links
   (``rare_entities_of_memories``): those, with their records and memories, and beside them
   records with cosine, and BM25, of every memory the hop can reach from the sources (a
   subquery: ``search_sql.reached``). Reading these for the whole pool in 2 instead (up to
   2,700 memories and 36,000 links) cost more server time than the round trip.

When the pool has a second connection free at once, part of each batch runs on it (the dense
read in 1, the records in 2), so two server processes work on one search at the same time;
otherwise everything goes over one connection, in the same number of round trips. A read
outside these (another memory's record) takes a round trip of its own.

Rows come in binary (``_binary``: no numbers or arrays written and parsed as text) and the pool's
ids go as one JSON text (``sql.ID_ROWS``: psycopg dumps a list element by element in Python).

Every answer is the plain store's: each statement returns the rows of the plain statement for
a superset of the ids (same expressions and ORDER BY, see ``search_sql``), filtered here. A
read with other arguments than the plan's goes to the store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from operator import itemgetter
from typing import Any, TypeVar

import numpy as np

from linkmem.filters import Node
from linkmem.store.postgres import search_sql as q
from linkmem.store.postgres.connection import LOST_PREPARED
from linkmem.store.postgres.dense_cache import DenseReads
from linkmem.store.postgres.driver import psycopg
from linkmem.store.postgres.entities import stored_by_key
from linkmem.store.postgres.memories import (
    _row_where,
    bm25_given_statement,
    bm25_statement,
)
from linkmem.store.postgres.search_dense_reads import DenseSearchReads
from linkmem.store.postgres.search_entity_cache import CachedEntityReads
from linkmem.store.postgres.search_entity_reads import EntityReads
from linkmem.store.postgres.search_keyword_reads import KeywordSearchReads, ScopeStats
from linkmem.store.postgres.search_near_cache import NearCacheReads
from linkmem.store.postgres.search_queue import Queued
from linkmem.store.postgres.search_record_reads import RecordSearchReads
from linkmem.store.postgres.sql import in_scopes, vector_literal
from linkmem.store.prefetch import SearchPlan
from linkmem.types import EntityRecord, Scope

Ranked = list[tuple[str, float]]
_first, _second = itemgetter(0), itemgetter(1)
T = TypeVar("T")
#: In scopes of at most this many memories the first BM25 read returns every matching
#: memory's score, so later BM25 reads of the search need no statement; in larger ones it
#: returns the top-k, and the pool's scores are read with its records. In the 10k-memory
#: scope of ``bench_scale`` a query's terms match ~1,500 memories (neighbour words): all of
#: them (up to 1,000 rows) cost more store CPU per search than the top 60 and a second read
#: of the pool's (63.5 vs 56.0 ms, 100 searches interleaved, load ~15); in its 100-memory
#: scopes everything at once stays cheaper (31.7 vs 33.5 ms).
KEYWORD_ALL = 1000


class SearchReads(
    DenseSearchReads,
    KeywordSearchReads,
    RecordSearchReads,
    CachedEntityReads,
    NearCacheReads,
    EntityReads,
):
    """The reads of one search (see the module docstring); other calls go to the store."""

    def __init__(self, store: Any, plan: SearchPlan, conn: Any, side: Any | None = None) -> None:
        self._store = store
        self._plan = plan
        self._conn = conn
        self._side = side
        self._t = store.t
        self._query_literal: str | None = None  # the query's vector, once it has arrived
        self._terms = list(dict.fromkeys(plan.terms)) if plan.keyword else []
        self._links_max = max(plan.specific_max_links, plan.hop_max_links)
        self._dense_top: Ranked | None = None
        self._keyword_top: Ranked | None = None
        self._near: list[list[tuple[str, float]]] | None = None
        self._entities: dict[str, EntityRecord] = {}
        # entity -> (memory seq, memory id, own link)
        self._links: dict[str, list[tuple[int, str, bool]]] = {}
        self._unsequenced: set[str] = set()  # entities of ``_links`` read without seqs
        # (memory, entity) in entity seq order: the links of the memories of ``_hub_rows_of``
        # to the hubs of ``_hubs`` (``links_among``), and those of the memories of
        # ``_rare_rows_of`` to entities of at most ``plan.hop_max_links`` links (the second
        # hop's ``rare_entities_of_memories``)
        self._hub_rows: list[tuple[str, str]] = []
        self._hub_rows_of: set[str] = set()
        self._rare_rows: list[tuple[str, str]] = []
        self._rare_rows_of: set[str] = set()
        self._hubs: set[str] = set()
        # Every memory's BM25 when the first read returned them all (see KEYWORD_ALL); else
        # the scores fetched so far, one batch after another.
        self._keyword: Ranked = []
        self._keyword_all = False
        # The first read's terms found, their idfs, N and total length: the pool's scores
        # read only the pool's postings (``bm25_given``). None: no term was found.
        self._keyword_stats: Sequence[Any] | None = None
        # memory -> its raw row (``search_sql.memories_of_ids``: the record's columns, parsed
        # when asked for, then its seq and its cosine, None out of the scope or the filters)
        self._records: dict[str, Sequence[Any]] = {}
        self._fetched: set[str] = set()  # memories whose cosine, BM25 and record are known
        self._scope_ids: list[int] | None = None
        # The scopes' versions (round trip 0) and, when their vectors are cached in the
        # process (``dense_cache``), the search's dense reads from them.
        self._versions: list[tuple[int, int]] = []
        self._dense: DenseReads | None = None
        self._load_dense = False
        # BM25 from the process's postings cache (``search_keyword_reads``): the scopes'
        # versions and statistics (round trip 0), the postings held, every memory's score.
        self._scope_stats: list[ScopeStats] = []
        self._held_postings: dict[int, dict[str, Any]] = {}
        self._keyword_table: Any | None = None
        self._keyword_to_store = False
        # The query's entity vectors: those of the stored entities its keys find (round trip 0).
        self._entity_vectors = np.zeros((0, plan.dim), dtype=np.float32)
        self._by_key: dict[str, tuple[str, np.ndarray]] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    @property
    def _query(self) -> str:
        """The query's vector as a literal (waits for the embedding: round trip 0, and the
        vector-free reads of 1, are sent before)."""
        if self._query_literal is None:
            self._query_literal = vector_literal(self._plan.vector)
        return self._query_literal

    # fetching --------------------------------------------------------------------------------
    def fetch_first(self) -> None:
        """Round trips 0, 1 and 2."""
        plan = self._plan
        self._scope_ids, n_docs = self._read_scopes()
        # Everything is queued and sent at once; the results arrive when the pipelines close.
        # BEGIN/COMMIT are queued as statements: the settings of ``ann_settings`` are local
        # to each transaction (``conn.transaction()`` would sync on entering and leaving).
        # With a second connection the dense read runs beside the others.
        conn, side = self._conn, self._side or self._conn
        # Dense reads in the process (``dense_cache``) bring the BM25 along: from cached
        # postings, the server's top-k replaced by the read of those not held yet; the
        # nearest entities too when their vectors are held (``search_near_cache``).
        in_process = self._plan_dense(n_docs)
        cached_keyword = in_process and bool(self._terms)
        self._open_view()
        main, aside = Queued(), Queued()  # sent once known (no empty round trip)
        top = max(plan.pool, n_docs + 1 if n_docs <= KEYWORD_ALL else 0)
        keyword = postings = near = None
        if cached_keyword:
            postings = self._queue_postings(main)
        elif self._terms:
            keyword = self._queue_keyword(main, top)
        near_cached, details, vectors = self._queue_near_cached(main, aside)
        if details is not None:
            near = details
        elif not near_cached and len(self._entity_vectors):
            near = self._queue_near(main)
        hop = self._queue_hop_index(main)
        dense = load = None
        if main.calls or aside.calls or self._load_dense or (plan.dense and not in_process):
            with self._pipelines():
                if main.calls:
                    self._begin(conn)
                    main.replay(conn)
                    self._commit(conn)
                aside.replay(side)
                # Last: the dense read waits for the query's vector, the others run meanwhile;
                # from cached vectors none is sent, or the scopes' vectors are read instead.
                load = self._queue_load(side)
                if plan.dense and not in_process:
                    dense = self._read_only(side, self._queue_dense_top)
        if load is not None:
            cache = self._store.dense_cache
            self._dense = DenseReads(cache.take(load.fetchall(), self._versions))
        if self._dense is not None:
            self._dense_top = self._dense.top(plan.vector, plan.pool)
        if cached_keyword and self._dense is not None:
            rows = postings.fetchall() if postings is not None else None
            self._take_postings(rows, self._dense.matrices)
        self._take_hop_index(hop)  # the entity cache's (``search_entity_cache``)
        self._take_entity_vectors(vectors)
        if dense is not None:
            self._dense_top = [(mid, float(sim)) for mid, sim in dense.fetchall()]
        if keyword is not None:
            *found, stats = keyword.fetchall()
            rows = [row[:2] for row in found]
            self._keyword_stats = stats[2:] if stats[2] is not None else None
            self._keyword_top = _positive(rows[: plan.pool])
            self._keyword_all = len(rows) < top
            if self._keyword_all:
                self._keyword = _positive(rows)
        near_rows = self._cached_near_rows(near) if near_cached else None
        if near_cached and near_rows is None:  # read at other versions: the server's
            with self._conn.pipeline():
                self._begin(conn)
                near = self._queue_near(conn)
                self._commit(conn)
        if near_rows is None:
            near_rows = near.fetchall() if near is not None else []
        self._near = self._read_near(near_rows)
        pool = {mid for mid, _ in [*(self._dense_top or []), *(self._keyword_top or [])]}
        for entity_id in {eid for hits in self._near for eid, _ in hits}:
            entity = self._entities[entity_id]
            if entity.link_count <= plan.specific_max_links:
                pool.update(map(_second, self._links[entity_id]))
            else:
                self._hubs.add(entity_id)
        self._fetch(sorted(pool), with_entities=True)
        self._sequence_lists(self._records)

    def _read_scopes(self) -> tuple[list[int] | None, int]:
        """Round trip 0: the ids of the scopes the search covers (None: every scope) and
        how many memories they hold (as their statistics say; the size of every scope
        counts as unknown, ``KEYWORD_ALL`` + 1); beside them, the entities of the query's
        keys (``entities_by_key``), which give the query's entity vectors."""
        plan = self._plan
        items = plan.scope.items()
        names, values = [k for k, _ in items], [v for _, v in items]
        keys = plan.entities.keys if plan.entities is not None else []
        sizes = found = None
        if items or keys:
            with self._conn.pipeline():
                if items:
                    sizes = _binary(self._conn, q.scope_sizes(self._t, names), values)
                if keys:
                    found = _binary(self._conn, q.entities_by_key(self._t, names), [*values, keys])
        if plan.entities is not None:
            self._by_key = stored_by_key(found.fetchall() if found is not None else [])
            self._entity_vectors = plan.entities.vectors(self._by_key)
        if sizes is None:
            return None, KEYWORD_ALL + 1
        rows = sizes.fetchall()
        self._versions = [(r[0], r[2]) for r in rows]
        self._scope_stats = [ScopeStats.of_row(r) for r in rows]
        self._store.add_log.catch_up(self._conn, [(s.id, s.versions) for s in self._scope_stats])
        return [r[0] for r in rows], sum(r[1] for r in rows)

    def _fetch(self, ids: list[str], with_entities: bool = False) -> None:
        """Cosine, BM25 and records (and linked entities) of ``ids``: one round trip."""
        fetched = self._fetched
        if fetched.issuperset(ids):  # none asked, or all read (most reads after the first)
            return
        if fetched:
            ids = [i for i in ids if i not in fetched]
        # The pool's links to the hubs, or their whole lists (``search_entity_cache``).
        links, hub_rows = self._hub_read(ids, sorted(self._hubs) if with_entities else [])
        held = self._held_rows(ids)  # from the row cache (``search_record_reads``)
        self._keep(held, None, [row[0] for row in held])
        read = [i for i in ids if i not in self._fetched] if held else ids
        if read or links is not None:
            records, keyword, rows = self._retried(lambda: self._read_batch(read, links))
            self._keep(records, keyword, read)
        else:
            rows = None
        for entity_id, memory_ids in hub_rows(rows) or []:
            self._hub_rows += [(memory_id, entity_id) for memory_id in memory_ids]
        if with_entities:
            self._hub_rows_of.update(ids)

    def _fetch_rare(self, ids: list[str]) -> None:
        """The entities of ``ids`` with at most ``hop_max_links`` links, with their records
        and memories, and beside them cosine, BM25 and records of every memory the second
        hop can reach from ``ids`` (``search_sql.reached``): one round trip."""
        hop = self._plan.hop_max_links

        def rare(conn: Any) -> Any:
            return _binary(conn, *q.entities_of_ids(self._t, ids, hop))

        reached = q.reached(self._t, ids, hop)
        records, keyword, rows = self._retried(lambda: self._read_batch(reached, rare))
        self._keep(records, keyword)
        for row in rows:
            entity_id = self._remember_entity(row[1:], hop)
            self._rare_rows += [(memory_id, entity_id) for memory_id in row[0]]
        self._rare_rows_of.update(ids)

    def _keep(
        self,
        records: list[Sequence[Any]],
        keyword: list[Sequence[Any]] | None,
        asked: Sequence[str] = (),
    ) -> None:
        """Remember the records, cosines and BM25 of memories not fetched before; those
        ``asked`` for count as fetched (an id without a row has none)."""
        fetched = self._fetched
        if fetched:
            records = [row for row in records if row[0] not in fetched]
        fresh = dict(zip(map(_first, records), records))
        self._records.update(fresh)
        if keyword is not None:
            self._keyword += _positive([row for row in keyword if row[0] in fresh])
        self._fetched.update(fresh, asked)

    def _retried(self, read: Callable[[], T]) -> T:
        """``read()``; again unprepared when the server lost a prepared statement after the
        first batches (a pooler before PgBouncer 1.21 may send this batch to another
        server), after which the store prepares no search statement."""
        try:
            return read()
        except psycopg.Error as e:
            if e.sqlstate not in LOST_PREPARED or not self._unprepare():
                raise
            return read()

    def _read_batch(
        self, ids: q.Ids, also: Callable[[Any], Any] | None
    ) -> tuple[list[Any], list[Any] | None, list[Any] | None]:
        """Records with cosines of ``ids`` and their BM25 (None when not read) on the side
        connection, beside ``also(conn)`` (None: nothing) on the main one; the rows."""
        conn, side = self._conn, self._side or self._conn
        with self._pipelines():
            in_scope = self._memory_where(None)
            query = None if self._dense is not None else self._query  # no cosine: cached
            statement = q.memories_of_ids(self._t, ids, in_scope, query, self._dense is not None)
            records = _binary(side, *statement) if ids != [] else None
            wanted = self._keyword_stats is not None and not self._keyword_all
            keyword = self._queue_keyword_of(side, ids) if wanted else None
            other = also(conn) if also is not None else None
        found = records.fetchall() if records is not None else []
        return (
            self._kept_rows(found) if self._dense is not None else found,
            keyword.fetchall() if keyword is not None else None,
            other.fetchall() if other is not None else None,
        )

    def _unprepare(self) -> bool:
        """Stop preparing this search's statements (and the store's later searches');
        whether they were prepared."""
        held = [c for c in (self._conn, self._side) if c is not None]
        if not any(c.prepare_threshold is not None for c in held):
            return False
        self._store.db.prepares_searches = False
        for conn in held:
            conn.prepare_threshold = None
        return True

    @contextmanager
    def _pipelines(self) -> Iterator[None]:
        """Pipeline mode on both connections: statements are sent as they are queued, and
        each connection's server process runs its own at the same time."""
        with self._conn.pipeline(), self._side.pipeline() if self._side else nullcontext():
            yield

    def _queue_keyword(self, conn: Any, k: int) -> Any:
        """The top ``k`` by BM25, then a row of the statistics (``sql.bm25``)."""
        k1_b, filters = (self._store.k1, self._store.b), self._plan.filters
        statement = bm25_statement(
            self._t, self._scope_ids, self._terms, filters, None, k, k1_b, stats=True
        )
        return _binary(conn, *statement)

    def _queue_keyword_of(self, conn: Any, ids: q.Ids) -> Any:
        """The BM25 of ``ids`` from the first read's statistics: their postings alone."""
        k1_b, stats = (self._store.k1, self._store.b), self._keyword_stats
        assert stats is not None
        statement = bm25_given_statement(
            self._t, self._scope_ids, stats, self._plan.filters, ids, k1_b
        )
        return _binary(conn, *statement)

    def _memory_where(self, ids: list[str] | None) -> q.Where:
        scope_sql, scope_args = in_scopes("m.scope_id", self._scope_ids)
        row_sql, row_args = _row_where(self._plan.filters, ids)
        return f"{scope_sql} AND {row_sql}", [*scope_args, *row_args]

    def _same(self, scope: Scope, filters: Node | None) -> bool:
        return scope == self._plan.scope and filters is self._plan.filters

    # reads -----------------------------------------------------------------------------------
    def keyword_search(
        self,
        terms: Sequence[str],
        scope: Scope,
        k: int,
        filters: Node | None = None,
        ids: Sequence[str] | None = None,
    ) -> Ranked:
        if not self._terms or list(terms) != self._plan.terms or not self._same(scope, filters):
            return self._store.keyword_search(terms, scope, k, filters, ids)
        if self._keyword_table is not None or self._keyword_to_store:
            return self._cached_keyword(terms, scope, k, ids)
        if ids is None:
            if self._keyword_top is not None and k == self._plan.pool:
                return list(self._keyword_top)
            return self._store.keyword_search(terms, scope, k, filters, ids)
        if k <= 0 or not ids:
            return []
        self._fetch(list(ids))
        wanted = set(ids)
        return [(mid, score) for mid, score in self._keyword if mid in wanted][:k]


def _binary(conn: Any, query: str, params: Sequence[Any]) -> Any:
    """``conn.execute`` with the rows in binary: the server sends numbers and arrays without
    writing them as text, psycopg reads them without parsing."""
    return conn.execute(query, params, binary=True)


def _positive(rows: list[Sequence[Any]]) -> Ranked:
    return [(mid, float(score)) for mid, score in rows if score > 0]
