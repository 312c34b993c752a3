"""Where a search's time goes: each step of ``linkmem.search.run_search``, per scope size.

    python benchmarks/bench_search_phases.py [--sizes 1000,10000] [--queries 100] [--rounds 3]
        [--variants shipped,serial] [--store DIR] [--out FILE]

One SQLite store, one scope holding each of ``--sizes`` memories (``bench_core.make_texts``,
entities on, the default models loaded once). Each query is timed as a whole
(``Memory.search``, top_k 10; wall time, and the CPU time of all the process's threads, which
a busy machine inflates less) and by step, by wrapping the functions ``run_search`` calls:
the query's model (``query_models``: the query's embedding, with its name runs when the
config embeds any; no NER; it runs on a side thread beside the store reads, and
``vector_wait`` is how long the search then still waits for it, ``after_vector`` how long
the search runs once the vector is there: on an idle machine a search takes about the query's
model time plus that), the prefetch of the
search's reads, the lookup of the query's keys among the stored entities (``entity_keys``),
dense candidates (``dense``, which includes the wait), BM25 candidates, the entity signal
(``entities``: the matched entities and their links, ``hubs``: the hub entities' links to
the candidates), fusion (with the exact scores it completes), the second hop, the records
(with what the time signal reads of the first results), and the rest (validation, result
dicts). Steps are medians over the queries, so they need
not add up to the total's median. Each step's share after the vector arrived is
``<step>_after`` (the hubs' links are read before it for the known candidates and after it for
the dense ones); within steps: ``links`` (the store's ``links_among``, in ``hubs``),
``boost_array`` (the entity boosts as fused, in ``fusion``), ``parts`` (each result's score
parts). ``after_vector_cpu`` is the searching thread's CPU time after the vector arrived,
which other processes on a busy machine move less than the wall time.

Variants run interleaved, ``--rounds`` times, each round and variant on queries not searched
before (so the embedder's memo answers recurring names, never a query):
- ``shipped``: the defaults, one onnxruntime thread per call;
- ``serial``: the query's embedding waited for as soon as it starts, before any store read
  (what searches did before the embedding ran beside the store reads);
- ``intra2``: the same with the session of two intra-op threads (as before fe18f66);
- ``names2``: two name runs of the query embedded with it (``query_names_embedded`` 2);
- ``no_memo``: the embedder's memo of short texts' vectors off;
- ``sql_bm25``: BM25 summed in SQL, not from the cached postings
  (``store.sqlite.keyword_cache``; what searches did before it);
- ``records_held``: every record of the scope read into the store's record cache before the
  round (what a record cache that holds a searched scope whole would give: the results'
  records are then never read after the vector); the cache is emptied after the round.
Numbers go to ``benchmarks/results/search_phases.json`` (or ``--out``). ``--store DIR`` keeps
one store per size in DIR (``search-<size>.db``), built on first use and searched as they are
after: an A/B of two commits alternates processes (``PYTHONPATH=<worktree>/src``) on the
same stores.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import threading
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

from bench_core import Models, make_queries, make_texts

import linkmem.encoding as encoding_module
import linkmem.entities.boost as boost_module
import linkmem.search as search_module
from linkmem.config import with_retrieval
from linkmem.embed import onnx
from linkmem.embed.vector_cache import VectorCache

STEPS = {
    "_entity_vectors": "entity_keys",
    "_dense": "dense",
    "_keyword": "bm25",
    "match_entities": "entities",
    "hop_targets": "hop",
}


class Clock:
    """Seconds per step of the current query, and each step's share after the query's vector
    arrived on the searching thread (``<step>_after``)."""

    def __init__(self) -> None:
        self.current: dict[str, float] = defaultdict(float)
        self.arrived = 0.0  # when the current query's vector first arrived
        self.arrived_cpu = 0.0  # the searching thread's CPU time then

    def wrap(self, name, fn, any_thread=False):
        """``fn`` timed as step ``name`` when the searching thread calls it (``any_thread``:
        on any thread, as the query's model on the side pool)."""

        def timed(*args, **kwargs):
            if not any_thread and threading.current_thread() is not threading.main_thread():
                return fn(*args, **kwargs)
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                end = time.perf_counter()
                self.current[name] += end - start
                if self.arrived:
                    self.current[f"{name}_after"] += end - max(start, self.arrived)

        return timed


def instrument(clock: Clock) -> None:
    for attr, name in STEPS.items():
        setattr(search_module, attr, clock.wrap(name, getattr(search_module, attr)))
    search_module._Scores.fuse = clock.wrap("fusion", search_module._Scores.fuse)
    matched = search_module.MatchedEntities
    matched.read_hub_links = clock.wrap("hubs", matched.read_hub_links)
    # After the vector: the results' score parts (``parts``), the candidates' entity boosts
    # as fused (``boost_array``, within ``fusion``).
    search_module._Scores.parts = clock.wrap("parts", search_module._Scores.parts)
    boost_module.CandidateBoosts.array = clock.wrap(
        "boost_array", boost_module.CandidateBoosts.array
    )
    encoding_module._query_rows = clock.wrap(
        "query_models", encoding_module._query_rows, any_thread=True
    )
    query = encoding_module.QueryEncoding
    waited = query.vector

    def vector(self):
        # The searching thread's wait and the vector's arrival there (a store view may wait
        # for the vector on a side thread too: ``store.sqlite.search_reads.SPLIT_ROWS``).
        if threading.current_thread() is not threading.main_thread():
            return waited(self)
        start = time.perf_counter()
        try:
            return waited(self)
        finally:
            now = time.perf_counter()
            clock.current["vector_wait"] += now - start
            if not clock.arrived:
                clock.arrived, clock.arrived_cpu = now, time.thread_time()

    query.vector = vector
    original_reads = search_module._reads

    @contextmanager
    def reads(store, plan):
        start = time.perf_counter()
        with original_reads(store, plan) as view:
            clock.current["prefetch"] += time.perf_counter() - start
            # The records, and what the time signal reads of its first results; the hubs'
            # links to the candidates (``links``, within ``hubs``).
            reads = [name for name in ("get_memories", "memory_dates") if hasattr(view, name)]
            for name in reads:
                setattr(view, name, clock.wrap("records", getattr(view, name)))
            if hasattr(view, "links_among"):
                view.links_among = clock.wrap("links", view.links_among)
                reads.append("links_among")
            try:
                yield view
            finally:
                for name in reads:
                    delattr(view, name)

    search_module._reads = reads


#: The variants (see the module docstring): retrieval constants changed from the defaults.
VARIANTS: dict[str, dict] = {
    "shipped": {},
    "serial": {},
    "intra2": {},
    "names2": {"query_names_embedded": 2},
    "no_memo": {},
    "sql_bm25": {},
    "records_held": {},
}


def intra_op_session(threads: int):
    import onnxruntime as ort

    options = onnx._session_options()
    options.intra_op_num_threads = threads
    path = onnx.default_model_path()
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def start_serial(*args, **kwargs):
    """``start_query`` waited for at once (the ``serial`` variant)."""
    encoding = encoding_module.start_query(*args, **kwargs)
    encoding.rows.result()
    return encoding


def run(memory, queries: list[str], clock: Clock) -> dict:
    totals, cpu, steps = [], [], defaultdict(list)
    for query in queries:
        clock.current.clear()
        clock.arrived = clock.arrived_cpu = 0.0
        start, cpu_start = time.perf_counter(), time.process_time()
        memory.search(query, user_id="bench", top_k=10)
        end, end_cpu = time.perf_counter(), time.thread_time()
        totals.append((end - start) * 1000)
        if clock.arrived:
            clock.current["after_vector"] = end - clock.arrived
            # The searching thread's CPU after the vector: less moved by other processes
            # than the wall time (a busy machine delays a thread, it does not add CPU).
            clock.current["after_vector_cpu"] = end_cpu - clock.arrived_cpu
        cpu.append((time.process_time() - cpu_start) * 1000)
        for name, seconds in clock.current.items():
            steps[name].append(seconds * 1000)
    out = {
        "total_p50_ms": round(statistics.median(totals), 2),
        "cpu_p50_ms": round(statistics.median(cpu), 2),
    }
    out.update({f"{k}_ms": round(statistics.median(v), 2) for k, v in sorted(steps.items())})
    return out


def bench_size(
    memory, models, n_queries: int, size: int, rounds: int, clock: Clock, variants: list[str]
) -> dict:
    sessions = {"intra2": intra_op_session(2)}
    embedder, settings = models.embedder, memory.settings
    shipped_session, memo = embedder._session, embedder.vector_cache
    results: dict[str, list[dict]] = defaultdict(list)
    for round_ in range(rounds):
        for index, name in enumerate(variants):
            changes = VARIANTS[name]
            # Queries never searched before: the memo of short texts' vectors would answer a
            # repeated query (names recur across queries, as in use).
            queries = make_queries(n_queries, seed=size + 100 * round_ + index)
            memory.settings = with_retrieval(settings, **changes)
            embedder._session = sessions.get(name, shipped_session)
            embedder.vector_cache = VectorCache(0) if name == "no_memo" else memo
            if name == "sql_bm25":
                memory.store.keyword_table = lambda stats, scope: None
            if name == "records_held":
                hold_records(memory.store)
            search_module.start_query = (
                start_serial if name == "serial" else encoding_module.start_query
            )
            results[name].append(run(memory, queries, clock))
            vars(memory.store).pop("keyword_table", None)
            if name == "records_held":
                memory.store.record_cache.changed()  # the other variants start without them
    embedder._session, embedder.vector_cache = shipped_session, memo
    memory.settings = settings
    return {name: median_of_rounds(runs) for name, runs in results.items()}


def hold_records(store) -> None:
    """Every record of the store's memories read through its record cache (kept there)."""
    ids = [row[0] for row in store.db.rows(f"SELECT id FROM {store.c}")]
    for start in range(0, len(ids), 500):
        store.record_cache.get_memories(store, ids[start : start + 500])


def median_of_rounds(runs: list[dict]) -> dict:
    return {k: round(statistics.median(r[k] for r in runs if k in r), 2) for k in runs[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--variants", default=",".join(VARIANTS), help="some of the variants")
    parser.add_argument("--store", help="a folder of stores kept between runs, one per size")
    parser.add_argument(
        "--out", default=str(Path(__file__).parent / "results" / "search_phases.json")
    )
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    folder = Path(tempfile.mkdtemp(prefix="linkmem-phases-"))
    models = Models(folder)
    clock = Clock()
    texts = make_texts(max(sizes), seed=2)
    instrument(clock)
    results: dict = {"load_before": round(os.getloadavg()[0], 2), "sizes": {}}
    memory, loaded = models.memory(folder / "search.db"), 0
    for size in sizes:
        if args.store:  # one kept store per size
            path = Path(args.store) / f"search-{size}.db"
            memory.close()
            loaded = size if path.exists() else 0
            memory = models.memory(path)
        for start in range(loaded, size, 1000):
            memory.add_batch(texts[start : min(size, start + 1000)], user_id="bench")
        loaded = size
        memory.search("warm up", user_id="bench")  # warm the scope's vector cache
        results["sizes"][str(size)] = bench_size(
            memory, models, args.queries, size, args.rounds, clock, args.variants.split(",")
        )
    results["load_after"] = round(os.getloadavg()[0], 2)
    memory.close()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
