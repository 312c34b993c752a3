"""Would a vector per sentence find what one vector per memory misses? Dense recall only.

    python benchmarks/sentence_vectors.py --data ../shared/benchmarks/locomo/locomo-dev.json \
        --data /tmp/long-chats.json --out /tmp/sentence-vectors.json

For every conversation of each LoCoMo-format file, each turn is embedded whole (the default
embedder, no neighbour blending, so the comparison is of the vectors alone) and sentence by
sentence (split at . ! ? and line breaks, at most 40 sentences a turn). Each question (categories
1-4) ranks the turns by the whole turn's cosine, by its best sentence's, and by the larger of
the two; prints and writes recall@10 of each. Nothing in linkmem reads sentence vectors yet:
this measures whether they would pay (a fact in a short turn beside an unrelated request, or at
the end of a pasted text, is diluted in the turn's one vector).
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from pathlib import Path

import numpy as np

from linkmem import Memory
from linkmem.eval.locomo import Conversation, load_locomo

SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
MAX_SENTENCES = 40
RANKERS = ("whole turn", "best sentence", "max of both")


def unit(vectors: object) -> np.ndarray:
    rows = np.asarray(vectors, dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def sentences(text: str) -> list[str]:
    parts = [p for p in SENTENCE_END.split(text) if len(p.strip()) > 3]
    return parts[:MAX_SENTENCES] or [text]


def conversation_recalls(memory: Memory, conv: Conversation) -> dict[str, list[float]]:
    texts = [t.memory_text for t in conv.turns]
    dia_ids = [t.dia_id for t in conv.turns]
    whole = unit(memory.embedder.embed_batch(texts))
    split = [sentences(t) for t in texts]
    owner = np.repeat(np.arange(len(texts)), [len(s) for s in split])
    parts = unit(memory.embedder.embed_batch([s for ss in split for s in ss]))
    out: dict[str, list[float]] = {name: [] for name in RANKERS}
    for q in conv.questions:
        if not q.evidence or q.category not in (1, 2, 3, 4):
            continue
        query = unit(memory.embedder.embed_batch([q.question]))[0]
        by_turn = whole @ query
        by_sentence = np.full(len(texts), -1.0, dtype=np.float32)
        np.maximum.at(by_sentence, owner, parts @ query)
        for name, scores in zip(RANKERS, (by_turn, by_sentence, np.maximum(by_turn, by_sentence))):
            top = {dia_ids[i] for i in np.argsort(-scores, kind="stable")[:10]}
            out[name].append(sum(e in top for e in q.evidence) / len(q.evidence))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, action="append", required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        memory = Memory(Path(tmp) / "probe.db", store="sqlite")
        try:
            for path in args.data:
                totals: dict[str, list[float]] = {name: [] for name in RANKERS}
                for conv in load_locomo(path):
                    for name, values in conversation_recalls(memory, conv).items():
                        totals[name] += values
                results[path.name] = {n: round(float(np.mean(v)), 3) for n, v in totals.items()}
                print(path.name, results[path.name])
        finally:
            memory.close()
    args.out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
