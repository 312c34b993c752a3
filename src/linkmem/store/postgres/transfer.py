"""Export and import on PostgreSQL: server-side cursors in one read-only REPEATABLE READ
transaction, vectors read in pgvector's binary form, entity rows written with their own ids
and times."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from linkmem.store.postgres import sql
from linkmem.store.postgres.connection import Database, wrap_error
from linkmem.store.postgres.driver import psycopg
from linkmem.store.postgres.memories import record_from_row
from linkmem.store.postgres.sql import MEMORY_COLUMNS, Tables, vector_literal
from linkmem.store.postgres.write_follow import WriteFollower
from linkmem.store.transfer import ImportedEntity, runs
from linkmem.store.transfer_mixin import TransferMixin
from linkmem.types import EntityRecord, HistoryEvent, MemoryRecord, Scope


# SQL ------------------------------------------------------------------------------------------
def export_memories(t: Tables) -> str:
    return (
        f"SELECT {MEMORY_COLUMNS}, vector_send(m.embedding) FROM {t.mem} m "
        f"JOIN {t.scopes} s ON s.id = m.scope_id ORDER BY m.seq"
    )


def export_entities(t: Tables) -> str:
    return (
        "SELECT e.id, e.text, e.key, e.kind, s.user_id, s.agent_id, s.run_id, e.created_at, "
        f"vector_send(e.embedding) FROM {t.entities} e JOIN {t.scopes} s ON s.id = e.scope_id "
        "ORDER BY e.seq"
    )


def export_links(t: Tables) -> str:
    return (
        f"SELECT m.id, e.id, l.own FROM {t.links} l JOIN {t.mem} m ON m.id = l.memory "
        f"JOIN {t.entities} e ON e.id = l.entity ORDER BY m.seq, e.seq"
    )


def export_history(t: Tables) -> str:
    return (
        "SELECT memory_id, event, old_text, new_text, created_at, role, actor_id "
        f"FROM {t.history} ORDER BY id"
    )


def insert_imported_entities(t: Tables) -> str:
    return (
        f"INSERT INTO {t.entities} (id, scope_id, key, text, kind, created_at, embedding) "
        "SELECT i, %s::bigint, k, x, kd, ca, e::vector FROM unnest(%s::text[], %s::text[], "
        "%s::text[], %s::text[], %s::text[], %s::text[]) WITH ORDINALITY "
        "AS u(i, k, x, kd, ca, e, ord) ORDER BY ord"
    )


def from_vector_send(raw: bytes) -> bytes:
    """pgvector's binary form (int16 dim, int16 unused, big-endian float4s) as little-endian
    float32 bytes."""
    return np.frombuffer(raw, dtype=">f4", offset=4).astype("<f4").tobytes()


class TransferTables(TransferMixin):
    """The PostgreSQL hooks of ``export_records`` / ``import_records``."""

    db: Database
    t: Tables
    follower: WriteFollower

    def _snapshot(self) -> AbstractContextManager[Any]:
        return self.db.snapshot()

    def _export_source(self) -> tuple[str, str]:
        return "postgres", self.t.c

    def _export_counts(self) -> dict[str, int]:
        tables = {
            "memory": self.t.mem,
            "entity": self.t.entities,
            "link": self.t.links,
            "history": self.t.history,
        }
        return {k: int(self.db.value(f"SELECT count(*) FROM {v}")) for k, v in tables.items()}

    def _stream(self, query: str, batch_size: int) -> Iterator[tuple[Any, ...]]:
        """The rows of ``query`` through a server-side cursor, ``batch_size`` at a time."""
        with self.db.transaction() as conn:
            try:
                with conn.cursor(name="linkmem_export") as cursor:
                    cursor.itersize = batch_size
                    cursor.execute(query)
                    while rows := cursor.fetchmany(batch_size):
                        yield from rows
            except psycopg.Error as e:
                raise wrap_error(e, self.db.location) from e

    def _export_memories(self, batch_size: int) -> Iterator[tuple[MemoryRecord, bytes]]:
        for row in self._stream(export_memories(self.t), batch_size):
            yield record_from_row(row), from_vector_send(row[10])

    def _export_entities(self, batch_size: int) -> Iterator[tuple[EntityRecord, str, bytes]]:
        for row in self._stream(export_entities(self.t), batch_size):
            scope = Scope(*(v or None for v in row[4:7]))
            yield EntityRecord(*row[:4], scope), row[7], from_vector_send(row[8])

    def _export_links(self, batch_size: int) -> Iterator[tuple[str, str, bool]]:
        for row in self._stream(export_links(self.t), batch_size):
            yield row[0], row[1], row[2]

    def _export_history(self, batch_size: int) -> Iterator[HistoryEvent]:
        for row in self._stream(export_history(self.t), batch_size):
            yield HistoryEvent(*row)

    def _insert_imported(self, entities: list[ImportedEntity]) -> None:
        groups = list(runs(entities, lambda i: i.entity.scope))
        with self.db.transaction() as conn:
            scope_ids = [self._scope_id(g[0].entity.scope) for g in groups]  # type: ignore[attr-defined]
            # Locked before any seq is drawn, as every writer does: a scope's seqs then grow
            # in commit order, which the appended loads rely on (``m014_rewrite_counts``).
            self.follower.spoil()
            self.db.execute(conn, sql.lock_scopes(self.t), (sorted(set(scope_ids)),))
            for group, scope_id in zip(groups, scope_ids, strict=True):
                columns = [
                    (e.id, e.key, e.text, e.kind, i.created_at, vector_literal(e.vector))
                    for i in group
                    for e in [i.entity]
                ]
                self.db.execute(
                    conn,
                    insert_imported_entities(self.t),
                    [scope_id, *(list(c) for c in zip(*columns))],
                )
