"""API keys on PostgreSQL: the ``{collection}_api_keys`` table (migration ``m002_api_keys``).

Keys are not memories: export, restore, audit and reset leave this table alone. Every method
is one statement, so each is atomic on its own and joins an open transaction of the thread.
"""

from __future__ import annotations

from dataclasses import astuple

from linkmem.store.base import ApiKeyRow
from linkmem.store.postgres.connection import Database
from linkmem.store.postgres.sql import Tables

_COLUMNS = "id, key_hash, name, role, user_id, agent_id, created_at, revoked_at, prefix"


def keys_table(t: Tables) -> str:
    """The quoted name of collection ``t.c``'s API-key table."""
    return t.index("_api_keys")


class KeyTables:
    """The API-key methods of ``linkmem.store.base.Store``."""

    db: Database
    t: Tables

    def put_api_key(self, row: ApiKeyRow) -> None:
        self.db.run(
            f"INSERT INTO {keys_table(self.t)} ({_COLUMNS}) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            astuple(row),  # the fields in _COLUMNS order
        )

    def api_keys(self, include_revoked: bool) -> list[ApiKeyRow]:
        where = "" if include_revoked else "WHERE revoked_at IS NULL "
        rows = self.db.rows(
            f"SELECT {_COLUMNS} FROM {keys_table(self.t)} {where}ORDER BY created_at, seq"
        )
        return [ApiKeyRow(*r) for r in rows]

    def api_key_by_hash(self, key_hash: str) -> ApiKeyRow | None:
        rows = self.db.rows(
            f"SELECT {_COLUMNS} FROM {keys_table(self.t)} WHERE key_hash = %s", (key_hash,)
        )
        return ApiKeyRow(*rows[0]) if rows else None

    def revoke_api_key(self, key_id: str, at: str) -> ApiKeyRow | None:
        rows = self.db.rows(
            f"UPDATE {keys_table(self.t)} SET revoked_at = coalesce(revoked_at, %s) "
            f"WHERE id = %s RETURNING {_COLUMNS}",
            (at, key_id),
        )
        return ApiKeyRow(*rows[0]) if rows else None

    def has_active_api_keys(self) -> bool:
        return bool(
            self.db.value(
                f"SELECT EXISTS (SELECT 1 FROM {keys_table(self.t)} WHERE revoked_at IS NULL)"
            )
        )
