"""Load test of ``linkmem serve``: concurrent clients mixing add and search over HTTP.

    python benchmarks/bench_server.py [--clients 8] [--seconds 30] [--seed-memories 2000]
        [--search-ratio 0.8] [--users 8] [--out benchmarks/results/server.json]

Starts ``linkmem serve`` (real default models) on 127.0.0.1, a free port and a throwaway
``LINKMEM_HOME``, waits for ``/v1/ready`` and seeds the memories over ``--users`` users (100 per
``POST /v1/memories/batch``). Then ``--clients`` threads (at most 32, one ``httpx.Client`` each)
send, for ``--seconds``, a search (top_k 10; probability ``--search-ratio``) or an add of one
templated sentence full of names and places, for a random user; all seeded. Reports per route
requests, req/s, latency p50/p95/p99 (and the p50 of each fifth of the run) and the server's
``/metrics`` histogram; errors (any makes the exit code 1); the server's RSS and peak (VmHWM).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "server.json"
ROUTES = {"add": "/v1/memories", "search": "/v1/memories/search"}
MAX_CLIENTS, SEED_BATCH, FIFTHS = 32, 100, 5

NAMES = "Maria Ken Priya Tomás Aiko Sam Nadia Oscar Luna Emma Liam Olivia Noah Mateo".split()
PLACES = "Lisbon Kyoto Berlin Austin Nairobi Oslo Lima Seoul Porto Madrid Paris Vienna".split()
ORGS = ["Acme Corp", "Globex", "Initech", "Umbrella Labs", "Stark Industries", "Wayne Foods"]
TOPICS = "chess pottery jazz hiking sourdough climbing sailing photography gardening".split()
SENTENCES = [
    "{name} met {other} in {place} on day {n} to talk about {topic}.",
    "{name} moved to {place} and now works at {org} (note {n}).",
    "{other} told {name} that {org} opens an office in {place}; entry {n}.",
    "{name} has loved {topic} since a trip to {place} with {other}, log {n}.",
]
QUESTIONS = ["Where did {name} meet {other}?", "Where does {name} work now?"]
QUESTIONS += ["What does {name} like to do in {place}?", "Who talked about {org} in {place}?"]


def fill(template: str, rng: random.Random, n: int) -> str:
    name, other = rng.sample(NAMES, 2)
    place, org, topic = rng.choice(PLACES), rng.choice(ORGS), rng.choice(TOPICS)
    return template.format(name=name, other=other, place=place, org=org, topic=topic, n=n)


def proc_status_mb(pid: int, key: str) -> float:
    """``VmRSS`` or ``VmHWM`` (peak) of a process, from Linux ``/proc``, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError(f"no {key} in /proc/{pid}/status (this benchmark needs Linux)")


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def log_tail(self, lines: int = 20) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


