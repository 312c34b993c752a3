"""``side_threads.Beside``: work started on the side pool, never waiting for a busy pool;
the query's encoding started beside the caller or done on its thread."""

from __future__ import annotations

import threading

import pytest

from linkmem.config import RetrievalConfig
from linkmem.embed.fake import FakeEmbedder
from linkmem.encoding import encode_query, start_query
from linkmem.side_threads import MAX_THREADS, Beside, side_pool


def test_the_value_is_the_works_and_the_same_object_each_time() -> None:
    started = threading.Event()

    def work() -> list[str]:
        started.set()
        return [threading.current_thread().name]

    beside = Beside(work)
    # a loaded machine may start it after Beside's short wait: asked for before a pool
    # thread took it, the caller would do it itself (the next tests)
    assert started.wait(30)
    first = beside.result()
    assert first is beside.result()
    assert first[0].startswith("linkmem-side")  # it ran on the pool


def test_the_works_error_reaches_the_caller() -> None:
    def fail() -> None:
        raise ValueError("no model")

    with pytest.raises(ValueError, match="no model"):
        Beside(fail).result()


def test_with_every_pool_thread_busy_the_caller_does_the_work() -> None:
    release = threading.Event()
    blockers = [side_pool().submit(release.wait, 30) for _ in range(MAX_THREADS)]
    try:
        beside = Beside(lambda: threading.current_thread().name)
        assert beside.result() == threading.current_thread().name
    finally:
        release.set()
        for blocker in blockers:
            blocker.result(timeout=30)


def test_cancelled_work_that_is_asked_for_after_all_runs_in_the_caller() -> None:
    release = threading.Event()
    blockers = [side_pool().submit(release.wait, 30) for _ in range(MAX_THREADS)]
    try:
        beside = Beside(lambda: 42)
        beside.cancel()
        assert beside.result() == 42
    finally:
        release.set()
        for blocker in blockers:
            blocker.result(timeout=30)


def test_not_beside_the_work_runs_at_once_on_the_callers_thread() -> None:
    ran: list[str] = []
    beside = Beside(lambda: ran.append(threading.current_thread().name) or 7, beside=False)
    assert ran == [threading.current_thread().name]  # before anyone asked for it
    beside.cancel()  # nothing to cancel
    assert beside.result() == 7
    assert ran == [threading.current_thread().name]  # once


def test_encode_query_and_start_query_give_the_same_vector_and_spans() -> None:
    embedder, config = FakeEmbedder(), RetrievalConfig()
    query = "Did Max meet Anna in New York?"
    vector, entities = encode_query(query, embedder, config)
    started = start_query(query, embedder, config)
    assert (started.vector() == vector).all()
    assert entities is not None and started.entities is not None
    assert started.entities.spans == entities.spans
