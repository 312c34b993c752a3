"""The scale-out backend: PostgreSQL + pgvector (HNSW), SQL BM25, multi-process writes."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from linkmem.errors import ConfigError
from linkmem.store.base import Capabilities, StoreInfo
from linkmem.store.caches.entity_records import EntityCache
from linkmem.store.caches.keyword_postings import KeywordCache
from linkmem.store.caches.memory_rows import RowCache
from linkmem.store.names import check_collection
from linkmem.store.postgres import schema, sql
from linkmem.store.postgres.add_log import AddLogReader
from linkmem.store.postgres.audit import AuditTables
from linkmem.store.postgres.connection import Database, one_connection, retried
from linkmem.store.postgres.dense_cache import DenseCache
from linkmem.store.postgres.entities import EntityTables
from linkmem.store.postgres.keys import KeyTables
from linkmem.store.postgres.memories import MemoryTables
from linkmem.store.postgres.scope_rows import ScopeRowPages
from linkmem.store.postgres.search_connections import search_reads
from linkmem.store.postgres.search_near_cache import EntityVectors, NearDetails
from linkmem.store.postgres.search_reads import SearchReads
from linkmem.store.postgres.sql import Tables
from linkmem.store.postgres.transfer import TransferTables
from linkmem.store.postgres.write_follow import WriteFollower
from linkmem.store.prefetch import SearchPlan
from linkmem.types import HistoryEvent

#: BM25 extensions linkmem looks for (reported by ``info()``; the SQL BM25 works everywhere).
BM25_EXTENSIONS = ("pg_search", "pg_textsearch", "vchord_bm25")

T = TypeVar("T")


class PostgresStore(MemoryTables, EntityTables, TransferTables, AuditTables, KeyTables):
    """Implements ``linkmem.store.base.Store`` on PostgreSQL with pgvector >= 0.8."""

    capabilities = Capabilities(
        native_bm25=False, ann_index=True, filtered_ann=True, multi_process_writes=True
    )

    def __init__(
        self,
        dsn: str,
        dim: int,
        collection: str = "memories",
        pool_min: int = 1,
        pool_max: int = 8,
    ) -> None:
        if not dsn:
            raise ConfigError(
                "the postgres store needs a DSN: set postgres.dsn (or LINKMEM_PG_DSN), e.g. "
                "postgresql://user:password@host:5432/dbname"
            )
        self.t = Tables(check_collection(collection))
        self.dim = dim
        self.db = Database(dsn, pool_min, pool_max)
        # Each searched scope's vectors, current while its mem_version is (``dense_cache``).
        self.dense_cache = DenseCache(self.db, self.t, dim)
        # Their postings of searched terms, current while their versions are
        # (``search_keyword_reads``).
        self.keyword_cache = KeywordCache()
        # Their memories' rows a search reads (``search_record_reads``), likewise.
        self.row_cache = RowCache()
        # Their hubs' link lists and second-hop indexes (``search_entity_cache``), likewise.
        self.entity_cache = EntityCache()
        # Their entity vectors and the near read's rows (``search_near_cache``), likewise.
        self.entity_vectors = EntityVectors(self.db, self.t, dim)
        self.near_details = NearDetails()
        # Those carried across this process's own adds (``write_follow``).
        self.follower = WriteFollower(self.db, self.t, self)
        # And across other processes' adds, through their log (``add_log``).
        self.add_log = AddLogReader(self.t, self)
        # A searched scope's rows read whole, a page after each search (``scope_rows``).
        self.row_pages = ScopeRowPages(self.db, self.t, self.row_cache)
        try:
            self.applied_on_open = schema.migrate(self.db, self.t, dim)
        except BaseException:
            self.db.close()
            raise
        if dim > schema.HNSW_MAX_DIM:
            self.capabilities = Capabilities(
                native_bm25=False, ann_index=False, filtered_ann=True, multi_process_writes=True
            )

    @classmethod
    def from_settings(cls, settings: Any, dim: int) -> PostgresStore:
        pg = settings.postgres
        return cls(pg.dsn, dim, settings.collection, pg.pool_min, pg.pool_max)

    @property
    def location(self) -> str:
        return self.db.location

    def close(self) -> None:
        self.db.close()
        self.dense_cache.matrices.clear()
        self.keyword_cache.clear()
        self.row_cache.clear()
        self.entity_cache.clear()
        self.entity_vectors.matrices.clear()
        self.near_details.clear()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self.db.transaction():
            yield

    def run_in_transaction(self, work: Callable[[], T]) -> T:
        """``work()`` in one transaction, run again (a few times, after a short jittered pause)
        when PostgreSQL aborts it for a deadlock or a serialisation failure. Use it instead of
        ``with transaction():`` for a unit of work that the store may have to re-run; inside an
        open transaction it just joins it."""
        return self.db.run_in_transaction(work)

    @contextmanager
    def search_reads(self, plan: SearchPlan) -> Iterator[SearchReads]:
        """The reads of one search fetched ahead, in at most four round trips (see
        ``search_reads``); answers are the plain methods'."""
        with search_reads(self, plan) as reads:
            yield reads

    # meta ------------------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        return self.db.value(
            "SELECT value FROM linkmem_meta WHERE key = %s", (f"{self.t.c}.{key}",)
        )

    def set_meta(self, key: str, value: str) -> None:
        self.db.run(
            "INSERT INTO linkmem_meta VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = "
            "excluded.value",
            (f"{self.t.c}.{key}", value),
        )

    @one_connection
    def info(self) -> StoreInfo:
        return StoreInfo(
            "postgres",
            self.location,
            {
                "server_version": self.db.value("SHOW server_version"),
                "pgvector_version": self.db.value(
                    "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
                ),
                "collection": self.t.c,
                "schema_version": schema.SCHEMA_VERSION,
                "migrations": schema.applied_migrations(self.db, self.t.c),
                "hnsw_indexes": self._index_state(),
                "keyword_search": "sql_bm25",
                "bm25_extension": self._bm25_extension(),
                **self._counts(),
            },
        )

    def _counts(self) -> dict[str, int]:
        tables = {
            "memories": self.t.mem,
            "entities": self.t.entities,
            "links": self.t.links,
            "scopes": self.t.scopes,
        }
        return {
            name: int(self.db.value(f"SELECT count(*) FROM {table}"))
            for name, table in tables.items()
        }

    def _index_state(self) -> dict[str, str]:
        """Each expected HNSW index: "valid", "invalid" (a failed concurrent build) or
        "missing" (for example vectors wider than pgvector's HNSW limit)."""
        names = schema.hnsw_index_names(self.t)
        rows = dict(
            self.db.rows(
                "SELECT c.relname, i.indisvalid AND i.indisready FROM pg_index i "
                "JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indexrelid = ANY("
                "ARRAY(SELECT to_regclass(n) FROM unnest(%s::text[]) AS n))",
                (names,),
            )
        )
        state = {}
        for name in names:
            bare = name.strip('"')
            state[bare] = "missing" if bare not in rows else ("valid" if rows[bare] else "invalid")
        return state

    def _bm25_extension(self) -> str | None:
        """The first BM25 extension the server offers, if any (not used yet)."""
        rows = self.db.rows(
            "SELECT name FROM pg_available_extensions WHERE name = ANY(%s)",
            (list(BM25_EXTENSIONS),),
        )
        names = {r[0] for r in rows}
        return next((n for n in BM25_EXTENSIONS if n in names), None)

    # history ---------------------------------------------------------------------------------
    def append_history(self, events: Sequence[HistoryEvent]) -> None:
        if not events:
            return
        columns = list(
            zip(
                *[
                    (e.memory_id, e.event, e.old_text, e.new_text, e.created_at, e.role, e.actor_id)
                    for e in events
                ]
            )
        )
        self.db.run(
            f"INSERT INTO {self.t.history} (memory_id, event, old_text, new_text, created_at, "
            "role, actor_id) SELECT i, e, o, n, c, r, a FROM unnest(%s::text[], %s::text[], "
            "%s::text[], %s::text[], %s::text[], %s::text[], %s::text[]) WITH ORDINALITY "
            "AS u(i, e, o, n, c, r, a, ord) ORDER BY ord",
            [list(c) for c in columns],
        )

    def history(self, memory_id: str) -> list[HistoryEvent]:
        rows = self.db.rows(
            "SELECT memory_id, event, old_text, new_text, created_at, role, actor_id "
            f"FROM {self.t.history} WHERE memory_id = %s ORDER BY id",
            (memory_id,),
        )
        return [HistoryEvent(*r) for r in rows]

    # housekeeping ----------------------------------------------------------------------------
    @retried
    def reset(self) -> None:
        """Delete every memory, entity, link and history row; scope rows stay, emptied, and
        meta and API keys are untouched."""
        with self.db.transaction() as conn:
            self.follower.spoil()
            self.db.execute(conn, sql.lock_all_scopes(self.t))
            for table in (
                self.t.links,
                self.t.postings,
                self.t.entities,
                self.t.mem,
                self.t.history,
                self.t.add_log,
            ):
                self.db.execute(conn, f"DELETE FROM {table}")
            self.db.execute(conn, sql.reset_scope_stats(self.t))
