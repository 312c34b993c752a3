"""A psycopg connection pool with re-entrant, thread-local transactions and wrapped errors.

The outermost ``transaction()`` of a thread takes a connection from the pool and opens a
transaction on it; nested blocks, and every statement run inside, reuse that connection. A
statement run outside any block is its own transaction (autocommit); ``connection()`` keeps one
pooled connection for a group of such statements (one checkout instead of one per statement).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from linkmem.errors import BackendUnavailable, ConfigError, InvalidInput, StoreError
from linkmem.store.postgres.driver import ConnectionPool, PoolTimeout, conninfo_to_dict, psycopg

CONNECT_TIMEOUT = 10
POOL_TIMEOUT = 30.0
_CHECK = (
    "check that the server is running and reachable, and the DSN (setting postgres.dsn or "
    "LINKMEM_PG_DSN): host, port, database, user and password"
)


def describe_dsn(dsn: str) -> str:
    """``postgresql://user@host:port/dbname``: where the store lives, without the password."""
    try:
        parts = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError as e:
        raise ConfigError(f"postgres.dsn is not a valid DSN or URL: {e}") from e
    user = f"{parts['user']}@" if parts.get("user") else ""
    host = parts.get("host") or "localhost"
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"postgresql://{user}{host}{port}/{parts.get('dbname') or ''}"


def wrap_error(e: Exception, location: str) -> Exception:
    """The linkmem error for a driver error (the caller raises it ``from e``)."""
    message = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    if isinstance(e, PoolTimeout):
        return StoreError(
            f"no free connection to {location} within {POOL_TIMEOUT:.0f}s: every pooled "
            "connection is busy; raise postgres.pool_max or look for long transactions"
        )
    sqlstate = getattr(e, "sqlstate", None) or ""
    if isinstance(e, psycopg.OperationalError) and _is_connection_loss(sqlstate):
        return BackendUnavailable(
            f"lost or cannot get a connection to {location}: {message}; {_CHECK}"
        )
    if isinstance(e, psycopg.DataError) and ("NUL" in str(e) or "\\u0000" in str(e)):
        return InvalidInput(
            f"PostgreSQL cannot store NUL (\\x00) characters: {message}; "
            "remove them from the text or metadata"
        )
    code = f" [{sqlstate}]" if sqlstate else ""
    retry = "; retry the call" if sqlstate.startswith("40") else ""
    return StoreError(
        f"PostgreSQL error at {location}{code}: {message}; the transaction was rolled back{retry}"
    )


def _is_connection_loss(sqlstate: str) -> bool:
    """No SQLSTATE (client side), class 08 (connection exception) or a server shutting down."""
    return not sqlstate or sqlstate.startswith("08") or sqlstate in ("57P01", "57P02", "57P03")


class Database:
    """The pool and each thread's current transaction."""

    def __init__(self, dsn: str, pool_min: int = 1, pool_max: int = 8) -> None:
        self.location = describe_dsn(dsn)
        self._check_connect(dsn)
        self.pool = ConnectionPool(
            dsn,
            min_size=max(0, pool_min),
            max_size=max(1, pool_max, pool_min),
            # No server-side prepared statements: every search gets a plan for its own scope
            # (HNSW or exact), and transaction-mode poolers such as PgBouncer work.
            kwargs={"autocommit": True, "application_name": "linkmem", "prepare_threshold": None},
            check=ConnectionPool.check_connection,
            timeout=POOL_TIMEOUT,
            open=False,
            name=f"linkmem:{self.location}",
        )
        try:
            self.pool.open(wait=pool_min > 0, timeout=POOL_TIMEOUT)
        except PoolTimeout as e:
            self.pool.close()
            raise BackendUnavailable(
                f"cannot fill the connection pool for {self.location}; {_CHECK}"
            ) from e
        self._local = threading.local()

    def _check_connect(self, dsn: str) -> None:
        """Connect once up front so a wrong DSN fails here with a clear message."""
        try:
            psycopg.connect(dsn, connect_timeout=CONNECT_TIMEOUT).close()
        except psycopg.Error as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise BackendUnavailable(
                f"cannot connect to PostgreSQL at {self.location}: {first}; {_CHECK}"
            ) from e

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """This thread's connection: the one of its open block, else one from the pool for the
        duration of this block (autocommit: each statement is its own transaction)."""
        current = getattr(self._local, "conn", None)
        if current is not None:
            yield current
            return
        try:
            with self.pool.connection() as conn:
                self._local.conn = conn
                try:
                    yield conn
                finally:
                    self._local.conn = None
        except (psycopg.Error, PoolTimeout) as e:
            raise wrap_error(e, self.location) from e

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """This thread's connection inside a transaction; nested blocks join the outermost."""
        if getattr(self._local, "in_transaction", False):
            yield self._local.conn
            return
        with self.connection() as conn:
            try:
                with conn.transaction():
                    self._local.in_transaction = True
                    try:
                        yield conn
                    finally:
                        self._local.in_transaction = False
            except psycopg.Error as e:
                raise wrap_error(e, self.location) from e

    @contextmanager
    def snapshot(self) -> Iterator[Any]:
        """A read-only REPEATABLE READ transaction: every statement of the block sees the same
        snapshot (an open transaction of this thread is joined instead)."""
        if getattr(self._local, "in_transaction", False):
            yield self._local.conn
            return
        with self.transaction() as conn:
            self.execute(conn, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield conn

    def execute(self, conn: Any, query: str, args: Sequence[Any] = ()) -> Any:
        try:
            return conn.execute(query, args)
        except psycopg.Error as e:
            raise wrap_error(e, self.location) from e

    def rows(self, query: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self.connection() as conn:
            return self.execute(conn, query, args).fetchall()

    def value(self, query: str, args: Sequence[Any] = ()) -> Any:
        """The first column of the first row, or None."""
        rows = self.rows(query, args)
        return rows[0][0] if rows else None

    def run(self, query: str, args: Sequence[Any] = ()) -> int:
        """Execute one statement (atomic on its own); returns the number of rows it touched."""
        with self.connection() as conn:
            return self.execute(conn, query, args).rowcount

    def close(self) -> None:
        self.pool.close()


F = TypeVar("F", bound=Callable[..., Any])


def one_connection(method: F) -> F:
    """Run a store method's statements on one pooled connection (``self.db``)."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self.db.connection():
            return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]
