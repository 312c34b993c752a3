"""The shared side pool: reused across calls, and usable again in a forked child."""

from __future__ import annotations

import multiprocessing
import threading

import pytest

from linkmem.side_threads import side_pool


def test_pool_is_shared_and_threads_are_reused() -> None:
    assert side_pool() is side_pool()
    pool = side_pool()
    names = {pool.submit(lambda: threading.current_thread().name).result() for _ in range(20)}
    assert all(name.startswith("linkmem-side") for name in names)
    assert len(names) < 20


def _child_uses_pool(queue: multiprocessing.Queue) -> None:
    queue.put(side_pool().submit(lambda: 6 * 7).result(timeout=10))


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork")
def test_forked_child_gets_a_working_pool() -> None:
    side_pool().submit(lambda: None).result()  # the parent's pool has a thread
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_child_uses_pool, args=(queue,))
    child.start()
    child.join(timeout=30)
    assert child.exitcode == 0
    assert queue.get(timeout=5) == 42
