"""One process-wide pool of threads for work that runs beside a model call.

A search embeds its query on one while it reads the store (``Beside``): starting a thread
for that costs ~1.5 ms, a tenth of a search, so the threads are kept; the ONNX embedder runs
a large batch's chunks on them too. Callers wait only for their own futures, and a caller
whose work no pool thread has started (a busy pool, or a caller that is itself a pool thread:
the embedder inside a query's embedding) cancels it and does it itself, so the pool cannot
deadlock on itself; it is sized for a server's concurrent searches, and its threads start
only when needed. A forked child gets a new pool (the parent's threads do not exist there).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

T = TypeVar("T")

#: More than a server runs at once on a small machine; idle threads cost nothing but a stack.
MAX_THREADS = 16
#: Seconds ``Beside`` waits for a pool thread to start its work: a free thread starts it in
#: ~0.04 ms (p99 0.15 ms, 300 starts at load 6-7); a busy pool costs the caller no more.
START_WAIT = 0.001

_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()


def side_pool() -> ThreadPoolExecutor:
    """The shared pool (created on first use)."""
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(MAX_THREADS, thread_name_prefix="linkmem-side")
        return _pool


class Beside(Generic[T]):
    """``work()`` started on the side pool, its value kept for ``result``. Whoever asks for
    the value before a pool thread has started the work (a busy pool) does it itself, so
    waiting for it never depends on a free pool thread.

    The constructor returns once a pool thread has started the work (or after
    ``START_WAIT``): a caller that went on at once would hold the GIL in its own Python code
    while the pool thread waits for it to begin, up to the interpreter's switch interval
    (5 ms) later, so a model call that releases the GIL would not run beside the caller.
    ``beside=False`` does the work at once on the caller's thread (what it costs alone)."""

    def __init__(self, work: Callable[[], T], beside: bool = True) -> None:
        self._work = work
        self._lock = threading.Lock()
        self._done = not beside
        self._value: T | None = None if beside else work()
        self._future: Future[T] | None = None
        if beside:
            self._start(work)

    def _start(self, work: Callable[[], T]) -> None:
        started = threading.Event()

        def start() -> T:
            started.set()
            return work()

        self._future = side_pool().submit(start)
        started.wait(START_WAIT)

    def result(self) -> T:
        """The value (the work's exception, if it raised); the same object on every call."""
        with self._lock:
            if not self._done:
                assert self._future is not None  # not done: started beside
                self._value = self._work() if self._future.cancel() else self._future.result()
                self._done = True
            return self._value  # type: ignore[return-value]

    def cancel(self) -> None:
        """Drop the work if no pool thread has started it (its value is no longer wanted)."""
        if self._future is not None:
            self._future.cancel()


def _forget_pool_in_child() -> None:
    global _pool, _lock
    _pool, _lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_pool_in_child)
