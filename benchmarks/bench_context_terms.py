"""The price of neighbour words in the keyword index (``RetrievalConfig.keyword_context_*``).

    python benchmarks/bench_context_terms.py [--sizes 1000,10000] [--queries 200] [--store sqlite]

Two stores of the same ``bench_core`` texts, one with keyword context off (weight 0: postings
of the memories' own words, as before) and one with the defaults, written by ``add_batch`` in
calls of 1,000 with the same default models (their outputs memoised, so both stores hold
exactly the same vectors and entities; the query models also run once, before the timing, so
the times are the store's and fusion's). Then the same queries are searched (full search,
``top_k`` 10) alternately on A and B, so load changes hit both alike; p50 / p95 per store and
size, the postings per memory, and the add_batch time of each store (models excluded: they
ran once before, on a third store) go to ``benchmarks/results/context-terms.json`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from bench_core import Models, make_texts, percentile

from linkmem import Memory


class Memo:
    """A model wrapper that computes each text once (``embed_batch`` / ``extract_batch``)."""

    def __init__(self, inner, method: str) -> None:
        self.inner, self.method, self.cache = inner, method, {}

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def _call(self, texts):
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            self.cache.update(zip(missing, getattr(self.inner, self.method)(missing)))
        return [self.cache[t] for t in texts]

    def embed_batch(self, texts):
        import numpy as np

        return np.stack(self._call(texts)) if texts else self.inner.embed_batch(texts)

    def extract_batch(self, texts):
        return self._call(texts)


def open_store(path: Path, store: str, embedder, extractor, weight: float | None) -> Memory:
    retrieval = {} if weight is None else {"keyword_context_weight": weight}
    settings: dict = {"store": store}
    if store == "postgres":
        settings["postgres.dsn"] = os.environ["LINKMEM_PG_DSN"]
        settings["collection"] = path.stem
    else:
        settings["sqlite.path"] = str(path)
    return Memory(embedder=embedder, extractor=extractor, retrieval=retrieval, **settings)


def postings_per_memory(memory: Memory) -> float:
    store = memory.store
    table = f"{store.c}_postings" if hasattr(store, "c") else store.t.postings
    n = store.db.rows(f"SELECT count(*) FROM {table}")[0][0]
    return round(n / max(1, memory.count(user_id="bench")), 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--store", default="sqlite", choices=["sqlite", "postgres"])
    out_default = Path(__file__).parent / "results" / "context-terms.json"
    parser.add_argument("--out", default=str(out_default))
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    folder = Path(tempfile.mkdtemp(prefix="linkmem-ctx-"))
    models = Models(folder)
    embedder, extractor = (
        Memo(models.embedder, "embed_batch"),
        Memo(models.extractor, "extract_batch"),
    )
    variants = {"own words": 0.0, "neighbour words": None}
    stores = {
        name: open_store(folder / f"ctx_{i}.db", args.store, embedder, extractor, weight)
        for i, (name, weight) in enumerate(variants.items())
    }
    warm = open_store(folder / "ctx_warm.db", args.store, embedder, extractor, 0.0)
    texts = make_texts(max(sizes), seed=2)
    queries = [q.split(" (note")[0] for q in make_texts(args.queries, seed=3)]
    results: dict = {"load_before": os.getloadavg(), "store": args.store, "sizes": {}}
    loaded = 0
    for size in sizes:
        add_s = dict.fromkeys(stores, 0.0)
        for start in range(loaded, size, 1000):
            batch = texts[start : min(size, start + 1000)]
            warm.add_batch(batch, user_id="warm")  # the models run here, once
            for name, memory in stores.items():
                t0 = time.perf_counter()
                memory.add_batch(batch, user_id="bench")
                add_s[name] += time.perf_counter() - t0
        loaded = size
        times: dict[str, list[float]] = {name: [] for name in stores}
        for query in queries:  # the query models run here, once: the stores are timed alike
            warm.search(query, user_id="warm")
        for memory in stores.values():
            memory.search(queries[0], user_id="bench")  # warm caches
        for i, query in enumerate(queries):
            for name in list(stores)[:: 1 if i % 2 else -1]:
                memory = stores[name]
                t0 = time.perf_counter()
                memory.search(query, user_id="bench", top_k=10)
                times[name].append((time.perf_counter() - t0) * 1000)
        results["sizes"][str(size)] = {
            name: {
                "p50_ms": round(statistics.median(times[name]), 2),
                "p95_ms": round(percentile(times[name], 0.95), 2),
                "add_batch_s_after_first": round(add_s[name], 2),
                "postings_per_memory": postings_per_memory(stores[name]),
            }
            for name in stores
        }
        print(size, json.dumps(results["sizes"][str(size)]), flush=True)
    results["load_after"] = os.getloadavg()
    for memory in [*stores.values(), warm]:
        memory.close()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
