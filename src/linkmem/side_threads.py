"""One process-wide pool of threads for work that runs beside a model call.

A search extracts its query's entities while the embedder encodes the query: starting a
thread for that costs ~1.5 ms, a tenth of a search, so the threads are kept; the ONNX
embedder runs a large batch's chunks on them too. Callers wait only for their own futures,
and a caller inside the pool (the embedder, called from a query's entity job) cancels what
has not started and does that share itself, so the pool cannot deadlock on itself; it is
sized for a server's concurrent searches, and its threads start only when needed. A forked
child gets a new pool (the parent's threads do not exist there).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

#: More than a server runs at once on a small machine; idle threads cost nothing but a stack.
MAX_THREADS = 16

_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()


def side_pool() -> ThreadPoolExecutor:
    """The shared pool (created on first use)."""
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(MAX_THREADS, thread_name_prefix="linkmem-side")
        return _pool


def _forget_pool_in_child() -> None:
    global _pool, _lock
    _pool, _lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_pool_in_child)