@contextmanager
def running_server(home: Path) -> Iterator[Server]:
    """``linkmem serve`` on a free port; SIGTERM (then SIGKILL) when the block ends, however."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-c", "from linkmem.cli import main; main()"]
    command += ["--db", str(home / "bench.db"), "serve", "--port", str(port)]
    env, log = {**os.environ, "LINKMEM_HOME": str(home)}, home / "server.log"
    with log.open("wb") as out:  # a new session: Ctrl-C reaches only us, and we stop it
        process = subprocess.Popen(command, stdout=out, stderr=out, env=env, start_new_session=True)
    try:
        yield Server(f"http://127.0.0.1:{port}", process, log)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_ready(server: Server, timeout: float = 180.0) -> float:
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        if server.process.poll() is not None:
            raise RuntimeError(f"the server exited early:\n{server.log_tail()}")
        with suppress(httpx.HTTPError):
            if httpx.get(server.url + "/v1/ready", timeout=5).status_code == 200:
                return round(time.perf_counter() - started, 1)
        time.sleep(0.2)
    raise RuntimeError(f"the server was not ready after {timeout:.0f} s:\n{server.log_tail()}")


def seed(url: str, count: int, users: int) -> dict[str, Any]:
    rng, started = random.Random(0), time.perf_counter()
    with httpx.Client(base_url=url, timeout=300) as http:
        for start in range(0, count, SEED_BATCH):
            ids, user = range(start, min(start + SEED_BATCH, count)), start // SEED_BATCH % users
            items = [fill(rng.choice(SENTENCES), rng, i) for i in ids]
            body = {"items": items, "user_id": f"user-{user}"}
            http.post("/v1/memories/batch", json=body).raise_for_status()
    seconds = time.perf_counter() - started
    return {"memories": count, "seconds": round(seconds, 1), "per_s": round(count / seconds, 1)}


Sample = tuple[str, int, float]  # route, the fifth of the run it started in, latency in ms


def one_request(http: httpx.Client, rng: random.Random, n: int, args: argparse.Namespace) -> str:
    user = f"user-{rng.randrange(args.users)}"
    if rng.random() < args.search_ratio:
        route, body = "search", {"user_id": user, "query": fill(rng.choice(QUESTIONS), rng, n)}
    else:
        text = fill(rng.choice(SENTENCES), rng, n)
        route, body = "add", {"user_id": user, "messages": text, "metadata": {"n": n}}
    response = http.post(ROUTES[route], json=body)
    if response.status_code != 200:
        raise RuntimeError(f"{route}: HTTP {response.status_code} {response.text[:200]}")
    return route


@dataclass
class Shared:
    """What the client threads and the RSS monitor share (``list.append`` is atomic)."""

    url: str
    args: argparse.Namespace
    start: float = field(default_factory=time.perf_counter)
    stop: threading.Event = field(default_factory=threading.Event)
    samples: list[Sample] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    rss: list[tuple[float, float]] = field(default_factory=list)


def client_loop(client: int, run: Shared) -> None:
    rng, n, seconds = random.Random(1000 + client), 0, run.args.seconds
    with httpx.Client(base_url=run.url, timeout=120) as http:
        while not run.stop.is_set() and (now := time.perf_counter()) < run.start + seconds:
            n, fifth = n + 1, min(int((now - run.start) / seconds * FIFTHS), FIFTHS - 1)
            try:
                route = one_request(http, rng, client * 1_000_000 + n, run.args)
            except (httpx.HTTPError, RuntimeError) as e:
                run.errors.append(f"client {client}: {type(e).__name__}: {e}")
                continue
            run.samples.append((route, fifth, (time.perf_counter() - now) * 1000))


def sample_rss(pid: int, run: Shared) -> None:
    while not run.stop.wait(1.0):
        try:
            rss = proc_status_mb(pid, "VmRSS")
        except OSError:  # the server is gone; the clients report the errors
            return
        run.rss.append((round(time.perf_counter() - run.start, 1), rss))


def run_load(server: Server, args: argparse.Namespace) -> dict[str, Any]:
    rss_before, run = proc_status_mb(server.process.pid, "VmRSS"), Shared(server.url, args)
    monitor = threading.Thread(target=sample_rss, args=(server.process.pid, run))
    clients = [threading.Thread(target=client_loop, args=(i, run)) for i in range(args.clients)]
    for thread in [monitor, *clients]:
        thread.start()
    try:
        for thread in clients:
            thread.join()
    finally:  # on Ctrl-C too: each client stops after its current request
        run.stop.set()
    elapsed, samples, errors = time.perf_counter() - run.start, run.samples, run.errors
    monitor.join()
    return {
        "seconds": round(elapsed, 2),
        "routes": {route: route_stats(samples, route, elapsed) for route in ROUTES},
        "errors": len(errors),
        "first_errors": errors[:10],
        "server_rss_mb": {"before_load": rss_before, "each_second": run.rss},
    }


def route_stats(samples: list[Sample], route: str, elapsed: float) -> dict[str, Any]:
    mine = [(fifth, ms) for r, fifth, ms in samples if r == route]
    if not mine:
        return {"requests": 0}
    ms = np.array([m for _, m in mine])
    stats = {f"p{q}_ms": round(float(np.percentile(ms, q)), 1) for q in (50, 95, 99)}
    stats |= {"mean_ms": round(float(ms.mean()), 1), "per_s": round(len(ms) / elapsed, 1)}
    parts = [[m for f, m in mine if f == fifth] for fifth in range(FIFTHS)]
    by_fifth = [round(float(np.median(part)), 1) if part else None for part in parts]
    return {"requests": len(ms), **stats, "p50_ms_by_fifth_of_run": by_fifth}


def server_histogram(url: str) -> dict[str, Any]:
    """Per route, from the server's ``/metrics``: count, mean (ms), cumulative buckets (s)."""
    families = text_string_to_metric_families(httpx.get(url + "/metrics", timeout=30).text)
    family = next(f for f in families if f.name == "linkmem_request_seconds")
    result = {}
    for name, route in ROUTES.items():
        mine = [s for s in family.samples if s.labels["route"] == route]
        count = sum(s.value for s in mine if s.name.endswith("_count"))
        if not count:
            continue
        total = sum(s.value for s in mine if s.name.endswith("_sum"))
        buckets = {s.labels["le"]: int(s.value) for s in mine if "le" in s.labels}
        result[name] = {"count": int(count), "mean_ms": round(total / count * 1000, 1)}
        result[name]["buckets_le_seconds"] = buckets
    return result


