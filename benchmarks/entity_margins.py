"""What the entity signal adds, per category and per fold, from ``linkmem eval locomo --out`` files.

For each file: recall@10 of every ablation per category (1-4 also @25), then per conversation
(fold) categories 1-4 @10 with the entity margins ``full - dense+bm25+time`` (the signal on top
of everything else) and ``full - dense+bm25``, and the multi-hop and adversarial margins over
dense+bm25. ``--split`` also splits categories 1, 2 and 4 by whether every capitalised word of
the question (speakers and question words aside) appears in its evidence turns, given the data
file: where the words differ is where entity linking claims to help.

    python benchmarks/entity_margins.py results.json [more.json ...] [--data data.json]
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

ABLATIONS = ["dense", "bm25", "dense+bm25", "dense+entities", "dense+bm25+time", "full"]
QUESTION_WORDS = set("What When Which Who Where Why How Would Does Is Did The".split())


def recall(questions: list[dict], k: str, categories: set[int]) -> float:
    values = [q["recall"][k] for q in questions if q["category"] in categories]
    return sum(values) / len(values) if values else float("nan")


def category_table(ablations: dict) -> list[str]:
    rows = [
        "| ablation | 1 | 2 | 3 | 4 | 5 | 1-4 @10 / @25 |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name in ABLATIONS:
        qs = ablations[name]["questions"]
        cells = " | ".join(f"{recall(qs, '10', {c}):.3f}" for c in range(1, 6))
        both = f"{recall(qs, '10', {1, 2, 3, 4}):.3f} / {recall(qs, '25', {1, 2, 3, 4}):.3f}"
        rows.append(f"| {name} | {cells} | {both} |")
    return rows


def fold_table(ablations: dict) -> list[str]:
    head = " | ".join(ABLATIONS)
    rows = [
        f"| fold | {head} | full - d+b+t | full - d+b | multi-hop full - d+b | adv. full - d+b |",
        "|---|" + "---:|" * (len(ABLATIONS) + 4),
    ]
    folds = sorted({q["sample_id"] for q in ablations["full"]["questions"]})
    on_top, over = [], []
    for fold in folds:
        qs = {
            a: [q for q in ablations[a]["questions"] if q["sample_id"] == fold] for a in ABLATIONS
        }
        v = {a: recall(qs[a], "10", {1, 2, 3, 4}) for a in ABLATIONS}
        hop = 100 * (recall(qs["full"], "10", {1}) - recall(qs["dense+bm25"], "10", {1}))
        adv = 100 * (recall(qs["full"], "10", {5}) - recall(qs["dense+bm25"], "10", {5}))
        on_top.append(100 * (v["full"] - v["dense+bm25+time"]))
        over.append(100 * (v["full"] - v["dense+bm25"]))
        cells = " | ".join(f"{v[a]:.3f}" for a in ABLATIONS)
        rows.append(
            f"| {fold} | {cells} | {on_top[-1]:+.1f} | {over[-1]:+.1f} | {hop:+.1f} | {adv:+.1f} |"
        )
    rows.append(
        f"\nfull - dense+bm25+time per fold: mean {sum(on_top) / len(on_top):+.1f}, worst "
        f"{min(on_top):+.1f}; full - dense+bm25: mean {sum(over) / len(over):+.1f}, worst "
        f"{min(over):+.1f}"
    )
    return rows


def named_split(ablations: dict, data: Path) -> list[str]:
    samples = {s["sample_id"]: s for s in json.loads(data.read_text(encoding="utf-8"))}
    groups: dict[str, dict[str, list[float]]] = {}
    for name in ABLATIONS:
        for q in ablations[name]["questions"]:
            conv = samples[q["sample_id"]]["conversation"]
            if q["category"] not in (1, 2, 4):
                continue
            texts = {
                t["dia_id"]: t["text"] for v in conv.values() if isinstance(v, list) for t in v
            }
            words = set(re.findall(r"\b[A-Z][A-Za-z&]+\b", q["question"])) - QUESTION_WORDS
            words -= {conv.get("speaker_a"), conv.get("speaker_b")}
            if not words:
                continue
            evidence = " ".join(texts.get(e, "") for e in q["evidence"])
            group = (
                "evidence has them" if all(w in evidence for w in words) else "evidence lacks one"
            )
            groups.setdefault(group, {}).setdefault(name, []).append(q["recall"]["10"])
    rows = ["| question's names (1, 2, 4) | n | " + " | ".join(ABLATIONS) + " |"]
    rows.append("|---|---:|" + "---:|" * len(ABLATIONS))
    for group, by in sorted(groups.items()):
        cells = " | ".join(f"{sum(by[a]) / len(by[a]):.3f}" for a in ABLATIONS)
        rows.append(f"| {group} | {len(by['full'])} | {cells} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path, nargs="+")
    parser.add_argument("--data", type=Path, help="the data file, for the named/unnamed split")
    args = parser.parse_args()
    for path in args.results:
        ablations = json.loads(path.read_text(encoding="utf-8"))["ablations"]
        print(f"## {path}\n")
        print("\n".join(category_table(ablations)) + "\n")
        print("\n".join(fold_table(ablations)) + "\n")
        if args.data:
            print("\n".join(named_split(ablations, args.data)) + "\n")


if __name__ == "__main__":
    main()
