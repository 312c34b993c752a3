"""A writer SIGKILLed at random points of batch adds, updates and deletes: after each kill the
store is consistent (``check()``), every acknowledged write is there, and the write in flight
is either whole or absent."""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
import time
from pathlib import Path

import pytest
from crash_worker import all_memories, crash_worker
from helpers import CapitalisedWordsExtractor

from linkmem.embed.fake import FakeEmbedder

KILLS = 20


def replay(log: Path, state: dict[str, str]) -> tuple[dict[str, set[str]], dict | None]:
    """What may be stored after the logged calls, from ``state`` (id -> text) before them:
    id -> acceptable texts, and the call left in flight (unacknowledged) if any."""
    expected = {mid: {text} for mid, text in state.items()}
    pending = None
    for line in log.read_text().splitlines():
        entry = json.loads(line)
        if entry["event"] == "ack":
            if pending["event"] == "add":
                expected.update((mid, {text}) for mid, text in entry["ids"].items())
            elif pending["event"] == "update":
                expected[pending["id"]] = {pending["text"]}
            else:
                expected = {m: t for m, t in expected.items() if not _tagged(t, pending["tag"])}
            pending = None
        elif entry["event"] != "ready":
            pending = entry
    return expected, pending


def _tagged(texts: set[str], tag: str) -> bool:
    return any(t.startswith(f"{tag} ") for t in texts)


def verify(memory, expected: dict[str, set[str]], pending: dict | None) -> dict[str, str]:
    stored = all_memories(memory)
    event = pending and pending["event"]
    if event == "update" and pending["id"] in expected:
        expected[pending["id"]].add(pending["text"])
    new = {m: t for m, t in stored.items() if m not in expected}
    if event == "add":
        assert all(t.startswith(f"{pending['tag']} ") for t in new.values())
        assert len(new) in (0, pending["size"]), "a batch add was partly written"
    else:
        assert not new
    missing = [m for m in expected if m not in stored]
    if event == "delete_all":
        tagged = [m for m, t in expected.items() if _tagged(t, pending["tag"])]
        assert not missing or set(missing) == set(tagged), "a delete_all was partly applied"
    else:
        assert not missing, "an acknowledged write was lost"
    assert all(stored[m] in texts for m, texts in expected.items() if m in stored)
    report = memory.check()
    assert report["ok"], report["problems"]
    return stored


@pytest.mark.slow
@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres-18", marks=pytest.mark.postgres)]
)
def test_sigkill_mid_write_leaves_a_consistent_store(make_memory, backend_settings, tmp_path):
    ctx = multiprocessing.get_context("spawn")
    rng = random.Random(7)
    state: dict[str, str] = {}
    writes = in_flight = 0
    for kill in range(KILLS):
        log = tmp_path / f"log{kill}.jsonl"
        child = ctx.Process(target=crash_worker, args=(backend_settings, str(log), kill))
        child.start()
        _wait_for(log, child, '"ack"')  # writing has begun, however loaded the machine
        time.sleep(rng.uniform(0.05, 0.4))
        os.kill(child.pid, signal.SIGKILL)
        child.join(30)
        expected, pending = replay(log, state)
        memory = make_memory(embedder=FakeEmbedder(), extractor=CapitalisedWordsExtractor())
        state = verify(memory, expected, pending)
        in_flight += pending is not None
        memory.close()
        writes += sum(1 for line in log.read_text().splitlines() if '"ack"' in line)
    assert writes > KILLS and in_flight >= KILLS // 2  # the kills landed inside real writes


def _wait_for(log: Path, child: multiprocessing.Process, marker: str, timeout: float = 60) -> None:
    """Until the writer's log has ``marker`` (its first acknowledged write, say)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and marker in log.read_text():
            return
        assert child.is_alive(), f"the writer died before it logged {marker}"
        time.sleep(0.02)
    child.kill()
    pytest.fail(f"the writer had not logged {marker} after {timeout:.0f}s")
