"""API keys on SQLite: the ``{collection}_api_keys`` table (migration ``m002_api_keys``).

Keys are not memories: export, restore, audit and reset leave this table alone.
"""

from __future__ import annotations

from dataclasses import astuple

from linkmem.store.base import ApiKeyRow
from linkmem.store.sqlite.connection import Connection

_COLUMNS = "id, key_hash, name, role, user_id, agent_id, created_at, revoked_at, prefix"


class KeyTables:
    """The API-key methods of ``linkmem.store.base.Store``."""

    db: Connection
    c: str

    def put_api_key(self, row: ApiKeyRow) -> None:
        self.db.run(
            f"INSERT INTO {self.c}_api_keys ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?)",
            astuple(row),  # the fields in _COLUMNS order
        )

    def api_keys(self, include_revoked: bool) -> list[ApiKeyRow]:
        where = "" if include_revoked else "WHERE revoked_at IS NULL "
        rows = self.db.rows(
            f"SELECT {_COLUMNS} FROM {self.c}_api_keys {where}ORDER BY created_at, rowid"
        )
        return [ApiKeyRow(*r) for r in rows]

    def api_key_by_hash(self, key_hash: str) -> ApiKeyRow | None:
        rows = self.db.rows(
            f"SELECT {_COLUMNS} FROM {self.c}_api_keys WHERE key_hash = ?", (key_hash,)
        )
        return ApiKeyRow(*rows[0]) if rows else None

    def revoke_api_key(self, key_id: str, at: str) -> ApiKeyRow | None:
        with self.db.transaction():
            self.db.run(
                f"UPDATE {self.c}_api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?",
                (at, key_id),
            )
            rows = self.db.rows(f"SELECT {_COLUMNS} FROM {self.c}_api_keys WHERE id = ?", (key_id,))
        return ApiKeyRow(*rows[0]) if rows else None

    def has_active_api_keys(self) -> bool:
        rows = self.db.rows(
            f"SELECT EXISTS (SELECT 1 FROM {self.c}_api_keys WHERE revoked_at IS NULL)"
        )
        return bool(rows[0][0])
