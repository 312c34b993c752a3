"""Store-side A/B of search: code trees interleaved on the same loaded stores (issue 15).

    python benchmarks/scale_ab.py load --dsn DSN --sqlite PATH [--size 20000]
    python benchmarks/scale_ab.py run --dsn DSN --sqlite PATH --tree old=/tmp/base \\
        --tree new=. [--sqlite-tree .] [--rounds 3] [--queries 100] [--out FILE]
    python benchmarks/scale_ab.py statements --dsn DSN --sqlite PATH [--queries 50] [--kinds big]

``load`` fills a PostgreSQL database (collection ``scale``) and a SQLite file with
``bench_scale``'s layout (one 10k scope and scopes of 100, ``Memory.add_batch`` with the
models' answers cached) and runs ``VACUUM (ANALYZE)`` on PostgreSQL. ``run`` starts one worker
process per tree (``PYTHONPATH=<tree>/src``) on the PostgreSQL store, and one on the SQLite file
(``--sqlite-tree``), and sends them the same searches in batches of ten, in a shuffled order
per batch, ``--rounds`` times: the machine's load falls on every variant alike. The query's
vector is memoised (each query searched twice first), so a search's time is the store side and
the ranking. Reported per variant and scope kind: p50 (median over queries of each query's
median), mean client CPU per search, the PostgreSQL server's CPU per search (its processes'
``/proc`` times around each batch; a server on this machine only), the paired ratios, and
whether the trees' results (ids, scores, parts) are identical query by query. Trees whose
embedders differ give other query vectors: run both with ``LINKMEM_ONNX_INT8=0`` and
``LINKMEM_ONNX_FUSE=0`` (c9d7ae5 against 762faa7 without the second: 57-60 of 100 identical).

``statements`` (this tree only) records the statements each search sends and runs them again,
in the same order on one connection, under ``EXPLAIN (ANALYZE, TIMING OFF)``: the server's
planning and execution time per search for each kind of statement (unprepared, so planning
is what a prepared statement planned per execution also pays, without the parsing).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import bench_scale as bs  # the script's own folder is on sys.path

import linkmem
from linkmem import Memory
from linkmem.embed.vector_cache import VectorCache

HERE = Path(__file__).resolve().parent
BATCH = 10
CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def settings(backend: str, dsn: str, sqlite: str) -> dict[str, Any]:
    if backend == "sqlite":
        return {"store": "sqlite", "sqlite.path": sqlite}
    return {"store": "postgres", "postgres.dsn": dsn, "collection": "scale"}


def load(args: argparse.Namespace) -> None:
    import scale_postgres

    probe = Memory(Path(args.sqlite).with_suffix(".probe.db"))
    extractor = probe.extractor.get()  # type: ignore[union-attr]
    pool = bs.make_pool(args.pool)
    vectors, entities = bs.model_cache(pool, probe.embedder, extractor)
    for backend in ("postgres", "sqlite"):
        memory = Memory(
            embedder=bs.CachedEmbedder(probe.embedder, vectors),
            extractor=bs.CachedExtractor(extractor, entities),
            entities=True,
            **settings(backend, args.dsn, args.sqlite),
        )
        started = time.perf_counter()
        bs.Loader(memory, pool, vectors, "memory").grow(args.size)
        if backend == "postgres":
            scale_postgres.vacuum_analyze(memory.store.db, memory.store.t)  # type: ignore[attr-defined]
        bs.log(f"{backend}: {memory.status()['store']} in {time.perf_counter() - started:.0f} s")
        memory.close()


def worker(args: argparse.Namespace) -> None:
    """Answer 'warm'/'run' lines of JSON [[scope, query], ...] from the driver."""
    memory = Memory(**settings(args.backend, args.dsn, args.sqlite))
    if hasattr(memory.embedder, "vector_cache"):  # --models: no memo, the model every time
        memo = VectorCache(0 if args.models else 100_000)
        memory.embedder.vector_cache = memo  # type: ignore[attr-defined]
    print(json.dumps({"ready": linkmem.__file__}), flush=True)
    for line in sys.stdin:
        command, _, payload = line.strip().partition(" ")
        if command == "quit":
            break
        out: list[Any] = []
        for scope, query in json.loads(payload):
            if command == "warm":
                started = time.perf_counter()
                memory.search(query, user_id=scope)
                out.append((time.perf_counter() - started) * 1000)
                continue
            cpu, started = time.process_time(), time.perf_counter()
            found = memory.search(query, user_id=scope, top_k=10, explain=True)
            wall, cpu = time.perf_counter() - started, time.process_time() - cpu
            digest = hashlib.sha1(json.dumps(found, sort_keys=True).encode()).hexdigest()
            scores = [[h["id"], h["score"], h["score_details"]["dense"]] for h in found["results"]]
            out.append([wall * 1000, cpu * 1000, digest, scores])
        print(json.dumps(out), flush=True)
    print(json.dumps({"peak_rss_mb": peak_rss_mb()}), flush=True)
    memory.close()


def peak_rss_mb() -> float:
    """This process's peak resident set (``ru_maxrss``, KiB on Linux), in MB."""
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def server_cpu_ms(postmaster: int | None) -> float:
    """CPU time of the server's processes so far (children of ``postmaster``), in ms."""
    if postmaster is None:
        return 0.0
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == postmaster:
            total += int(fields[11]) + int(fields[12])
    return total * 1000 / CLOCK_TICKS


