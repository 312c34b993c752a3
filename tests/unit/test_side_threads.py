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


def test_a_batch_embedded_from_a_full_pool_does_not_wait_for_it() -> None:
    """Every side thread busy (a server's searches): a large batch, itself called from a side
    thread as a query's entity job is, runs its chunks in the calling thread instead of
    waiting for helpers that cannot start."""
    from linkmem.embed.onnx import OnnxMiniLMEmbedder
    from linkmem.embed.vector_cache import VectorCache
    from linkmem.side_threads import MAX_THREADS

    embedder = OnnxMiniLMEmbedder(threads=2).load()
    embedder.vector_cache = VectorCache(0)  # every call runs the model
    texts = [f"text number {i} about Max the dog in Lisbon" for i in range(64)]
    expected = embedder.embed_batch(texts)
    release = threading.Event()
    started = threading.Barrier(MAX_THREADS)

    def hold() -> None:
        started.wait(timeout=10)
        release.wait(timeout=60)

    blockers = [side_pool().submit(hold) for _ in range(MAX_THREADS - 1)]
    try:
        job = side_pool().submit(lambda: (started.wait(timeout=10), embedder.embed_batch(texts)))
        _, got = job.result(timeout=30)  # the watchdog: a deadlock fails here
    finally:
        release.set()
        for blocker in blockers:
            blocker.result(timeout=10)
    assert (got == expected).all()
