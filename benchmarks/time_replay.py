"""Replay the fused ranking offline with a time signal added (issue 14, "Time").

    python benchmarks/time_replay.py --data <LoCoMo-format JSON> --signals /tmp/dev-signals.pkl \
        --out /tmp/dev-time.json

Reuses ``fusion_replay.py``: the signals of every question (dumped by it when ``--signals`` is
absent) are re-scored as ``rank.fusion`` does, on a base variant (the memories' own words in
BM25, or neighbour words at window 2 x 0.5), plus a time part from ``linkmem.rank.dates``:

- **range**: a question that names dates ("between August 11 and August 15 2023", "in April
  2022", "the week before 16 November 2023") adds ``own`` x [the memory's date is in the range]
  + ``mention`` x (the largest share of days of one of its time expressions, resolved against
  its date, that falls in the range: "dyed my hair last week" said on 5 May 2022 is 5/7 in
  April 2022);
- **when**: a "when" question ("When did ...", "What year ...", "How long ago ...") adds
  ``when`` to every memory with a time expression ("two weekends ago", "last year", "May 25").

A memory's date is its session's date (``session_date`` of the turn). Prints and writes, per
variant, recall@10 / @25 of temporal questions and of categories 1-4, each category @10, per
held-out conversation (constants are fixed, so a fold's held-out score is its conversation's)
with mean and worst fold.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fusion_replay import Variant, dump_signals, load_signals, score  # noqa: E402

from linkmem.eval.locomo import load_locomo  # noqa: E402
from linkmem.rank.dates import (  # noqa: E402
    Span,
    day,
    is_when_question,
    memory_spans_batch,
    overlap_share,
    parse_date,
    query_span,
)

BASES = {"own words": Variant(), "neighbour words": Variant(window=2, weight=0.5)}


@dataclass(frozen=True)
class TimeVariant:
    own: float = 0.0  # the memory's date lies in the question's range
    mention: float = 0.0  # times the share of a resolved time expression in the range
    when: float = 0.0  # a "when" question: the memory carries a time expression
    depth: int = 0  # >0: only the base ranking's first ``depth`` memories are re-scored


@dataclass
class ConvTime:
    """Per memory of one conversation: its date and its resolved time expressions."""

    anchors: list[Any]
    mentions: list[list[Span]]


def conv_times(data: Path) -> dict[str, ConvTime]:
    out = {}
    for conv in load_locomo(data):
        anchors = [parse_date(t.session_date) for t in conv.turns]
        mentions = memory_spans_batch([t.text for t in conv.turns], anchors)
        out[conv.sample_id] = ConvTime(anchors, mentions)
    return out


def time_part(times: ConvTime, question: str, v: TimeVariant) -> np.ndarray:
    n = len(times.anchors)
    part = np.zeros(n)
    span = query_span(question) if v.own or v.mention else None
    if span is not None:
        for i, (anchor, mentions) in enumerate(zip(times.anchors, times.mentions, strict=True)):
            own = overlap_share(span, day(anchor)) if anchor is not None else 0.0
            said = max((overlap_share(span, s) for s in mentions), default=0.0)
            part[i] = v.own * own + v.mention * said
    if v.when and is_when_question(question):
        part += v.when * np.array([bool(m) for m in times.mentions], float)
    return part


def evaluate(convs: list, times: dict[str, ConvTime], base: Variant, tv: TimeVariant) -> dict:
    rows = []
    for conv in convs:
        for q in conv.questions:
            total = score(conv, q, base)
            part = time_part(times[conv.sample_id], q.text, tv)
            if tv.depth:
                part[np.argsort(-total, kind="stable")[tv.depth :]] = 0.0
            total = total + part
            hit = q.evidence[np.argsort(-total, kind="stable")]
            n = max(int(q.evidence.sum()), 1)
            rows.append((conv.sample_id, q.category, hit[:10].sum() / n, hit[:25].sum() / n))
    return summarise(rows)


def summarise(rows: list[tuple[str, int, float, float]]) -> dict[str, Any]:
    folds = list(dict.fromkeys(r[0] for r in rows))

    def mean(keep: Any, k: int, fold: str | None = None) -> float:
        values = [r[k] for r in rows if keep(r[1]) and (fold is None or r[0] == fold)]
        return round(float(np.mean(values)), 3) if values else float("nan")

    groups = {"temporal": lambda c: c == 2, "1-4": lambda c: c in (1, 2, 3, 4)}
    groups |= {f"cat{c}": (lambda c0: lambda c: c == c0)(c) for c in (1, 3, 4, 5)}
    out: dict[str, Any] = {}
    for name, keep in groups.items():
        for k, label in ((2, "@10"), (3, "@25")):
            per_fold = {f: mean(keep, k, f) for f in folds}
            out[name + label] = {
                "all": mean(keep, k),
                "folds": per_fold,
                "mean": round(float(np.mean(list(per_fold.values()))), 3),
                "worst": min(per_fold.values()),
            }
    return out


TIME_VARIANTS: dict[str, TimeVariant] = {
    "none": TimeVariant(),
    "range own 0.1": TimeVariant(own=0.1),
    "range own 0.2": TimeVariant(own=0.2),
    "range mention 0.1": TimeVariant(mention=0.1),
    "range mention 0.2": TimeVariant(mention=0.2),
    "range own+mention 0.1": TimeVariant(own=0.1, mention=0.1),
    "range own+mention 0.2": TimeVariant(own=0.2, mention=0.2),
    "range own+mention 0.3": TimeVariant(own=0.3, mention=0.3),
    "when 0.05": TimeVariant(when=0.05),
    "when 0.1": TimeVariant(when=0.1),
    "when 0.2": TimeVariant(when=0.2),
    "both 0.2 / when 0.1": TimeVariant(own=0.2, mention=0.2, when=0.1),
    "both 0.2 / when 0.05": TimeVariant(own=0.2, mention=0.2, when=0.05),
    "both 0.1 / when 0.05": TimeVariant(own=0.1, mention=0.1, when=0.05),
    "both 0.2 / when 0.1, depth 200": TimeVariant(own=0.2, mention=0.2, when=0.1, depth=200),
    "both 0.2 / when 0.1, depth 100": TimeVariant(own=0.2, mention=0.2, when=0.1, depth=100),
    "both 0.2 / when 0.1, depth 50": TimeVariant(own=0.2, mention=0.2, when=0.1, depth=50),
}


def line(name: str, r: dict[str, Any]) -> str:
    def cell(key: str) -> str:
        x = r[key]
        return f"{x['all']:.3f} (w {x['worst']:.3f})"

    cats = " ".join(f"{r[f'cat{c}@10']['all']:.3f}" for c in (1, 3, 4, 5))
    folds = " ".join(f"{x:.3f}" for x in r["temporal@10"]["folds"].values())
    return (
        f"{name:44s} temp@10 {cell('temporal@10')} @25 {cell('temporal@25')}  1-4@10 "
        f"{cell('1-4@10')} @25 {cell('1-4@25')}  c1/3/4/5@10 {cats}  temp folds {folds}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="a LoCoMo-format JSON file")
    parser.add_argument("--signals", type=Path, required=True, help="fusion_replay's dump")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if not args.signals.is_file():
        dump_signals(args.data, args.signals)
    convs, times = load_signals(args.signals), conv_times(args.data)
    results: dict[str, Any] = {}
    for base_name, base in BASES.items():
        for name, tv in TIME_VARIANTS.items():
            label = f"{base_name}: {name}"
            results[label] = evaluate(convs, times, base, tv)
            print(line(label, results[label]), flush=True)
    args.out.write_text(json.dumps({"data": str(args.data), "variants": results}, indent=1))


if __name__ == "__main__":
    main()
