"""Import psycopg 3 and its pool once; without them the postgres store is unavailable."""

from __future__ import annotations

from linkmem.errors import BackendUnavailable

try:
    import psycopg
    from psycopg.conninfo import conninfo_to_dict
    from psycopg_pool import ConnectionPool, PoolTimeout
except ImportError as e:  # pragma: no cover - exercised by the optional-dependency tests
    raise BackendUnavailable(
        f"the postgres store needs psycopg 3 and psycopg_pool ({e.name or e} is missing); "
        "run: pip install 'linkmem[postgres]'",
        name=e.name,
    ) from e

__all__ = ["ConnectionPool", "PoolTimeout", "conninfo_to_dict", "psycopg"]
