"""A search right after a write to its scope, by the same process or another, against a
search alone.

    python benchmarks/bench_write_then_search.py [--size 10000] [--queries 120] \
        [--dsn DSN] [--store DIR] [--out FILE]

An agent's turn is often "remember this, then recall": a write to a scope, then a search of
it, in one process; a server with several worker processes (``linkmem serve --workers N``)
searches in one process what another just wrote. Every cache a search reads (the vector
matrix, the keyword postings, the entity records and links, the records) is kept at the
scope's versions, which a write moves on; what is not brought up to date in place, the next
search reads again. Here one scope of ``--size`` memories (``bench_core.make_texts``,
entities on, the default models loaded once) is searched ``--queries`` times, every second
search right after one ``add`` of a new text (``own``: by this process; ``other``: by a
second process with its own ``Memory``), alternating, so both kinds of search see the same
machine; before them (``none``), new queries with no write, after twice as many of them.
SQLite always; PostgreSQL too with ``--dsn`` (the scope is loaded on first use and kept:
rerun on the same database for an A/B). ``--store DIR`` keeps the SQLite store too. Prints
and writes (``--out``, default ``benchmarks/results/write_then_search.json``) the p50 / p90
of each kind, the add's p50, and the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_core import Models, make_queries, make_texts

from linkmem import Memory

SCOPE = "write-then-search"
LOAD_BATCH = 1000


def open_memory(models: Models, backend: str, where: str) -> Memory:
    settings: dict[str, Any] = (
        {"store": "postgres", "postgres.dsn": where, "collection": "write_then_search"}
        if backend == "postgres"
        else {"sqlite.path": where}
    )
    return Memory(embedder=models.embedder, extractor=models.extractor, **settings)


def loaded(memory: Memory, size: int) -> None:
    """The scope at ``size`` memories (kept across runs: a rerun compares on the same data)."""
    have = memory.store.count_memories()
    texts = make_texts(size, seed=2)
    for start in range(have, size, LOAD_BATCH):
        memory.add_batch(texts[start : min(size, start + LOAD_BATCH)], user_id=SCOPE)


def percentile(values: list[float], q: float) -> float:
    return round(sorted(values)[min(len(values) - 1, int(q * len(values)))], 2)


def measure(
    memory: Memory, n_queries: int, seed: int, add: Callable[[str], None]
) -> dict[str, Any]:
    queries = make_queries(n_queries, seed=seed)
    writes = make_texts(n_queries, seed=seed + 1)
    memory.search("warm up", user_id=SCOPE)
    alone: list[float] = []
    after: list[float] = []
    adds: list[float] = []
    for index, query in enumerate(queries):
        if index % 2:
            start = time.perf_counter()
            add(writes[index])
            adds.append((time.perf_counter() - start) * 1e3)
        start = time.perf_counter()
        memory.search(query, user_id=SCOPE)
        (after if index % 2 else alone).append((time.perf_counter() - start) * 1e3)
    return {
        "search_alone_p50_ms": round(statistics.median(alone), 2),
        "search_alone_p90_ms": percentile(alone, 0.9),
        "search_after_add_p50_ms": round(statistics.median(after), 2),
        "search_after_add_p90_ms": percentile(after, 0.9),
        "after_over_alone_p50": round(statistics.median(after) / statistics.median(alone), 3),
        "add_p50_ms": round(statistics.median(adds), 2),
    }


class OtherProcess:
    """A second process with its own ``Memory`` on the store, adding each text it is sent."""

    def __init__(self, backend: str, where: str) -> None:
        self._child = subprocess.Popen(
            [sys.executable, __file__, "--child", backend, where],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._readline() == "ready"

    def _readline(self) -> str:
        assert self._child.stdout is not None
        return self._child.stdout.readline().strip()

    def add(self, text: str) -> None:
        assert self._child.stdin is not None
        self._child.stdin.write(json.dumps(text) + "\n")
        self._child.stdin.flush()
        assert self._readline() == "added"

    def close(self) -> None:
        assert self._child.stdin is not None
        self._child.stdin.close()
        self._child.wait(timeout=60)


def child(backend: str, where: str) -> None:
    """``OtherProcess``' side: add each JSON text read from stdin, answer ``added``."""
    with tempfile.TemporaryDirectory() as tmp:
        memory = open_memory(Models(Path(tmp)), backend, where)
        print("ready", flush=True)
        for line in sys.stdin:
            memory.add(json.loads(line), user_id=SCOPE)
            print("added", flush=True)
        memory.close()


def measure_quiet(memory: Memory, n_queries: int, seed: int) -> dict[str, Any]:
    """New queries with no write between them, after twice as many (what the caches then
    hold: a long-running server's searches of a scope that is not written)."""
    queries = make_queries(3 * n_queries, seed=seed)
    for query in queries[: 2 * n_queries]:
        memory.search(query, user_id=SCOPE)
    times = []
    for query in queries[2 * n_queries :]:
        start = time.perf_counter()
        memory.search(query, user_id=SCOPE)
        times.append((time.perf_counter() - start) * 1e3)
    return {
        "search_p50_ms": round(statistics.median(times), 2),
        "search_p90_ms": percentile(times, 0.9),
    }


def measure_both(memory: Memory, backend: str, where: str, n_queries: int) -> dict[str, Any]:
    """``measure_quiet``, then ``measure`` with this process's adds, then with another
    process's (new texts each)."""
    seed = int(time.time()) % 100_000  # a rerun on kept stores adds different memories
    out: dict[str, Any] = {"none": measure_quiet(memory, n_queries, seed + 3)}
    out["own"] = measure(memory, n_queries, seed, lambda t: memory.add(t, user_id=SCOPE))
    other = OtherProcess(backend, where)
    try:
        out["other"] = measure(memory, n_queries, seed + 7, other.add)
    finally:
        other.close()
    return out


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        return child(sys.argv[2], sys.argv[3])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--queries", type=int, default=120)
    parser.add_argument("--dsn", default=None, help="also PostgreSQL, on this database")
    parser.add_argument("--store", type=Path, default=None, help="keep the SQLite store here")
    default_out = Path(__file__).parent / "results" / "write_then_search.json"
    parser.add_argument("--out", type=Path, default=default_out)
    args = parser.parse_args()
    out: dict[str, Any] = {"size": args.size, "load_before": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.store or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        models = Models(Path(tmp))
        backends = [("sqlite", str(folder / f"write-then-search-{args.size}.db"))]
        if args.dsn:
            backends.append(("postgres", args.dsn))
        for backend, where in backends:
            memory = open_memory(models, backend, where)
            try:
                loaded(memory, args.size)
                out[backend] = measure_both(memory, backend, where, args.queries)
            finally:
                memory.close()
            print(backend, json.dumps(out[backend]))
    out["load_after"] = os.getloadavg()[0]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
