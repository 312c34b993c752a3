"""One SQLite connection shared by the threads of a process, with re-entrant transactions."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from linkmem.errors import StoreError
from linkmem.store import names
from linkmem.store.sqlite.driver import sqlite3
from linkmem.store.sqlite.schema import open_database


def check_collection(name: str) -> str:
    """The collection-name rule of every backend (``linkmem.store.names``): case-insensitive,
    folded to lower case."""
    return names.check_collection(name)


class Connection:
    """Serialises access to one connection. ``BEGIN IMMEDIATE`` takes the file's write lock
    up front, so concurrent writers (threads or processes) queue instead of deadlocking.

    Lock order, the same everywhere: ``self.lock`` (this process's connection), then the
    file's write lock (``BEGIN IMMEDIATE``, which waits for other processes up to the busy
    timeout), then a matrix cache's lock (a leaf: nothing else is taken while it is held).
    After-commit callbacks run once ``self.lock`` is released.
    """

    def __init__(self, path: str | Path) -> None:
        self.raw = open_database(path)  # StoreError (saying what to do) for a bad path
        self.lock = threading.RLock()
        self._depth = 0
        self._after_commit: list[Callable[[], None]] = []
        self._before_commit: list[Callable[[], None]] = []
        #: What the writers of the open write transaction keep for its length.
        self.state: dict[str, Any] = {}

    @contextmanager
    def transaction(self) -> Iterator[None]:
        callbacks: list[Callable[[], None]] = []
        with self.lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            self._begin()
            self._depth = 1
            self._before_commit, self.state = [], {}
            try:
                yield
                for last in self._before_commit:  # the body succeeded
                    last()
            except BaseException:
                self._depth = 0
                self._after_commit.clear()
                if self.raw.in_transaction:  # SQLite rolls back by itself on some errors
                    self.raw.execute("ROLLBACK")
                raise
            self._depth = 0
            callbacks = self._commit()
        # After the lock is released: callbacks take other locks (the matrix caches), and
        # one lock order (connection, then cache) must hold everywhere.
        for callback in callbacks:
            callback()

    @property
    def in_transaction(self) -> bool:
        """Whether this connection is inside a transaction (hold ``lock`` to ask for one's
        own thread: another thread's transaction holds it)."""
        return self._depth > 0

    def before_commit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` as the last statements of the current write transaction, once its
        body has succeeded (never, when it fails)."""
        self._before_commit.append(callback)

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once the current write transaction has committed (dropped if it
        rolls back): in-process caches follow the file only after the file has changed."""
        self._after_commit.append(callback)

    @contextmanager
    def snapshot(self) -> Iterator[bool]:
        """A read transaction (joins an open one): one consistent view of the file that does
        not block other writers (WAL). Holds this connection for the block, as writes do.
        Yields True for a view of committed data, False when it joined an open transaction
        (whose writes may still roll back)."""
        with self.lock:
            if self._depth:
                yield False
                return
            self.raw.execute("BEGIN")
            self._depth = 1
            try:
                yield True
            finally:
                self._depth = 0
                self.raw.execute("COMMIT")

    def _begin(self) -> None:
        try:
            self.raw.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as e:
            raise StoreError(f"cannot start a write transaction: {e}") from e

    def _commit(self) -> list[Callable[[], None]]:
        """Commit; returns the after-commit callbacks for the caller to run once unlocked."""
        callbacks, self._after_commit = self._after_commit, []
        try:
            self.raw.execute("COMMIT")
        except sqlite3.Error as e:
            if self.raw.in_transaction:
                self.raw.execute("ROLLBACK")
            raise StoreError(f"commit failed and was rolled back: {e}") from e
        return callbacks

    def rows(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self.lock, _wrapped():
            return self.raw.execute(sql, args).fetchall()

    def run(self, sql: str, args: Sequence[Any] = ()) -> int:
        """Execute a write statement inside the current (or a new) transaction."""
        with self.transaction(), _wrapped():
            return self.raw.execute(sql, args).rowcount

    def run_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with self.transaction(), _wrapped():
            self.raw.executemany(sql, rows)

    def close(self) -> None:
        with self.lock:
            self.raw.close()


@contextmanager
def _wrapped() -> Iterator[None]:
    """A driver error (disk full, file locked past the busy timeout, ...) as ``StoreError``;
    the enclosing transaction rolls back as it leaves."""
    try:
        yield
    except sqlite3.Error as e:
        raise StoreError(f"SQLite failed: {e}; the transaction was rolled back") from e


#: Ids per statement: below SQLite's default limit of 999 bound parameters.
CHUNK = 900


def placeholders(n: int) -> str:
    return ",".join("?" * n)
