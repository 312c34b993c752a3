"""The time signal measured live: ``linkmem eval locomo`` with and without it, per fold.

    python benchmarks/time_eval.py --data ../shared/benchmarks/locomo/locomo-dev.json \
        --out /tmp/time-eval.json

One store, built as ``linkmem eval locomo`` builds it (each turn's ``timestamp`` is its
session date); every question is searched by ``full`` and ``dense+bm25``, each with the time
signal (``linkmem.rank.time_boost``) and without it (``Signals(time=False)``). Prints recall
@10 / @25 per held-out conversation (constants are fixed, so a fold's held-out score is its
conversation's) for categories 1-4 and each category, with mean and worst fold, and the
search latency of each ablation; writes the whole result to ``--out``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import linkmem.eval.runner as runner
from linkmem.eval.folds import fold_table
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
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
