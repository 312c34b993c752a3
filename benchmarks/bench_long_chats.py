"""Long chats: recall of the planted facts under each way of embedding a long text, each
long-text budget, and the entity store's size under each cap of entities per memory.

    python benchmarks/long_chats.py --out /tmp/long-chats.json
    python benchmarks/bench_long_chats.py --data /tmp/long-chats.json \
        --pooling first,mean,max --caps 32,16,8 --budgets 0,2000,1000:4000

Each variant builds its own store (default models, SQLite in a temporary folder) and runs
``run_locomo``; pooling variants with every ablation, cap variants (with the last pooling
given) with ``full`` only; or, given ``--budgets``, only budget variants (``EMBED[:NER[:WHOLE]]``
characters read of a long text, ``linkmem.long_texts``; 0: all) with every ablation.
Prints one line per variant and ablation: recall@5/@10/@25 of categories 1-4, the add time,
and the store's size.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from pathlib import Path

from linkmem import Memory, long_texts
from linkmem.config import RetrievalConfig
from linkmem.embed.onnx import OnnxMiniLMEmbedder
from linkmem.eval.runner import run_locomo


def factory(pooling: str, cap: int, budget: long_texts.LongTextBudget, stats: dict):
    def build(path: Path) -> Memory:
        stats["path"] = path
        memory = Memory(
            path,
            store="sqlite",
            entities=True,
            embedder=OnnxMiniLMEmbedder(long_text_pooling=pooling),
            retrieval={
                "max_entities_per_memory": cap,
                "long_text_embed_chars": budget.embed_chars,
                "long_text_ner_chars": budget.ner_chars,
                "long_text_whole_chars": budget.whole_chars,
            },
        )
        return memory

    return build


def parse_budget(text: str) -> long_texts.LongTextBudget:
    """``EMBED[:NER[:WHOLE]]`` characters (NER defaults to EMBED, WHOLE to 0)."""
    embed, ner, whole = ([*text.split(":"), "", ""])[:3]
    return long_texts.LongTextBudget(int(embed), int(ner or embed), int(whole or 0))


def run(
    data: Path, pooling: str, cap: int, ablations: list[str], budget: long_texts.LongTextBudget
) -> dict:
    stats: dict = {}

    def count(_message: str) -> None:  # after each conversation's add: the store's sizes
        with sqlite3.connect(stats["path"]) as db:
            stats["entities"] = db.execute("SELECT count(*) FROM memories_entities").fetchone()[0]
            stats["links"] = db.execute("SELECT count(*) FROM memories_links").fetchone()[0]
            stats["memories"] = db.execute("SELECT count(*) FROM memories").fetchone()[0]

    result = run_locomo(
        data,
        ks=[5, 10, 25],
        ablations=ablations,
        memory_factory=factory(pooling, cap, budget, stats),
        progress=count,
    )
    result["store"] = {k: stats[k] for k in ("entities", "links", "memories")}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--pooling", default="first,mean,max")
    parser.add_argument("--caps", default="32")
    parser.add_argument(
        "--budgets", default="", help="comma list of EMBED[:NER[:WHOLE]] characters"
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    poolings = [p for p in args.pooling.split(",") if p]
    caps = [int(c) for c in args.caps.split(",") if c]
    budgets = [parse_budget(b) for b in args.budgets.split(",") if b]
    rows = []
    every = ["dense", "bm25", "dense+bm25", "full"]
    none, default = long_texts.LongTextBudget(), long_texts.budget_of(RetrievalConfig())
    variants = [(p, caps[0], every, default) for p in poolings]
    variants += [(poolings[-1], cap, ["full"], default) for cap in caps[1:]]
    if budgets:  # budget variants only (budget 0: reading every text whole)
        variants = [(poolings[-1], caps[0], every, b) for b in budgets]
    for pooling, cap, ablations, budget in variants:
        result = run(args.data, pooling, cap, ablations, budget)
        for name, data in result["ablations"].items():
            r = data["recall"]["1-4"]
            row = {
                "pooling": pooling,
                "cap": cap,
                "budget": [budget.embed_chars, budget.ner_chars, budget.whole_chars]
                if budget != none
                else None,
                "ablation": name,
                "recall": [r["5"], r["10"], r["25"]],
                "multi_hop_10": data["recall"]["1"]["10"],
                "search_p50_ms": data["search_ms"]["p50"],
                "add_seconds": result["timing"]["add_seconds"],
                **result["store"],
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
