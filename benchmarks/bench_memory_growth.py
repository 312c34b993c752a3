"""Memory growth of the model paths over many distinct texts: spaCy extraction and embedding.

    python benchmarks/bench_memory_growth.py [--texts 40000] [--batch 32] [--every 4000]
                                             [--paths extract,embed] [--out FILE]

Every text is new and full of words no model has seen (made-up names, places, ids, numbers),
which is what a long-running server writes. Each path runs in its own child process with the
real default models (``LazyExtractor.extract_batch``, the one ``Memory`` uses, and the ONNX
embedder's ``embed_batch``), ``--batch`` texts per call, and reports its RSS every ``--every``
texts; the extract path also reports the size of spaCy's ``Vocab`` (lexemes), ``StringStore``
and the lemmatizer's cache. Numbers go to ``benchmarks/results/memory_growth.json`` (or
``--out``).
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "memory_growth.json"

ONSETS = "b br ch d dr f g gr h j k kl l m n p pr qu r s sh st t tr v w z".split()
VOWELS = "a e i o u ai ea io ou y".split()
CODAS = ["", "", "n", "r", "s", "th", "x", "l", "m", "nd", "rk"]
TEMPLATES = [
    "{name} met {other} in {place} on {day} and paid {amount} for ticket #{number}.",
    "{name}: the {word} build {version} fails in {ident}.py, see {url} for the log.",
    "Remind me that {name} {surname} moved to {place} and now works at {org} {suffix}.",
    "{other} said '{word} {word2}' is the best book about {place}; order id {number}.",
    "Call {name} at {phone} about the {word} repair, {amount} quoted by {org}.",
]


def made_up_word(rng: random.Random, syllables: int) -> str:
    parts = (rng.choice(ONSETS) + rng.choice(VOWELS) for _ in range(syllables))
    return "".join(parts) + rng.choice(CODAS)


def make_text(rng: random.Random, i: int) -> str:
    """One distinct text; ``i`` keeps it unique even when the random words repeat."""

    def name() -> str:
        return made_up_word(rng, rng.randint(2, 3)).capitalize()

    return rng.choice(TEMPLATES).format(
        name=name(),
        other=name(),
        surname=name(),
        place=name() + rng.choice(["ville", "burg", " City", "stad", ""]),
        org=name() + rng.choice([" Labs", " GmbH", " Inc", " Co"]),
        suffix=i,
        day=f"{rng.randint(1, 28)} {rng.choice(['March', 'May', 'June', 'October'])}",
        amount=f"${rng.randint(10, 99999)}.{rng.randint(0, 99):02d}",
        number=f"{i}-{rng.randint(1000, 999999)}",
        word=made_up_word(rng, 2),
        word2=made_up_word(rng, 3),
        version=f"v{rng.randint(0, 9)}.{rng.randint(0, 99)}.{i}",
        ident=f"{made_up_word(rng, 2)}_{made_up_word(rng, 2)}_{i}",
        url=f"https://{made_up_word(rng, 2)}.example.org/{i}/{made_up_word(rng, 3)}",
        phone=f"+1 {rng.randint(200, 999)}-{rng.randint(100, 999)}-{i % 10000:04d}",
    )


def texts(count: int, seed: int) -> Iterator[str]:
    rng = random.Random(seed)
    return (make_text(rng, i) for i in range(count))


def batches(items: Iterator[str], size: int) -> Iterator[list[str]]:
    batch: list[str] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def rss_mb() -> float:
    """The current resident set size (Linux ``/proc``), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError("no VmRSS in /proc/self/status (this benchmark needs Linux)")


# ------------------------------------------------------------------ one path, in a child
def extract_path() -> tuple[Callable[[list[str]], Any], Callable[[], dict[str, int]]]:
    from linkmem.components import LazyExtractor
    from linkmem.config import resolve_settings

    extractor = LazyExtractor(resolve_settings())
    nlp = extractor.get()._nlp  # the benchmark looks inside spaCy on purpose
    lemmatizer = nlp.get_pipe("lemmatizer") if "lemmatizer" in nlp.component_names else None

    def sizes() -> dict[str, int]:
        return {
            # not len(nlp.vocab): a counter that memory zones never decrement
            "vocab_lexemes": sum(1 for _ in nlp.vocab),
            "string_store": len(nlp.vocab.strings),
            "lemmatizer_cache": len(getattr(lemmatizer, "cache", ())),
        }

    return extractor.extract_batch, sizes


def embed_path() -> tuple[Callable[[list[str]], Any], Callable[[], dict[str, int]]]:
    from linkmem.components import build_embedder
    from linkmem.config import resolve_settings

    embedder = build_embedder(resolve_settings())
    return embedder.embed_batch, dict


PATHS = {"extract": extract_path, "embed": embed_path}


def run_path(path: str, count: int, batch: int, every: int, seed: int) -> dict[str, Any]:
    run, sizes = PATHS[path]()
    run(["Warm-up: Alice met Bob in Paris and paid $12.50."])
    points = [{"texts": 0, "seconds": 0.0, "rss_mb": rss_mb(), **sizes()}]
    print(json.dumps({"path": path, **points[0]}), file=sys.stderr, flush=True)
    done, start = 0, time.perf_counter()
    for chunk in batches(texts(count, seed), batch):
        run(chunk)
        done += len(chunk)
        if done % every < len(chunk) or done == count:
            point = {"texts": done, "seconds": round(time.perf_counter() - start, 1)}
            points.append({**point, "rss_mb": rss_mb(), **sizes()})
            print(json.dumps({"path": path, **points[-1]}), file=sys.stderr, flush=True)
    return summarise(points)


def summarise(points: list[dict[str, Any]]) -> dict[str, Any]:
    first, last = points[1], points[-1]  # after the first checkpoint: caches have warmed up
    growth = last["rss_mb"] - first["rss_mb"]
    return {
        "rss_start_mb": points[0]["rss_mb"],
        "rss_end_mb": last["rss_mb"],
        "rss_growth_after_first_checkpoint_mb": round(growth, 1),
        "texts_per_s": round(last["texts"] / last["seconds"], 1) if last["seconds"] else None,
        "points": points,
    }


def run_child(path: str, args: argparse.Namespace) -> dict[str, Any]:
    """Run one path in a fresh interpreter, so each RSS belongs to one path alone."""
    command = [sys.executable, __file__, "--child", path, "--texts", str(args.texts)]
    command += ["--batch", str(args.batch), "--every", str(args.every), "--seed", str(args.seed)]
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(done.stdout)


def git_commit() -> str:
    result = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True)
    return result.stdout.decode().strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--texts", type=int, default=40_000)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--every", type=int, default=4_000)
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--paths", default="extract,embed")
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--child", choices=sorted(PATHS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        result = run_path(args.child, args.texts, args.batch, args.every, args.seed)
        print(json.dumps(result))
        return
    results = {
        "commit": git_commit(),
        "python": platform.python_version(),
        "texts": args.texts,
        "batch": args.batch,
        "paths": {path: run_child(path, args) for path in args.paths.split(",")},
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2))
    for path, result in results["paths"].items():
        summary = {k: v for k, v in result.items() if k != "points"}
        print(path, json.dumps(summary))


if __name__ == "__main__":
    main()
