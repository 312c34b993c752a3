"""Threads sharing one ``Memory`` plus a second process, all writing one scope that names the
same entities, for a bounded time; then every invariant of the store holds (both backends)."""

from __future__ import annotations

import json
import multiprocessing
import re
from functools import partial

import pytest
from stress_worker import NAMES, SCOPE, run_worker, worker_process
from watchdog import run_threads

SECONDS = 4.0


@pytest.mark.slow
def test_threads_and_a_process_keep_the_store_consistent(
    memory, make_memory, backend_settings, tmp_path
):
    ctx = multiprocessing.get_context("spawn")
    out = tmp_path / "process.json"
    process = ctx.Process(
        target=worker_process, args=(backend_settings, "p0", SECONDS, str(out)), daemon=True
    )
    process.start()
    results: dict[str, dict[str, str]] = {}

    def thread_worker(name: str, seed: int) -> None:
        results[name] = run_worker(memory, name, SECONDS, seed)

    run_threads([partial(thread_worker, f"t{i}", i) for i in range(3)], timeout=120)
    process.join(120)
    if process.is_alive():
        process.kill()
        pytest.fail("the writer process did not finish in 120 s: a deadlock")
    assert process.exitcode == 0
    results["p0"] = json.loads(out.read_text())

    expected = {mid: text for live in results.values() for mid, text in live.items()}
    stored = {r["id"]: r["memory"] for r in memory.get_all(user_id=SCOPE, limit=10_000)["results"]}
    assert stored == expected  # no acknowledged write lost, no deleted memory left, no lost update
    report = memory.check()
    assert report["ok"], report["problems"]
    for mid, text in stored.items():
        linked = {e["entity"] for e in memory.memory_entities(mid)["results"]}
        assert linked == {n for n in NAMES if re.search(rf"\b{n}\b", text)}
    assert len(memory.entities(user_id=SCOPE)["results"]) == len(
        {n for text in stored.values() for n in NAMES if n in text}
    )
    # The shared Memory's caches, kept up by its own writes and by what it read of the other
    # process's (appended rows, caught-up postings), search as a fresh Memory's whole loads.
    fresh = make_memory()
    for query in [*NAMES, " ".join(NAMES[:3])]:
        got, whole = (m.search(query, user_id=SCOPE, top_k=10)["results"] for m in (memory, fresh))
        assert [h["id"] for h in got] == [h["id"] for h in whole]
        assert all(abs(a["score"] - b["score"]) <= 2e-6 for a, b in zip(got, whole, strict=True))