def postmaster_of(dsn: str) -> int | None:
    """The server's main process when it runs on this machine (the parent of a backend)."""
    import psycopg

    with psycopg.connect(dsn) as conn:
        backend = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        try:
            fields = Path(f"/proc/{backend}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
    return int(fields[1])


#: ``statements``: a statement's kind by a piece of its text (the first that matches).
KINDS = [
    ("WITH exact AS", "dense top-k"),
    ("SELECT n.ord, n.id, n.sim", "nearest entities"),
    ("array_agg(term ORDER BY term)", "BM25 top-k"),
    ("count(*) AS df FROM hits", "BM25 top-k"),
    ("unnest(%s::text[], %s::float8[])", "BM25 given"),
    ("idf AS (SELECT %s::text[] AS terms", "BM25 given"),
    ("array_agg(k.memory ORDER BY k.memory)", "hub links"),
    ("g AS MATERIALIZED", "rare entities"),
    ("vector) END FROM", "records"),
    ("SELECT id, n_docs", "scope sizes"),
    ("vector_send(e.embedding)", "entities by key"),
]


def statements(args: argparse.Namespace) -> None:
    """Server time per search of each kind of statement (see the module docstring)."""
    import psycopg

    memory = Memory(**settings("postgres", args.dsn, args.sqlite))
    if hasattr(memory.embedder, "vector_cache"):
        memory.embedder.vector_cache = VectorCache(100_000)  # type: ignore[attr-defined]
    sent: list[tuple[str, Any]] = []
    execute = psycopg.Connection.execute

    def recording(self: Any, query: Any, params: Any = None, **kw: Any) -> Any:
        sent.append((query, params))
        return execute(self, query, params, **kw)

    replay = psycopg.connect(args.dsn, autocommit=True)
    report: dict[str, Any] = {}
    for kind, items in searches(args.queries, args.size).items():
        if kind not in args.kinds:
            continue
        for scope, query in items:  # the query vectors memoised
            memory.search(query, user_id=scope)
        spent: dict[str, list[float]] = {}
        for scope, query in items:
            sent.clear()
            psycopg.Connection.execute = recording  # type: ignore[method-assign]
            try:
                memory.search(query, user_id=scope, top_k=10, explain=True)
            finally:
                psycopg.Connection.execute = execute  # type: ignore[method-assign]
            this: dict[str, float] = {}
            for text, params in sent:
                if text.startswith(("BEGIN", "COMMIT")) or "set_config" in text:
                    replay.execute(text, params)
                    continue
                name = next((n for piece, n in KINDS if piece in text), text[:30])
                plan = replay.execute(
                    "EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON, FORMAT JSON) " + text, params
                ).fetchone()[0][0]
                for part, key in (("planning", "Planning Time"), ("execution", "Execution Time")):
                    this[f"{name}, {part}"] = this.get(f"{name}, {part}", 0.0) + plan[key]
            for key, ms in this.items():
                spent.setdefault(key, []).append(ms)
        report[kind] = {
            key: {
                "searches": len(ms),
                "median_ms": round(statistics.median(ms), 3),
                "mean_ms_per_search": round(sum(ms) / len(items), 3),
            }
            for key, ms in sorted(spent.items())
        }
        for part in ("planning", "execution"):
            total = sum(sum(ms) for key, ms in spent.items() if key.endswith(part))
            report[kind][f"all, {part}"] = round(total / len(items), 3)
    report["load"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(report, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))
    memory.close()


def searches(n: int, size: int) -> dict[str, list[list[str]]]:
    """``bench_scale``'s queries: n in the big scope, n in random 100-memory scopes."""
    queries = bs.make_queries(2 * n + 5, seed=11)
    rng = random.Random(size)
    _, small = bs.layout(size)
    scopes = [bs.small_scope(rng.randrange(small)) for _ in range(n)]
    return {
        "big": [["big", q] for q in queries[n : 2 * n]],
        "small": [[s, q] for s, q in zip(scopes, queries[:n])],
    }


def run(args: argparse.Namespace) -> None:
    variants = dict(tree.split("=", 1) for tree in args.tree)
    backends = {name: "postgres" for name in variants}
    if args.sqlite_tree:
        variants["sqlite"], backends["sqlite"] = args.sqlite_tree, "sqlite"
    workers = {}
    for name, tree in variants.items():
        src = str(Path(tree).resolve() / "src")
        command = [sys.executable, __file__, "worker", "--backend", backends[name]]
        command += ["--models"] if args.models else []
        command += ["--dsn", args.dsn, "--sqlite", args.sqlite]
        env = {**os.environ, "PYTHONPATH": src}
        workers[name] = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
        bs.log(f"{name}: {workers[name].stdout.readline().strip()}")  # type: ignore[union-attr]

    def ask(name: str, command: str, items: list[list[str]]) -> Any:
        worker = workers[name]
        worker.stdin.write(f"{command} {json.dumps(items)}\n")  # type: ignore[union-attr]
        worker.stdin.flush()  # type: ignore[union-attr]
        return json.loads(worker.stdout.readline())  # type: ignore[union-attr]

    sets = {k: v for k, v in searches(args.queries, args.size).items() if k in args.kinds}
    first: dict[str, float] = {}  # each worker's first search (a cache's load)
    for name in workers:
        everything = [item for items in sets.values() for item in items]
        first[name] = round(ask(name, "warm", everything + everything)[0], 2)
    postmaster = postmaster_of(args.dsn)
    keys = [(v, k) for v in workers for k in sets]
    times: dict[Any, list[list[float]]] = {key: [[] for _ in sets[key[1]]] for key in keys}
    cpu: dict[Any, list[float]] = {key: [] for key in keys}
    server: dict[Any, list[float]] = {key: [] for key in keys}
    digests: dict[Any, list[set[str]]] = {key: [set() for _ in sets[key[1]]] for key in keys}
    ranked: dict[Any, list[Any]] = {key: [None for _ in sets[key[1]]] for key in keys}
    load_before = os.getloadavg()
    for round_ in range(args.rounds):
        for kind, items in sets.items():
            for start in range(0, len(items), BATCH):
                order = list(workers)
                random.Random(round_ * 100_003 + start).shuffle(order)
                for name in order:
                    before = server_cpu_ms(postmaster)
                    answers = ask(name, "run", items[start : start + BATCH])
                    spent = server_cpu_ms(postmaster) - before
                    if backends[name] == "postgres":
                        server[name, kind].append(spent / len(answers))
                    for i, (wall, used, digest, scores) in enumerate(answers):
                        times[name, kind][start + i].append(wall)
                        cpu[name, kind].append(used)
                        digests[name, kind][start + i].add(digest)
                        ranked[name, kind][start + i] = scores
    load_after = os.getloadavg()
    peak = {}
    for name, worker in workers.items():
        worker.stdin.write("quit\n")  # type: ignore[union-attr]
        worker.stdin.flush()  # type: ignore[union-attr]
        peak[name] = json.loads(worker.stdout.readline())["peak_rss_mb"]  # type: ignore[union-attr]
        worker.wait()
    report = summary(sets, variants, backends, times, cpu, server, digests, ranked)
    report["first_search_ms"], report["peak_rss_mb"] = first, peak
    report["load"] = [round(load_before[0], 2), round(load_after[0], 2)]
    report["rounds"], report["queries"] = args.rounds, args.queries
    print(json.dumps(report, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))


def summary(
    sets: dict[str, Any],
    variants: dict[str, str],
    backends: dict[str, str],
    times: dict[Any, list[list[float]]],
    cpu: dict[Any, list[float]],
    server: dict[Any, list[float]],
    digests: dict[Any, list[set[str]]],
    ranked: dict[Any, list[Any]],
) -> dict[str, Any]:
    out: dict[str, Any] = {"variants": variants}
    for kind in sets:
        medians = {v: [statistics.median(t) for t in times[v, kind]] for v in variants}
        rows: dict[str, Any] = {}
        for v in variants:
            rows[v] = {
                "p50_ms": round(statistics.median(medians[v]), 2),
                "client_cpu_ms": round(statistics.fmean(cpu[v, kind]), 2),
                "server_cpu_ms": round(statistics.fmean(server[v, kind]), 2)
                if server[v, kind]
                else None,
            }
        names = list(variants)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                paired = [x / y for x, y in zip(medians[a], medians[b])]
                rows[f"{a}/{b}"] = {
                    "p50_ratio": round(rows[a]["p50_ms"] / rows[b]["p50_ms"], 3),
                    "median_paired_ratio": round(statistics.median(paired), 3),
                }
                if backends[a] == backends[b] == "postgres":
                    same = [da == db for da, db in zip(digests[a, kind], digests[b, kind])]
                    rows[f"{a}/{b}"]["identical"] = f"{sum(same)}/{len(same)}"
                    rows[f"{a}/{b}"].update(compared(ranked[a, kind], ranked[b, kind]))
        out[kind] = rows
    return out


def compared(a: list[Any], b: list[Any]) -> dict[str, Any]:
    """Two variants' last results of each query: how many rank the same memories in the same
    order, and the largest difference of a score or a cosine between them there (cosines
    from cached float32 vectors differ from the server's in the last places)."""
    ranked = [[h[0] for h in x] == [h[0] for h in y] for x, y in zip(a, b)]
    diffs = [
        abs(p - q)
        for x, y, same in zip(a, b, ranked)
        if same
        for hx, hy in zip(x, y)
        for p, q in zip(hx[1:], hy[1:])
        if p is not None and q is not None
    ]
    return {
        "same_ranking": f"{sum(ranked)}/{len(ranked)}",
        "differing": [i for i, same in enumerate(ranked) if not same],
        "max_score_diff": max(diffs, default=0.0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["load", "run", "worker", "statements"])
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--sqlite", required=True, help="the SQLite file of the same layout")
    parser.add_argument("--size", type=int, default=20_000)
    parser.add_argument("--pool", type=int, default=10_000, help="unique sentences to embed")
    parser.add_argument("--tree", action="append", default=[], help="name=path of a checkout")
    parser.add_argument("--sqlite-tree", help="checkout whose SQLite store is timed beside")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=100, help="per scope kind")
    parser.add_argument("--kinds", default="big,small", help="scope kinds: big, small")
    parser.add_argument("--backend", default="postgres", help=argparse.SUPPRESS)
    parser.add_argument(
        "--models",
        action="store_true",
        help="run: the query's model on every search (no memo of query vectors): a full "
        "search, not the store side alone",
    )
    parser.add_argument("--out")
    args = parser.parse_args()
    commands = {"load": load, "run": run, "worker": worker, "statements": statements}
    commands[args.command](args)


if __name__ == "__main__":
    main()
