"""The embedded default backend: one SQLite file (WAL), exact vector search, per-scope BM25."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TypeVar

from linkmem.store.base import Capabilities, StoreInfo
from linkmem.store.prefetch import SearchPlan
from linkmem.store.sqlite import schema
from linkmem.store.sqlite.audit import AuditTables
from linkmem.store.sqlite.connection import Connection, check_collection
from linkmem.store.sqlite.driver import sqlite3
from linkmem.store.sqlite.entities import EntityTables
from linkmem.store.sqlite.keys import KeyTables
from linkmem.store.sqlite.memories import MemoryTables
from linkmem.store.sqlite.search_reads import SearchReads, search_reads
from linkmem.store.sqlite.transfer import TransferTables
from linkmem.store.sqlite.write_follow import WriteFollower
from linkmem.store.vectors import DEFAULT_CACHE_BYTES
from linkmem.types import HistoryEvent

T = TypeVar("T")


class SQLiteStore(MemoryTables, EntityTables, TransferTables, AuditTables, KeyTables):
    """Implements ``linkmem.store.base.Store`` on one SQLite file."""

    capabilities = Capabilities(
        native_bm25=False, ann_index=False, filtered_ann=True, multi_process_writes=True
    )

    def __init__(
        self,
        path: str | Path,
        dim: int,
        collection: str = "memories",
        cache_bytes: int = DEFAULT_CACHE_BYTES,
    ) -> None:
        self.path = str(path)
        self.c = check_collection(collection)
        self.dim = dim
        self.db = Connection(path)
        with self.db.lock:
            schema.migrate(self.db.raw, self.c)
        self._init_memories(dim, cache_bytes)
        self._init_entities(dim, cache_bytes)
        # The entity cache carried across this process's own adds (``write_follow``).
        self.follower = WriteFollower(self)

    @classmethod
    def from_settings(cls, settings: object, dim: int) -> SQLiteStore:
        return cls(
            settings.sqlite_path,  # type: ignore[attr-defined]
            dim,
            settings.collection,  # type: ignore[attr-defined]
            settings.sqlite.cache_mb * 2**20,  # type: ignore[attr-defined]
        )

    def close(self) -> None:
        self.db.close()

    def search_reads(self, plan: SearchPlan) -> AbstractContextManager[SearchReads]:
        """A view answering one search's reads (``linkmem.store.prefetch``)."""
        return search_reads(self, plan)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self.db.transaction():
            yield

    def run_in_transaction(self, work: Callable[[], T]) -> T:
        """``work()`` in one transaction (SQLite writers queue on the file's lock: nothing to
        re-run)."""
        with self.db.transaction():
            return work()

    def get_meta(self, key: str) -> str | None:
        rows = self.db.rows("SELECT value FROM linkmem_meta WHERE key = ?", (f"{self.c}.{key}",))
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        self.db.run(
            "INSERT INTO linkmem_meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = "
            "excluded.value",
            (f"{self.c}.{key}", value),
        )

    def info(self) -> StoreInfo:
        counts = {
            name: self.db.rows(f"SELECT count(*) FROM {self.c}{suffix}")[0][0]
            for name, suffix in [
                ("memories", ""),
                ("entities", "_entities"),
                ("links", "_links"),
                ("scopes", "_scopes"),
            ]
        }
        return StoreInfo(
            "sqlite",
            self.path,
            {
                "sqlite_version": sqlite3.sqlite_version,
                "schema_version": schema.SCHEMA_VERSION,
                "journal_mode": self.db.rows("PRAGMA journal_mode")[0][0],
                **counts,
            },
        )

    def append_history(self, events: Sequence[HistoryEvent]) -> None:
        self.db.run_many(
            f"INSERT INTO {self.c}_history (memory_id, event, old_text, new_text, created_at, "
            "role, actor_id) VALUES (?,?,?,?,?,?,?)",
            [
                (e.memory_id, e.event, e.old_text, e.new_text, e.created_at, e.role, e.actor_id)
                for e in events
            ],
        )

    def history(self, memory_id: str) -> list[HistoryEvent]:
        rows = self.db.rows(
            f"SELECT memory_id, event, old_text, new_text, created_at, role, actor_id "
            f"FROM {self.c}_history WHERE memory_id = ? ORDER BY id",
            (memory_id,),
        )
        return [HistoryEvent(*r) for r in rows]

    def reset(self) -> None:
        """Delete memories, entities, links and history; meta and API keys stay."""
        with self.db.transaction():
            self.follower.spoil()
            for suffix in [
                "_links",
                "_postings",
                "_terms",
                "_entities",
                "",
                "_history",
                "_add_log",
            ]:
                self.db.run(f"DELETE FROM {self.c}{suffix}")
            # Scope rows stay (with bumped versions) so no process keeps a stale cached matrix.
            self.db.run(
                f"UPDATE {self.c}_scopes SET n_docs = 0, total_len = 0, ctx_total = 0, "
                "mem_version = mem_version + 1, ent_version = ent_version + 1"
            )
        self.memory_vectors.clear()
        self.entity_vectors.clear()
        self.record_cache.changed()
