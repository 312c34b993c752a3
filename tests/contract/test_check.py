"""Contract: ``Memory.check`` finds each broken invariant; ``repair=True`` rebuilds what it can."""

from __future__ import annotations

import numpy as np
import pytest

from linkmem.store.base import NewEntity
from linkmem.types import HistoryEvent, Scope


def kinds(report: dict) -> dict[str, int]:
    return {p["kind"]: p["count"] for p in report["problems"]}


def bump_stats_sql(memory) -> str:
    store = memory.store
    scopes = f"{store.c}_scopes" if hasattr(store, "c") else store.t.scopes
    return f"UPDATE {scopes} SET n_docs = n_docs + 5"


def test_a_store_written_through_the_api_is_consistent(memory):
    ids = [
        r["id"]
        for r in memory.add_batch(["Max runs", "Ana reads", "Max and Ana"], user_id="u")["results"]
    ]
    memory.update(ids[0], "Oscar runs")
    memory.update(ids[1], metadata={"a": 1})
    memory.delete(ids[2])
    report = memory.check()
    assert report["ok"] and report["problems"] == []
    assert (report["memories"], report["entities"]) == (2, 2)


@pytest.mark.embedded
def test_check_finds_and_repairs_broken_invariants(memory):
    ids = [
        r["id"]
        for r in memory.add_batch(["Max runs far", "Ana reads books"], user_id="u")["results"]
    ]
    store = memory.store
    first, second = store.get_memories(ids)
    zero = np.zeros(memory.embedder.dim, dtype=np.float32)
    store.update_memory(first, None, ["bogus", "words"])
    store.update_memory(second, zero, None)
    store.insert_entities([NewEntity("e-orphan", "Zed", "zed", "PROPER", Scope("u"), zero + 1)])
    store.append_history([HistoryEvent(ids[0], "UPDATE", "Max runs far", "other", "2030-01-01")])
    store.db.run(bump_stats_sql(memory))

    found = kinds(memory.check())
    assert found == {
        "wrong_postings": 1,
        "bad_vector": 1,
        "orphan_entity": 1,
        "history_gap": 1,
        "stale_stats": 1,
    }
    repaired = memory.check(repair=True)
    assert repaired["repaired"] and kinds(repaired) == {"history_gap": 1}  # not rebuildable
    assert memory.search("books", user_id="u")["results"][0]["id"] == ids[1]
    assert memory.search("far", user_id="u")["results"][0]["id"] == ids[0]
    assert [e["entity"] for e in memory.entities(user_id="u")["results"]] == ["Ana", "Max"]
