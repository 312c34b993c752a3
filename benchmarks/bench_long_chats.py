"""Long chats: recall of the planted facts under each way of embedding a long text, and the
entity store's size under each cap of entities per memory.

    python benchmarks/long_chats.py --out /tmp/long-chats.json
    python benchmarks/bench_long_chats.py --data /tmp/long-chats.json \
        --pooling first,mean,max --caps 32,16,8

Each variant builds its own store (default models, SQLite in a temporary folder) and runs
``run_locomo``; pooling variants with every ablation, cap variants (with the first pooling
given) with ``full`` only. Prints one line per variant and ablation: recall@5/@10/@25 of
categories 1-4, and for each store its entities per memory.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from pathlib import Path

from linkmem import Memory
from linkmem.embed.onnx import OnnxMiniLMEmbedder
from linkmem.eval.runner import run_locomo


def factory(pooling: str, cap: int, stats: dict):
    def build(path: Path) -> Memory:
        stats["path"] = path
        memory = Memory(
            path,
            store="sqlite",
            entities=True,
            embedder=OnnxMiniLMEmbedder(long_text_pooling=pooling),
            retrieval={"max_entities_per_memory": cap},
        )
        return memory

    return build


def run(data: Path, pooling: str, cap: int, ablations: list[str]) -> dict:
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
        memory_factory=factory(pooling, cap, stats),
        progress=count,
    )
    result["store"] = {k: stats[k] for k in ("entities", "links", "memories")}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--pooling", default="first,mean,max")
    parser.add_argument("--caps", default="32")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    poolings = [p for p in args.pooling.split(",") if p]
    caps = [int(c) for c in args.caps.split(",") if c]
    rows = []
    variants = [(p, caps[0], ["dense", "bm25", "dense+bm25", "full"]) for p in poolings]
    variants += [(poolings[-1], cap, ["full"]) for cap in caps[1:]]
    for pooling, cap, ablations in variants:
        result = run(args.data, pooling, cap, ablations)
        for name, data in result["ablations"].items():
            r = data["recall"]["1-4"]
            row = {
                "pooling": pooling,
                "cap": cap,
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
