"""Core benchmark: add throughput and search latency on the embedded default (SQLite).

    python benchmarks/bench_core.py [--sizes 1000,10000] [--queries 100] [--out FILE]

Reports, in one run so the ratios are comparable:
- the embedder alone and the entity extractor alone on the same 1,000 texts;
- ``add_batch`` of 1,000 texts with entity linking off and on, and the share of the time spent
  in NER, embedding and the store (transaction, postings, links);
- search p50/p95 in one scope holding each of ``--sizes`` memories.
Numbers go to ``benchmarks/results/core.json`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from linkmem import Memory

NAMES = ["Max", "Luna", "Oscar", "Maria", "Ken", "Priya", "Tomás", "Aiko", "Sam", "Nadia"]
PLACES = ["Lisbon", "Kyoto", "Berlin", "Austin", "Nairobi", "Oslo", "Lima", "Seoul"]
THINGS = [
    "the new laptop",
    "a road bike",
    "the sourdough starter",
    "machine learning course",
    "the garden shed",
    "a vintage camera",
    "the chess club",
    "python scripts",
]
VERBS = [
    "talked about",
    "bought",
    "fixed",
    "wants to try",
    "finished",
    "is worried about",
    "recommended",
    "borrowed",
]
TEMPLATES = [
    "{a} {verb} {thing} while visiting {place}.",
    "Yesterday {a} and {b} {verb} {thing}.",
    "{a} said {place} was rainy, so they {verb} {thing} instead.",
    "My friend {a} {verb} {thing} last week near {place}.",
]


def make_texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    names = NAMES + [f"{n}{i}" for n in ("Alex", "Jo", "Rui") for i in range(30)]
    return [
        rng.choice(TEMPLATES).format(
            a=rng.choice(names),
            b=rng.choice(names),
            verb=rng.choice(VERBS),
            thing=rng.choice(THINGS),
            place=rng.choice(PLACES),
        )
        + f" (note {i})"
        for i in range(n)
    ]


class Timed:
    """Wraps an embedder or extractor and adds up the seconds spent in its batch calls."""

    def __init__(self, inner, method: str) -> None:
        self.inner, self.method, self.seconds = inner, method, 0.0
        for attr in ("model_id", "dim", "description"):
            if hasattr(inner, attr):
                setattr(self, attr, getattr(inner, attr))

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def _call(self, texts):
        start = time.perf_counter()
        try:
            return getattr(self.inner, self.method)(texts)
        finally:
            self.seconds += time.perf_counter() - start

    def embed_batch(self, texts):
        return self._call(texts)

    def extract_batch(self, texts):
        return self._call(texts)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def bench_add(folder: Path, texts: list[str], entities: bool) -> dict:
    probe = Memory(folder / "probe.db", entities=entities)  # models loaded outside the timing
    embedder = Timed(probe.embedder, "embed_batch")
    extractor = Timed(probe.extractor.get(), "extract_batch") if entities else None
    probe.close()
    memory = Memory(
        folder / f"add-{entities}.db", embedder=embedder, extractor=extractor, entities=entities
    )
    memory.add_batch(texts[:10], user_id="warmup")
    embedder.seconds = 0.0
    if extractor:
        extractor.seconds = 0.0
    start = time.perf_counter()
    memory.add_batch(texts, user_id="bench")
    total = time.perf_counter() - start
    ner = extractor.seconds if extractor else 0.0
    out = {
        "texts": len(texts),
        "seconds": round(total, 3),
        "memories_per_s": round(len(texts) / total, 1),
        "share": {
            "ner": round(ner / total, 3),
            "embedding": round(embedder.seconds / total, 3),
            "store_and_rest": round(1 - (ner + embedder.seconds) / total, 3),
        },
    }
    if entities:
        out["entities"] = len(memory.entities(user_id="bench", limit=10000)["results"])
    memory.close()
    return out


def bench_models_alone(texts: list[str]) -> dict:
    memory = Memory(tempfile.mkdtemp() + "/m.db")
    extractor = memory.extractor.get()
    memory.embedder.embed_batch(texts[:10])
    extractor.extract_batch(texts[:10])
    start = time.perf_counter()
    memory.embedder.embed_batch(texts)
    embed_s = time.perf_counter() - start
    start = time.perf_counter()
    extractor.extract_batch(texts)
    ner_s = time.perf_counter() - start
    memory.close()
    return {
        "embed_seconds": round(embed_s, 3),
        "embed_texts_per_s": round(len(texts) / embed_s, 1),
        "ner_seconds": round(ner_s, 3),
        "ner_texts_per_s": round(len(texts) / ner_s, 1),
    }


def bench_search(folder: Path, sizes: list[int], n_queries: int) -> dict:
    memory = Memory(folder / "search.db")
    texts = make_texts(max(sizes), seed=2)
    queries = [q.split(" (note")[0] for q in make_texts(n_queries, seed=3)]
    out, loaded = {}, 0
    for size in sorted(sizes):
        for start in range(loaded, size, 1000):
            memory.add_batch(texts[start : min(size, start + 1000)], user_id="bench")
        loaded = size
        memory.search(queries[0], user_id="bench")  # warm the scope's vector cache
        times = []
        for query in queries:
            t0 = time.perf_counter()
            memory.search(query, user_id="bench", top_k=10)
            times.append((time.perf_counter() - t0) * 1000)
        out[str(size)] = {
            "p50_ms": round(statistics.median(times), 2),
            "p95_ms": round(percentile(times, 0.95), 2),
        }
    one = memory.embedder.embed_batch  # the unavoidable model time of one search
    t0 = time.perf_counter()
    for query in queries:
        one([query])
    out["query_embedding_ms"] = round((time.perf_counter() - t0) * 1000 / len(queries), 2)
    memory.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "core.json"))
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    texts = make_texts(1000, seed=1)
    folder = Path(tempfile.mkdtemp(prefix="linkmem-bench-"))
    results = {
        "models_alone_1000": bench_models_alone(texts),
        "add_1000_entities_off": bench_add(folder, texts, entities=False),
        "add_1000_entities_on": bench_add(folder, texts, entities=True),
        "search": bench_search(folder, sizes, args.queries),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
