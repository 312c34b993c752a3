"""Peak RSS of one huge add_batch (issue 15: <= 500 MB for a 100k-memory stream).

    python benchmarks/bench_memory_stream.py [--sizes 20000,50000,100000]
                                             [--backends sqlite,postgres] [--out FILE]

Each size runs in a fresh child process with the real default models: open a store (a new
SQLite file, or a new collection on PostgreSQL: ``LINKMEM_PG_DSN`` or a throwaway PostgreSQL
18 from the pinned pgserver wheel), warm up (one ``add`` and one search in the scope, so the
models are loaded and the scope is cached, as in a server), then one ``add_batch`` of ``size``
``bench_core`` texts in that scope (staged: ``linkmem.staged_write``), then one search of the
grown scope (which loads its whole matrix). The child samples its RSS every half second and
reports the peak (``VmHWM``) after the warm-up, after the add_batch and after the search, with
the machine's load average. On PostgreSQL only the client process is measured (the server is
another process). Numbers go to ``benchmarks/results/memory_stream.json`` (or ``--out``) after
every size.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "memory_stream.json"
BOUND_MB = 500


def proc_status_mb(key: str) -> float:
    """A ``/proc/self/status`` memory line (``VmRSS``, ``VmHWM``), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError(f"no {key} in /proc/self/status (this benchmark needs Linux)")


def load_average() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


class Sampler:
    """RSS every ``every`` seconds on a daemon thread: ``(seconds, stage, rss_mb)``."""

    def __init__(self, every: float = 0.5) -> None:
        self.every = every
        self.stage = "start"
        self.points: list[tuple[float, str, float]] = []
        self.start = time.perf_counter()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while True:
            elapsed = round(time.perf_counter() - self.start, 1)
            self.points.append((elapsed, self.stage, proc_status_mb("VmRSS")))
            time.sleep(self.every)

    def peak_of(self, stage: str) -> float:
        return max((rss for _, s, rss in self.points if s == stage), default=0.0)


# ------------------------------------------------------------------ one size, in a child
def run_size(size: int, settings: dict[str, Any], seed: int) -> dict[str, Any]:
    from bench_core import make_texts  # the script's own folder is on sys.path

    from linkmem import Memory

    sampler = Sampler()
    memory = Memory(**settings)
    memory.add("Warm-up: Alice met Bob in Paris.", user_id="stream")
    memory.search("Who did Alice meet?", user_id="stream")
    texts = make_texts(size, seed)
    out: dict[str, Any] = {"size": size, "store": settings["store"]}
    out["rss_warm_mb"], out["load_start"] = proc_status_mb("VmRSS"), load_average()
    sampler.stage, started = "add_batch", time.perf_counter()
    memory.add_batch(texts, user_id="stream")
    seconds = time.perf_counter() - started
    out["peak_add_batch_mb"] = proc_status_mb("VmHWM")
    out["add_batch_s"], out["memories_per_s"] = round(seconds, 1), round(size / seconds, 1)
    sampler.stage = "search"
    found = memory.search("Alex bought a road bike in Lisbon", user_id="stream")["results"]
    out["peak_after_search_mb"] = proc_status_mb("VmHWM")
    out["count"], out["search_hits"] = memory.count(user_id="stream"), len(found)
    out["load_end"] = load_average()
    out["rss_timeline"] = sampler.points[:: max(1, len(sampler.points) // 200)]
    if settings["store"] == "postgres":
        memory.delete_all(user_id="stream")
    memory.close()
    return out


def run_child(size: int, settings: dict[str, Any], seed: int) -> dict[str, Any]:
    """One size in a fresh interpreter, so each peak belongs to that size alone."""
    command = [sys.executable, __file__, "--child", str(size), "--seed", str(seed)]
    command += ["--settings", json.dumps(settings)]
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(done.stdout)


@contextmanager
def backend_settings(backend: str, folder: Path) -> Iterator[Iterator[dict[str, Any]]]:
    """Yields a generator of fresh settings (one new SQLite file or collection per size)."""

    def fresh(base: dict[str, Any], key: str) -> Iterator[dict[str, Any]]:
        n = 0
        while True:
            n += 1
            if key == "sqlite.path":
                yield {**base, key: str(folder / f"stream-{n}.db")}
            else:
                yield {**base, key: f"stream_{os.getpid()}_{n}"}

    if backend == "sqlite":
        yield fresh({"store": "sqlite"}, "sqlite.path")
        return
    dsn = os.environ.get("LINKMEM_PG_DSN")
    if dsn:
        yield fresh({"store": "postgres", "postgres.dsn": dsn}, "collection")
        return
    sys.path.insert(0, str(ROOT / "tests"))
    from pgserver import running_server

    with running_server("18") as dsn:
        yield fresh({"store": "postgres", "postgres.dsn": dsn}, "collection")


def git_commit() -> str:
    result = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True)
    return result.stdout.decode().strip()


def summary_line(result: dict[str, Any]) -> str:
    fields = ["store", "size", "rss_warm_mb", "peak_add_batch_mb", "peak_after_search_mb"]
    fields += ["add_batch_s", "memories_per_s", "load_start", "load_end"]
    return json.dumps({k: result[k] for k in fields})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="20000,50000,100000")
    parser.add_argument("--backends", default="sqlite")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--settings", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_size(args.child, json.loads(args.settings), args.seed)))
        return
    results: dict[str, Any] = {"commit": git_commit(), "bound_mb": BOUND_MB, "runs": []}
    with tempfile.TemporaryDirectory(prefix="linkmem-stream-") as folder:
        for backend in args.backends.split(","):
            with backend_settings(backend, Path(folder)) as settings:
                for size in (int(s) for s in args.sizes.split(",")):
                    results["runs"].append(run_child(size, next(settings), args.seed))
                    print(summary_line(results["runs"][-1]), flush=True)
                    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
                    Path(args.out).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
