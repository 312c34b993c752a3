"""Read-modify-write calls racing each other on one memory (both backends)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from functools import partial

import pytest
from watchdog import run_threads

from linkmem import InvalidInput, NotFound
from linkmem.types import Scope


def slow_reads(memory, monkeypatch, seconds: float = 0.01) -> None:
    """Widen the window between a call's read and its write, as a loaded server would."""
    read = memory.store.get_memories

    def get_memories(ids):
        found = read(ids)
        time.sleep(seconds)
        return found

    monkeypatch.setattr(memory.store, "get_memories", get_memories)


def race(*calls: Callable[[], object]) -> None:
    """Start every call at the same moment, each in its own thread, under the watchdog."""
    start = threading.Barrier(len(calls))

    def worker(call: Callable[[], object]) -> Callable[[], None]:
        return lambda: (start.wait(), call())

    run_threads([worker(call) for call in calls], timeout=30)


def test_text_update_racing_a_metadata_update_is_not_lost(memory, monkeypatch):
    mid = memory.add("Max walks in the park", user_id="u")["results"][0]["id"]
    slow_reads(memory, monkeypatch)
    for i in range(15):
        text = f"Ana visit {i} at the lake"
        race(partial(memory.update, mid, text), partial(memory.update, mid, metadata={"round": i}))
        record = memory.get(mid)
        assert (record["memory"], record["metadata"]["round"]) == (text, i)
    vector = memory.embedder.embed_batch([text])[0]
    [(found, score)] = memory.store.vector_search(vector, Scope(user_id="u"), 1)
    assert found == mid and score == pytest.approx(1.0, abs=1e-5)
    assert [e["entity"] for e in memory.memory_entities(mid)["results"]] == ["Ana"]
    events = memory.history(mid)["results"]
    assert [e["event"] for e in events].count("UPDATE") == 30
    for before, after in zip(events, events[1:]):  # each event starts where the last ended
        assert after["old_memory"] == before["new_memory"]


def test_update_racing_delete_is_not_found_or_done(memory, monkeypatch):
    slow_reads(memory, monkeypatch)
    for i in range(10):
        mid = memory.add(f"Max note {i}", user_id="u")["results"][0]["id"]
        outcomes: list[str] = []

        def update(mid: str = mid, outcomes: list[str] = outcomes) -> None:
            try:
                memory.update(mid, "Ana note")
                outcomes.append("updated")
            except NotFound:
                outcomes.append("not found")

        race(update, partial(memory.delete, mid))
        assert outcomes and memory.get_all(user_id="u")["results"] == []
    assert memory.entities(user_id="u")["results"] == []


def test_history_of_a_deleted_memory_is_not_shown_to_another_scope(memory):
    mid = memory.add("Alice's secret plan", user_id="alice")["results"][0]["id"]
    memory.delete(mid)
    with pytest.raises(NotFound):
        memory.history(mid, user_id="mallory")
    with pytest.raises(NotFound):
        memory.history(mid, user_id="alice")  # its scope is gone with it: only by id alone
    assert [e["event"] for e in memory.history(mid)["results"]] == ["ADD", "DELETE"]


def test_delete_all_by_agent_refuses_to_span_users(memory):
    memory.add("Alice likes tea", user_id="alice", agent_id="coach")
    memory.add("Bob likes coffee", user_id="bob", agent_id="coach")
    with pytest.raises(InvalidInput, match="across_users=True"):
        memory.delete_all(agent_id="coach")
    assert len(memory.get_all(agent_id="coach")["results"]) == 2
    memory.delete_all(agent_id="coach", user_id="alice")
    assert [r["user_id"] for r in memory.get_all(agent_id="coach")["results"]] == ["bob"]
    memory.add("Carol likes juice", user_id="carol", agent_id="coach")
    assert len(memory.delete_all(agent_id="coach", across_users=True)["results"]) == 2
