"""Choose the SQLite driver once: ``pysqlite3`` when installed (newer SQLite), else ``sqlite3``."""

from __future__ import annotations

import sqlite3 as _stdlib_sqlite3
from types import ModuleType


def _pick() -> ModuleType:
    try:
        import pysqlite3.dbapi2 as pysqlite3  # type: ignore[import-not-found]
    except ImportError:
        return _stdlib_sqlite3
    return pysqlite3


sqlite3 = _pick()
