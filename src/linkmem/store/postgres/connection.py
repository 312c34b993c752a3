"""A psycopg connection pool with re-entrant, thread-local transactions and wrapped errors.

The outermost ``transaction()`` of a thread takes a connection from the pool and opens a
transaction on it; nested blocks, and every statement run inside, reuse that connection. A
statement run outside any block is its own transaction (autocommit); ``connection()`` keeps one
pooled connection for a group of such statements (one checkout instead of one per statement).

Outages: a dead pooled connection fails the pool's check (a round trip) and is replaced; a
block that takes its connection unchecked (``connection(checked=False)``, a search's reads)
finds it dead on its first statement instead, and the connection is closed so the pool
replaces it; the caller may then run the block again on a checked one. A wait for a pooled
connection longer than ``PROBE_AFTER`` probes the server with a direct connect, so a server that
does not answer raises ``BackendUnavailable`` within a few seconds, while a server that answers
means the pool is busy (``StoreError`` after ``POOL_TIMEOUT``). The pool gives up re-creating a
connection after ``RECONNECT_TIMEOUT`` instead of backing off for minutes, so the next request
connects at once and the store recovers within seconds of the server's return.

Conflicts: ``run_in_transaction(work)`` runs ``work`` in the outermost transaction and re-runs
it after a deadlock or serialisation failure (bounded, jittered backoff); inside an open block it
joins that block, and the outermost level decides.
"""

from __future__ import annotations

import functools
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from linkmem.errors import BackendUnavailable, ConfigError, InvalidInput, StoreError
from linkmem.store.postgres.driver import ConnectionPool, PoolTimeout, conninfo_to_dict, psycopg

#: Seconds to open one connection (unless the DSN sets connect_timeout).
CONNECT_TIMEOUT = 5
#: Longest wait for a pooled connection while the server answers (every connection is busy).
POOL_TIMEOUT = 30.0
#: A wait for a pooled connection this long probes the server; at most one probe this often.
PROBE_AFTER = 1.0
#: Seconds the probe waits for the server to answer.
PROBE_TIMEOUT = 2
#: The pool stops re-creating a lost connection after this many seconds of failed attempts.
RECONNECT_TIMEOUT = 2.0
#: Longest wait for a second pooled connection that a read may use beside its first.
SPARE_WAIT = 0.001
#: SQLSTATEs after which the whole transaction can simply be run again.
RETRYABLE = frozenset({"40P01", "40001"})  # deadlock detected, serialization failure
#: SQLSTATEs of a prepared statement the server does not have, or has already.
LOST_PREPARED = frozenset({"26000", "42P05"})  # invalid_sql_statement_name, duplicate_prepared
#: Runs of a transaction that keeps hitting deadlocks or serialisation failures.
MAX_ATTEMPTS = 5
#: First backoff before a re-run (doubles per attempt, jittered +-50%).
RETRY_BACKOFF = 0.02

