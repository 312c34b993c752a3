"""Cold start of ``linkmem mcp``: how soon a client can use a freshly spawned stdio server.

    python benchmarks/bench_mcp_start.py [--runs 5] [--out FILE]

Each run spawns ``linkmem mcp --user bench`` on a new empty store with the default models
(ONNX MiniLM, spaCy), speaks raw JSON-RPC over its stdin/stdout as a client does, and times
from the spawn: the answer to ``initialize``; the first tool result (``add_memory``, sent as
soon as ``initialize`` is answered, so it waits for whatever is still loading); and a second
call (``search_memory``, models loaded). For scale, each run also times ``linkmem --version``
(the interpreter and linkmem's CLI imports, without the MCP SDK). Medians and every run go to
``benchmarks/results/mcp_start.json`` (or ``--out``).
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
OUT = ROOT / "benchmarks" / "results" / "mcp_start.json"
LINKMEM = str(Path(sys.executable).with_name("linkmem"))
HELLO = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "bench", "version": "0"},
}


def call(process: subprocess.Popen, request_id: int, method: str, params: Any) -> dict:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    process.stdin.write(json.dumps(message) + "\n")
    process.stdin.flush()
    for line in process.stdout:
        answer = json.loads(line)
        if answer.get("id") == request_id:
            if "error" in answer or answer.get("result", {}).get("isError"):
                raise RuntimeError(f"{method} failed: {answer}")
            return answer
    raise RuntimeError(f"the server exited before answering {method}")


def tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def one_run(home: Path) -> dict[str, float]:
    env = {**os.environ, "LINKMEM_HOME": str(home)}
    for name in ("LINKMEM_EMBEDDER", "LINKMEM_DB", "LINKMEM_STORE"):
        env.pop(name, None)
    start = time.perf_counter()
    subprocess.run([LINKMEM, "--version"], check=True, capture_output=True, env=env)
    version = time.perf_counter() - start
    start = time.perf_counter()
    process = subprocess.Popen(
        [LINKMEM, "mcp", "--user", "bench"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        text=True,
    )
    try:
        call(process, 1, "initialize", HELLO)
        initialized = time.perf_counter() - start
        process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        process.stdin.write("\n")
        call(process, 2, "tools/call", tool("add_memory", {"text": "I adopted a dog named Max"}))
        first = time.perf_counter() - start
        before = time.perf_counter()
        call(process, 3, "tools/call", tool("search_memory", {"query": "how is my dog?"}))
        warm = time.perf_counter() - before
    finally:
        process.stdin.close()
        process.wait(timeout=60)
    return {
        "cli_version_s": version,
        "initialize_s": initialized,
        "first_tool_result_s": first,
        "warm_search_s": warm,
    }


def git_commit() -> str:
    result = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True)
    return result.stdout.decode().strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args()
    runs = []
    for i in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="linkmem-mcp-bench-") as home:
            runs.append(one_run(Path(home)))
        print(i + 1, json.dumps({k: round(v, 3) for k, v in runs[-1].items()}), flush=True)
    medians = {k: round(statistics.median(r[k] for r in runs), 3) for k in runs[0]}
    results = {
        "commit": git_commit(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "median": medians,
        "runs": [{k: round(v, 3) for k, v in r.items()} for r in runs],
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    print("median", json.dumps(medians))


if __name__ == "__main__":
    main()
