"""The child of the crash test: batch adds, updates and batch deletes forever, logging each
intent before the call and each acknowledgement after it (line-buffered, so a SIGKILL loses
nothing the kernel has), until the parent kills it."""

from __future__ import annotations

import json
import random
from typing import Any

USER = "crash"


def _ids(memory: Any) -> list[str]:
    from linkmem.types import Scope

    return memory.store.memory_ids(Scope(user_id=USER))


def all_memories(memory: Any) -> dict[str, str]:
    """Every memory of the crash test's scope, ``{id: text}``, however many."""
    return {r.id: r.text for r in memory.store.get_memories(_ids(memory))}


def crash_worker(settings: dict[str, Any], log_path: str, seed: int) -> None:
    from helpers import CapitalisedWordsExtractor

    from linkmem import Memory
    from linkmem.embed.fake import FakeEmbedder

    rng = random.Random(seed)
    memory = Memory(embedder=FakeEmbedder(), extractor=CapitalisedWordsExtractor(), **settings)
    live = {r.id: r.scope.run_id for r in memory.store.get_memories(_ids(memory))}
    with open(log_path, "a", buffering=1) as log:
        note = lambda **entry: log.write(json.dumps(entry) + "\n")  # noqa: E731
        note(event="ready")
        for n in range(10**9):
            crowded = len(live) > 2000  # keep the store small enough to verify quickly
            op = "delete_all" if crowded else rng.choice(["add", "add", "update", "delete_all"])
            op = op if live else "add"
            if op == "add":
                tag = f"s{seed}b{n}"
                texts = [f"{tag} item {k}: Max met Ana in Paris" for k in range(rng.randint(5, 60))]
                note(event="add", tag=tag, size=len(texts))
                done = memory.add_batch(texts, user_id=USER, run_id=tag)["results"]
                live.update((r["id"], tag) for r in done)
                note(event="ack", ids={r["id"]: r["memory"] for r in done})
            elif op == "update":
                mid = rng.choice(list(live))
                text = f"{live[mid]} updated {n}: Oscar met Kim"
                note(event="update", id=mid, text=text)
                memory.update(mid, text)
                note(event="ack")
            else:
                tag = rng.choice(sorted(set(live.values())))
                note(event="delete_all", tag=tag)
                memory.delete_all(user_id=USER, run_id=tag)
                live = {m: t for m, t in live.items() if t != tag}
                note(event="ack")
