"""One worker of the stress and crash tests: random adds, updates, deletes and searches in one
shared scope, naming a small pool of shared entities, reporting what it left behind."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

from linkmem import NotFound

SCOPE = "team"
NAMES = ["Max", "Ana Lopez", "Paris", "Oscar", "Lisbon", "Tokyo"]  # no two alike to FakeEmbedder


def sentence(rng: random.Random, worker: str) -> str:
    a, b, c = rng.sample(NAMES, 3)
    return f"{worker} note {rng.randint(0, 999)}: {a} met {b} in {c}"


def run_worker(memory: Any, worker: str, seconds: float, seed: int) -> dict[str, str]:
    """Random operations for ``seconds``; returns ``{id: text}`` of the memories this worker
    added and did not delete, with the text it last gave each."""
    rng = random.Random(seed)
    live: dict[str, str] = {}
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        op = rng.choice(["add", "add", "update", "touch", "delete", "search"])
        if op == "add" or not live:
            texts = [sentence(rng, worker) for _ in range(rng.randint(1, 3))]
            for r in memory.add_batch(texts, user_id=SCOPE)["results"]:
                live[r["id"]] = r["memory"]
        elif op == "update":
            mid, text = rng.choice(list(live)), sentence(rng, worker)
            memory.update(mid, text)
            live[mid] = text
        elif op == "touch":  # metadata only, on anyone's memory: must never undo a text
            touch_any(memory, rng)
        elif op == "delete":
            mid = rng.choice(list(live))
            memory.delete(mid)
            del live[mid]
        else:
            memory.search(rng.choice(NAMES), user_id=SCOPE)
    return live


def touch_any(memory: Any, rng: random.Random) -> None:
    listed = memory.get_all(user_id=SCOPE, limit=20)["results"]
    if listed:
        try:
            memory.update(rng.choice(listed)["id"], metadata={"touched": rng.randint(0, 9)})
        except NotFound:  # deleted by its owner meanwhile
            pass


def worker_process(settings: dict[str, Any], worker: str, seconds: float, out: str) -> None:
    """A second process on the same store; writes its ``{id: text}`` to ``out`` as JSON."""
    from helpers import CapitalisedWordsExtractor

    from linkmem import Memory
    from linkmem.embed.fake import FakeEmbedder

    memory = Memory(embedder=FakeEmbedder(), extractor=CapitalisedWordsExtractor(), **settings)
    try:
        live = run_worker(memory, worker, seconds, seed=hash(worker) % 1000)
    finally:
        memory.close()
    Path(out).write_text(json.dumps(live))