def print_table(result: dict[str, Any]) -> None:
    row = "{:<7} {:>8} {:>7} {:>7} {:>7} {:>7} {:>8}  {}".format
    print(row("route", "requests", "req/s", "p50 ms", "p95 ms", "p99 ms", "mean ms", "server mean"))
    for route, s in result["load"]["routes"].items():
        if s["requests"]:
            srv = result["server_metrics"].get(route, {}).get("mean_ms")
            numbers = (s[k] for k in ("requests", "per_s", "p50_ms", "p95_ms", "p99_ms", "mean_ms"))
            print(row(route, *numbers, f"{srv} ms"))
            print(f"        p50 by fifth of the run: {s['p50_ms_by_fifth_of_run']} ms")
    rss = result["load"]["server_rss_mb"]
    end = rss["each_second"][-1][1] if rss["each_second"] else None
    print(f"server RSS: {rss['before_load']} MB before load, {end} at the end, peak {rss['peak']}")
    print(f"errors: {result['load']['errors']}")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=8, help=f"1 to {MAX_CLIENTS}")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--seed-memories", type=int, default=2000)
    parser.add_argument("--search-ratio", type=float, default=0.8)
    parser.add_argument("--users", type=int, default=8)
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args()
    if not 1 <= args.clients <= MAX_CLIENTS:
        parser.error(f"--clients must be between 1 and {MAX_CLIENTS}")
    if not 0.0 <= args.search_ratio <= 1.0 or args.users < 1 or args.seconds <= 0:
        parser.error("--search-ratio must be in [0, 1], --users >= 1 and --seconds > 0")
    return args


def machine() -> dict[str, Any]:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True)
    info = {"commit": commit.stdout.decode().strip(), "cpu_count": os.cpu_count()}
    info |= {"platform": platform.platform(), "python": platform.python_version()}
    return info | {"load_average_before": [round(x, 2) for x in os.getloadavg()]}


def run(args: argparse.Namespace, home: Path) -> dict[str, Any]:
    result: dict[str, Any] = {"settings": dict(vars(args)), "machine": machine()}
    with running_server(home) as server:
        result["ready_seconds"] = wait_ready(server)
        result["seed"] = seed(server.url, args.seed_memories, args.users)
        result["load"] = run_load(server, args)
        if server.process.poll() is not None:
            raise RuntimeError(f"the server died during the load:\n{server.log_tail()}")
        result["server_metrics"] = server_histogram(server.url)
        result["load"]["server_rss_mb"]["peak"] = proc_status_mb(server.process.pid, "VmHWM")
        if result["load"]["errors"]:
            result["server_log_tail"] = server.log_tail(40)
    result["machine"]["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    return result


def main() -> int:
    args = parse_args()
    with tempfile.TemporaryDirectory(prefix="linkmem-bench-server-") as home:
        result = run(args, Path(home))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2))
    print_table(result)
    if result["load"]["errors"]:
        failed = f"FAILED: {result['load']['errors']} requests failed; the first ones:"
        print(failed, *result["load"]["first_errors"], sep="\n", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
