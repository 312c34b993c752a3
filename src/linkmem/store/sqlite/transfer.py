"""Export and import on SQLite: keyset-paged reads in one read transaction, and entity rows
written with their own ids and times."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any

from linkmem.store.sqlite.connection import Connection
from linkmem.store.sqlite.memories import _MEMORY_COLUMNS, record_from_row
from linkmem.store.transfer import ImportedEntity, runs
from linkmem.store.transfer_mixin import TransferMixin
from linkmem.store.vectors import encode
from linkmem.types import EntityRecord, HistoryEvent, MemoryRecord, Scope


class TransferTables(TransferMixin):
    """The SQLite hooks of ``export_records`` / ``import_records``."""

    db: Connection
    c: str

    def _snapshot(self) -> AbstractContextManager[Any]:
        return self.db.snapshot()

    def _export_source(self) -> tuple[str, str]:
        return "sqlite", self.c

    def _export_counts(self) -> dict[str, int]:
        tables = {"memory": "", "entity": "_entities", "link": "_links", "history": "_history"}
        return {
            kind: self.db.rows(f"SELECT count(*) FROM {self.c}{suffix}")[0][0]
            for kind, suffix in tables.items()
        }

    def _pages(self, sql: str, batch_size: int) -> Iterator[tuple[Any, ...]]:
        """Rows of ``sql`` (selecting the key first, filtering ``key > ?``) page by page."""
        last = -1
        while True:
            rows = self.db.rows(sql, (last, batch_size))
            yield from rows
            if len(rows) < batch_size:
                return
            last = rows[-1][0]

    def _export_memories(self, batch_size: int) -> Iterator[tuple[MemoryRecord, bytes]]:
        sql = (
            f"SELECT m.rowid, {_MEMORY_COLUMNS}, m.embedding FROM {self.c} m "
            f"JOIN {self.c}_scopes s ON s.id = m.scope_id WHERE m.rowid > ? "
            "ORDER BY m.rowid LIMIT ?"
        )
        for row in self._pages(sql, batch_size):
            yield record_from_row(row[1:11]), row[11]

    def _export_entities(self, batch_size: int) -> Iterator[tuple[EntityRecord, str, bytes]]:
        sql = (
            "SELECT e.rowid, e.id, e.text, e.key, e.kind, s.user_id, s.agent_id, s.run_id, "
            f"e.created_at, e.embedding FROM {self.c}_entities e JOIN {self.c}_scopes s "
            "ON s.id = e.scope_id WHERE e.rowid > ? ORDER BY e.rowid LIMIT ?"
        )
        for row in self._pages(sql, batch_size):
            scope = Scope(*(v or None for v in row[5:8]))
            yield EntityRecord(row[1], row[2], row[3], row[4], scope), row[8], row[9]

    def _export_links(self, batch_size: int) -> Iterator[tuple[str, str, bool]]:
        last = (-1, -1)
        while True:
            rows = self.db.rows(
                f"SELECT l.memory, l.entity, m.id, e.id, l.own FROM {self.c}_links l "
                f"JOIN {self.c} m ON m.rowid = l.memory JOIN {self.c}_entities e "
                "ON e.rowid = l.entity WHERE (l.memory, l.entity) > (?, ?) "
                "ORDER BY l.memory, l.entity LIMIT ?",
                (*last, batch_size),
            )
            yield from ((r[2], r[3], bool(r[4])) for r in rows)
            if len(rows) < batch_size:
                return
            last = rows[-1][0], rows[-1][1]

    def _export_history(self, batch_size: int) -> Iterator[HistoryEvent]:
        sql = (
            "SELECT id, memory_id, event, old_text, new_text, created_at, role, actor_id "
            f"FROM {self.c}_history WHERE id > ? ORDER BY id LIMIT ?"
        )
        for row in self._pages(sql, batch_size):
            yield HistoryEvent(*row[1:])

    def _insert_imported(self, entities: list[ImportedEntity]) -> None:
        with self.db.transaction():
            for group in runs(entities, lambda i: i.entity.scope):
                scope_id = self._scope_id(group[0].entity.scope)  # type: ignore[attr-defined]
                self.db.run_many(
                    f"INSERT INTO {self.c}_entities (id, scope_id, key, text, kind, created_at, "
                    "embedding) VALUES (?,?,?,?,?,?,?)",
                    [
                        (e.id, scope_id, e.key, e.text, e.kind, i.created_at, encode(e.vector))
                        for i in group
                        for e in [i.entity]
                    ],
                )
                self._bump([scope_id], "ent_version")  # type: ignore[attr-defined]