T = TypeVar("T")
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
    message = _first_line(e)
    if isinstance(e, PoolTimeout):
        return StoreError(
            f"no free connection to {location} within {POOL_TIMEOUT:.0f}s while the server "
            "answers: every pooled connection is busy; raise postgres.pool_max or look for "
            "long transactions"
        )
    sqlstate = getattr(e, "sqlstate", None) or ""
    if isinstance(e, psycopg.OperationalError) and _is_connection_loss(sqlstate):
        return BackendUnavailable(
            f"lost the connection to {location} (server unreachable or shutting down): "
            f"{message}; {_CHECK}"
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
        self._dsn = dsn
        self._connect_timeout = _connect_timeout(dsn)
        self._answered_at = float("-inf")  # time.monotonic() of the last successful probe
        self._probe(self._connect_timeout)  # a wrong DSN fails here, with a clear message
        self._local = threading.local()
        #: Whether a search's statements are prepared on the server (``search_connections``);
        #: off for good once the server lost one (a pooler such as PgBouncer before 1.21).
        self.prepares_searches = True
        self.pool = ConnectionPool(
            dsn,
            min_size=max(0, pool_min),
            max_size=max(1, pool_max, pool_min),
            # No server-side prepared statements but a search's (``prepares_searches``), and
            # those planned for each execution (``plan_cache_mode``): every search gets a plan
            # for its own scope (HNSW or exact).
            kwargs={
                "autocommit": True,
                "application_name": "linkmem",
                "prepare_threshold": None,
                "connect_timeout": self._connect_timeout,
            },
            check=self._check,
            configure=_custom_plans,
            timeout=POOL_TIMEOUT,
            reconnect_timeout=RECONNECT_TIMEOUT,
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

    def _probe(self, timeout: int) -> None:
        """Connect once, directly: ``BackendUnavailable`` saying why when the server does not
        answer (refused, timed out, shutting down, wrong password...). A success is trusted
        for ``PROBE_AFTER`` seconds."""
        if time.monotonic() - self._answered_at < PROBE_AFTER:
            return
        try:
            probe = psycopg.connect(
                self._dsn, connect_timeout=timeout, application_name="linkmem-probe"
            )
            probe.close()
        except psycopg.Error as e:
            raise BackendUnavailable(
                f"PostgreSQL at {self.location} is unreachable: {_first_line(e)}; {_CHECK}"
            ) from e
        self._answered_at = time.monotonic()

    def _check(self, conn: Any) -> None:
        """The pool's check of a connection it hands out (a round trip), unless this thread
        takes it unchecked (``_unchecked``)."""
        if not getattr(self._local, "unchecked", False):
            ConnectionPool.check_connection(conn)

    def _getconn(self, timeout: float, checked: bool) -> Any:
        self._local.unchecked = not checked
        try:
            return self.pool.getconn(timeout=timeout)
        finally:
            self._local.unchecked = False

    def _checkout(self, checked: bool = True) -> Any:
        """A pooled connection. While none is free the server is probed every ``PROBE_AFTER``
        seconds: ``BackendUnavailable`` as soon as it does not answer, ``PoolTimeout`` after
        ``POOL_TIMEOUT`` when it does (every connection is busy)."""
        deadline = time.monotonic() + POOL_TIMEOUT
        while True:
            wait = min(PROBE_AFTER, deadline - time.monotonic())
            try:
                return self._getconn(max(wait, 0.0), checked)
            except PoolTimeout:
                if time.monotonic() >= deadline:
                    raise
            try:
                self._probe(PROBE_TIMEOUT)
            finally:
                # Drop the dead idle connections now (or, once the server is back, connect
                # again at once) instead of one per checkout.
                self.pool.check()

    def holds_connection(self) -> bool:
        """Whether this thread is inside a block that holds a connection (``connection()``
        then yields that one)."""
        return getattr(self._local, "conn", None) is not None

    @contextmanager
    def connection(self, checked: bool = True) -> Iterator[Any]:
        """This thread's connection: the one of its open block, else one from the pool for the
        duration of this block (autocommit: each statement is its own transaction). Not
        ``checked``: taken from the pool without its check, a round trip (see the module
        docstring)."""
        current = getattr(self._local, "conn", None)
        if current is not None:
            yield current
            return
        try:
            conn = self._checkout(checked)
        except PoolTimeout as e:
            raise wrap_error(e, self.location) from e
        self._local.conn = conn
        try:
            yield conn
        except psycopg.Error as e:
            raise self._failed(conn, e) from e
        finally:
            self._local.conn = None
            self.pool.putconn(conn)

    @contextmanager
    def spare_connection(self, checked: bool = True) -> Iterator[Any | None]:
        """Another pooled connection for statements that can run beside this thread's, when
        one is free at once; None otherwise (the pool then opens one for later calls, up to
        its maximum). ``checked`` as for ``connection``."""
        try:
            conn = self._getconn(SPARE_WAIT, checked)
        except PoolTimeout:
            yield None
            return
        try:
            yield conn
        except psycopg.Error as e:
            raise self._failed(conn, e) from e
        finally:
            self.pool.putconn(conn)

    def _failed(self, conn: Any, e: psycopg.Error) -> Exception:
        """The linkmem error for ``e`` on ``conn``; a connection lost is closed first, so
        the pool replaces it (libpq may not have seen the end of it yet)."""
        error = wrap_error(e, self.location)
        if isinstance(error, BackendUnavailable):
            conn.close()
        return error

    def in_transaction(self) -> bool:
        return getattr(self._local, "in_transaction", False)

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """This thread's connection inside a transaction; nested blocks join the outermost."""
        if self.in_transaction():
            yield self._local.conn
            return
        self._local.after_commit = []
        self._local.before_commit = []
        self._local.state = {}
        with self.connection() as conn:
            try:
                with conn.transaction():
                    self._local.in_transaction = True
                    try:
                        yield conn
                        for last in self._local.before_commit:  # the body succeeded
                            last(conn)
                    finally:
                        self._local.in_transaction = False
            except psycopg.Error as e:
                raise wrap_error(e, self.location) from e
            finally:
                done, self._local.after_commit = self._local.after_commit, []
                self._local.before_commit, self._local.state = [], {}
        for call in done:  # committed (an exception skips this)
            call()

    def before_commit(self, call: Callable[[Any], None]) -> None:
        """``call(conn)`` as the last statements of this thread's open transaction, once its
        body has succeeded (never, when it fails)."""
        self._local.before_commit.append(call)

    def transaction_state(self) -> dict[str, Any] | None:
        """What the writers of this thread's open transaction keep for its length (None when
        none is open)."""
        return self._local.state if self.in_transaction() else None

    def after_commit(self, call: Callable[[], None]) -> None:
        """``call()`` once this thread's open transaction has committed (never, when it rolls
        back); now when none is open."""
        if self.in_transaction():
            self._local.after_commit.append(call)
        else:
            call()

    def run_in_transaction(self, work: Callable[[], T]) -> T:
        """``work()`` in a transaction, re-run (at most ``MAX_ATTEMPTS`` times, with jittered
        backoff) after a deadlock or serialisation failure. Inside an open block ``work`` joins
        it: only the outermost transaction can be re-run, so the conflict goes up to it."""
        if self.in_transaction():
            return work()
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                with self.transaction():
                    return work()
            except StoreError as e:
                if attempt == MAX_ATTEMPTS or not is_retryable(e):
                    raise
            time.sleep(RETRY_BACKOFF * 2 ** (attempt - 1) * random.uniform(0.5, 1.5))
        raise AssertionError("unreachable")

    @contextmanager
    def snapshot(self) -> Iterator[Any]:
        """A read-only REPEATABLE READ transaction: every statement of the block sees the same
        snapshot (an open transaction of this thread is joined instead)."""
        if self.in_transaction():
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


def _custom_plans(conn: Any) -> None:
    """A prepared statement is planned for its arguments at every execution, as a statement
    that is not: after five executions PostgreSQL may keep one generic plan instead, which
    does not see the scope's size (measured: the dense read's rows differed on 51 of 120)."""
    conn.execute("SET plan_cache_mode = force_custom_plan")


def sqlstate_of(error: BaseException) -> str | None:
    """The SQLSTATE of a wrapped driver error."""
    return getattr(error.__cause__, "sqlstate", None)


def is_retryable(error: BaseException) -> bool:
    """A wrapped deadlock or serialisation failure: running the transaction again can work."""
    return sqlstate_of(error) in RETRYABLE


def _connect_timeout(dsn: str) -> int:
    """The DSN's connect_timeout, else ``CONNECT_TIMEOUT`` (libpq would wait 130 s)."""
    value = conninfo_to_dict(dsn).get("connect_timeout")
    return int(value) if value else CONNECT_TIMEOUT


def _first_line(e: Exception) -> str:
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


F = TypeVar("F", bound=Callable[..., Any])


def one_connection(method: F) -> F:
    """Run a store method's statements on one pooled connection (``self.db``)."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self.db.connection():
            return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


def retried(method: F) -> F:
    """Run a store write method through ``self.db.run_in_transaction``: called on its own it
    is one transaction, re-run after a deadlock; inside an open block it joins the block."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        return self.db.run_in_transaction(lambda: method(self, *args, **kwargs))

    return wrapper  # type: ignore[return-value]
