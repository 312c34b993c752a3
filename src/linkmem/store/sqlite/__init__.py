"""SQLite backend."""

from linkmem.store.sqlite.store import SQLiteStore

__all__ = ["SQLiteStore"]
