"""Cold start of ``linkmem search``: a fresh process on an existing SQLite store.

    python benchmarks/bench_cold_start.py [--runs 7] [--memories 200] [--out FILE]
        [--compare-src DIR] [--no-bytecode-cache]

Prepares one store (``--memories`` synthetic texts in scope ``--user bench``, default models),
then, in one sitting so the numbers compare:
- ``cli``: ``--runs`` fresh ``linkmem --db STORE search QUERY --user bench`` processes, each
  timed from the spawn to the first byte of its output (the first result) and to its exit,
  with the process's CPU time and peak RSS (``wait4``);
- ``cli_uncached``: the same with the cached optimised ONNX model turned off
  (``LINKMEM_ONNX_CACHE=0``: the session optimises the graph again, as before the cache);
- ``version``: ``linkmem --version`` (the interpreter and the CLI's imports, nothing else);
- ``phases``: ``--runs`` fresh processes doing the same search step by step in-process:
  importing ``linkmem.cli``, opening the store, importing and loading onnxruntime, and the
  first search (a search runs no NER: ``spacy_imported`` says whether anything imported
  spaCy); plus the threads running after each step;
- ``cli_compare`` (with ``--compare-src``): the ``cli`` search run by another linkmem source
  tree (the same console script with that ``src`` first on ``PYTHONPATH``) on a store it
  wrote itself, interleaved with ``cli``: an A/B of two versions in one sitting.

Every process reads compiled bytecode, as an installed linkmem does (pip compiles it): they
cache it under the run's folder (``PYTHONPYCACHEPREFIX``), warmed by one untimed search of
each tree, even where ``PYTHONDONTWRITEBYTECODE`` is set (an editable checkout then compiles
every linkmem module in every process: ~75 ms of CPU on a search). ``--no-bytecode-cache``
keeps the environment's setting.

Medians, minima (and every run) go to ``benchmarks/results/cold_start.json`` (or ``--out``) with the
machine load before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "cold_start.json"
LINKMEM = str(Path(sys.executable).with_name("linkmem"))
QUERY = "what did Maria buy in Lisbon"

# Runs in a fresh interpreter: prints one JSON line of phase timings (seconds).
PHASES = r"""
import json, os, sys, time
def threads():
    return len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else -1
t = {}
start = time.perf_counter()
def mark(name):
    global start
    now = time.perf_counter(); t[name] = now - start; start = now
import linkmem.cli
mark("import_cli")
from linkmem import Memory
memory = Memory(sys.argv[1])
mark("open_store")
base = threads()
import onnxruntime
mark("import_onnxruntime")
memory.embedder.load()
mark("load_onnx")
after_onnx = threads()
hits = memory.search(sys.argv[2], user_id="bench", top_k=10)["results"]
mark("first_search")
assert hits, "the prepared store returned nothing"
t["spacy_imported"] = int("spacy" in sys.modules)
t["threads"] = {"before_models": base, "after_onnx": after_onnx, "after_search": threads(),
                "onnx_intra_op": getattr(memory.embedder, "threads", None)}
print(json.dumps(t))
"""


def prepare_store(folder: Path, n: int, env: dict[str, str]) -> Path:
    """The store, written by a child process: this one stays small, since a child's peak RSS
    starts from its parent's at fork."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "store.db"
    code = (
        "import sys; sys.path.insert(0, sys.argv[2]); from bench_core import make_texts; "
        "from linkmem import Memory; m = Memory(sys.argv[1]); "
        "m.add_batch(make_texts(int(sys.argv[3]), seed=1), user_id='bench'); m.close()"
    )
    argv = [sys.executable, "-c", code, str(path), str(ROOT / "benchmarks"), str(n)]
    subprocess.run(argv, check=True, env=env)
    return path


def timed_process(argv: list[str], env: dict[str, str]) -> dict[str, float]:
    """Seconds to the first byte of stdout and to exit, CPU seconds (less sensitive to the
    machine's load than wall time) and peak RSS in MB, of one process."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert process.stdout is not None
    first = process.stdout.read(1)
    first_s = time.perf_counter() - start
    rest = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    exit_s = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0 or not (first + rest).strip():
        raise RuntimeError(f"{' '.join(argv)} failed with exit code {process.returncode}")
    return {
        "first_output_s": round(first_s, 3),
        "exit_s": round(exit_s, 3),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
    }


def phase_run(store: Path, env: dict[str, str]) -> dict[str, Any]:
    argv = [sys.executable, "-c", PHASES, str(store), QUERY]
    out = subprocess.run(argv, capture_output=True, text=True, check=True, env=env)
    return json.loads(out.stdout.splitlines()[-1])


def summary(runs: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Median and minimum (the quietest run: the machine is shared) of each number."""
    keys = [k for k, v in runs[0].items() if isinstance(v, int | float)]
    return {
        "median": {k: round(statistics.median(r[k] for r in runs), 3) for k in keys},
        "min": {k: round(min(r[k] for r in runs), 3) for k in keys},
    }


def commit() -> str:
    out = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return out.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--memories", type=int, default=200)
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--compare-src", help="another linkmem's src folder, run as cli_compare")
    parser.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="keep the environment's PYTHONDONTWRITEBYTECODE (default: bytecode is cached)",
    )
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="linkmem-cold-"))
    env = {**os.environ, "LINKMEM_HOME": str(folder)}
    if not args.no_bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(folder / "bytecode")
    store = prepare_store(folder, args.memories, env)
    search = [LINKMEM, "--db", str(store), "search", QUERY, "--user", "bench"]
    timed_process(search, env)  # untimed: writes the bytecode and the model cache
    compare = None
    if args.compare_src:
        source = str(Path(args.compare_src).resolve())
        other_env = {**env, "PYTHONPATH": source, "LINKMEM_HOME": str(folder / "compare")}
        other_store = prepare_store(folder / "compare", args.memories, other_env)
        argv = [LINKMEM, "--db", str(other_store), "search", QUERY, "--user", "bench"]
        timed_process(argv, other_env)
        compare = (argv, other_env, [])
    load_before = os.getloadavg()[0]
    uncached_env = {**env, "LINKMEM_ONNX_CACHE": "0"}
    cli, uncached, version, phases = [], [], [], []
    for _ in range(args.runs):  # interleaved, so a change in load hits every series alike
        cli.append(timed_process(search, env))
        uncached.append(timed_process(search, uncached_env))
        version.append(timed_process([LINKMEM, "--version"], env))
        phases.append(phase_run(store, env))
        if compare is not None:
            compare[2].append(timed_process(compare[0], compare[1]))
    results = {
        "commit": commit(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "load_before": round(load_before, 2),
        "load_after": round(os.getloadavg()[0], 2),
        "runs": args.runs,
        "memories": args.memories,
        "bytecode_cached": not args.no_bytecode_cache,
        "cli_search": summary(cli),
        "cli_search_uncached": summary(uncached),
        "cli_version": summary(version),
        "phases": summary(phases),
        "threads": phases[-1]["threads"],
        "all_runs": {
            "cli_search": cli,
            "cli_search_uncached": uncached,
            "cli_version": version,
            "phases": phases,
        },
    }
    if compare is not None:
        results["cli_compare"] = summary(compare[2])
        results["compare_src"] = args.compare_src
        results["all_runs"]["cli_compare"] = compare[2]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2))
    print(json.dumps({k: v for k, v in results.items() if k != "all_runs"}, indent=2))


if __name__ == "__main__":
    main()
