"""The time signal measured live: ``linkmem eval locomo`` with and without it, per fold.

    python benchmarks/time_eval.py --data ../shared/benchmarks/locomo/locomo-dev.json \
        --out /tmp/time-eval.json

One store, built as ``linkmem eval locomo`` builds it (each turn's ``timestamp`` is its
session date); every question is searched by ``full`` and ``dense+bm25``, each with the time
signal (``linkmem.rank.time_boost``) and without it (``Signals(time=False)``). Prints recall
@10 / @25 per held-out conversation (constants are fixed, so a fold's held-out score is its
conversation's) for categories 1-4 and each category, with mean and worst fold, and the
search latency of each ablation; writes the whole result to ``--out``.

``--cost``: instead, the time signal's own price: the first conversation is added and every
question searched (top_k 10, then 50) with ``rescore_asked`` timed alone; p50 / p95 ms over
the questions it re-scores (a date or "when"; the others skip it: a search reads the
question's time, ``query_time``, beside the query's vector).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import linkmem.eval.runner as runner
import linkmem.search as search_module
from linkmem.eval.folds import fold_table
from linkmem.eval.locomo import load_locomo
from linkmem.search import Signals

EXTRA = {
    "full, no time": Signals(time=False),
    "dense+bm25, no time": Signals(entities=False, time=False),
}
NAMES = ["full", "full, no time", "dense+bm25", "dense+bm25, no time"]
GROUPS = ("1-4", "1", "2", "3", "4", "5")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="a LoCoMo-format JSON file")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--cost", action="store_true", help="time the time signal alone")
    args = parser.parse_args()
    if args.cost:
        cost = rescore_cost(args.data)
        print(json.dumps(cost, indent=1))
        args.out.write_text(json.dumps(cost, indent=1))
        return
    runner.ABLATIONS.update(EXTRA)
    result = runner.run_locomo(args.data, (10, 25), NAMES, progress=print)
    questions = {name: result["ablations"][name]["questions"] for name in NAMES}
    table = fold_table(questions, GROUPS, (10, 25))
    for line in report(table, result):
        print(line)
    summary = {"folds": table, "search_ms": {n: result["ablations"][n]["search_ms"] for n in NAMES}}
    args.out.write_text(json.dumps(summary, indent=1))


def report(table: dict[str, Any], result: dict[str, Any]) -> list[str]:
    lines = [f"folds: {' '.join(table['folds'])}"]
    for group in GROUPS:
        for name in NAMES:
            cells = []
            for k in ("10", "25"):
                per_fold = table["recall"][name][group][k]
                spread = table["spread"][name][group][k]
                folds = " ".join("  -  " if x is None else f"{x:.3f}" for x in per_fold.values())
                mean, worst = spread["mean"], spread["worst"]
                cells.append(f"@{k} {folds} | mean {mean:.3f} worst {worst:.3f}")
            lines.append(f"{group:4s} {name:22s} " + "   ".join(cells))
    for name in NAMES:
        ms = result["ablations"][name]["search_ms"]
        lines.append(f"search ms {name:22s} p50 {ms['p50']:.1f} p95 {ms['p95']:.1f}")
    return lines


def rescore_cost(data: Path) -> dict[str, Any]:
    spent: list[float] = []
    real = search_module.rescore_asked

    def timed(*args: Any) -> Any:
        start = time.perf_counter()
        out = real(*args)
        spent.append(1000 * (time.perf_counter() - start))
        return out

    conv = load_locomo(data)[0]
    out: dict[str, Any] = {}
    search_module.rescore_asked = timed
    with tempfile.TemporaryDirectory() as tmp:
        memory = runner.default_memory(Path(tmp) / "cost.db")
        try:
            runner.add_conversations(memory, [conv], lambda _: None)
            for top_k in (10, 50):
                spent.clear()
                for q in conv.questions:
                    memory.search(q.question, user_id=conv.sample_id, top_k=top_k)
                out[f"top_k {top_k}"] = {
                    "time questions": _ms(spent),
                    "share re-scored": round(len(spent) / len(conv.questions), 3),
                }
        finally:
            memory.close()
            search_module.rescore_asked = real
    return out


def _ms(values: list[float]) -> dict[str, float | int]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return {"n": len(values), "p50": round(statistics.median(values), 3), "p95": round(p95, 3)}


if __name__ == "__main__":
    main()
