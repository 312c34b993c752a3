"""Where a conversation's misses come from: the evidence turns full search ranks below 10.

    python benchmarks/fold_misses.py --data ../shared/benchmarks/locomo/locomo-dev.json \
        [--categories 1] [--conversations conv-42,conv-30] [--out misses.json]

Builds each conversation's store as ``linkmem eval locomo`` does (one memory per turn, entity
linking on) and searches its questions with the full system, ``explain=True`` and every memory
a candidate (``top_k`` = the conversation's size; the eval's pool at ``top_k`` 25 is smaller,
so a rank can differ by a place or two). For every evidence turn ranked 10th or lower it
records the turn's score parts and the 10th result's score, then prints per conversation:

- **missed**: evidence turns below the top 10 (of all the questions' evidence turns);
- **crowded**: misses whose boosting entity (the one that gave the miss its entity boost)
  also boosts at least 8 of the top 10: the question found the right person or thing, and the
  miss lost to that entity's other memories on text alone, where no entity boost can tell
  them apart (boosts of several entities do not add up: ``rank.fusion.best_boosts``);
- **unboosted**: misses with no entity boost (an entity could still reach them);
- the median score gap to the 10th result, and how many misses are within 0.02 of it;
- **hub share**: the share of the conversation's extracted entities (one per memory and key,
  before back references) held by its two most frequent, the speakers in a LoCoMo chat.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from linkmem import Memory
from linkmem.errors import ConfigError
from linkmem.eval.locomo import Conversation, load_locomo
from linkmem.rank.dates import parse_date
from linkmem.search import Signals

FULL = Signals(dense=True, keyword=True, entities=True, time=True)
#: A miss is "crowded" when its boosting entity boosts at least this many of the top 10.
CROWDED = 8
#: A miss is "close" when its score is within this of the 10th result's.
CLOSE = 0.02


def misses_of(conv: Conversation, categories: set[int], memory: Memory) -> dict[str, Any]:
    """The missed evidence turns of one conversation's questions (of ``categories``), with
    their score parts; ``memory`` (entity linking on) gets the conversation's turns."""
    if memory.extractor is None:
        raise ConfigError("fold_misses needs a Memory with entity linking on")
    memory.add_batch(
        [t.memory_text for t in conv.turns],
        user_id=conv.sample_id,
        metadata=[t.metadata for t in conv.turns],
        timestamp=[parse_date(t.session_date) for t in conv.turns],
    )
    rows = []
    evidence = 0
    for q in conv.questions:
        if q.category not in categories or not q.evidence:
            continue
        evidence += len(q.evidence)
        found = memory.search(
            q.question,
            user_id=conv.sample_id,
            top_k=len(conv.turns),
            signals=FULL,
            explain=True,
        )["results"]
        ranked = [
            (h["metadata"]["dia_id"], {**h["score_details"], "score": h["score"]}) for h in found
        ]
        ids = [dia_id for dia_id, _ in ranked]
        top = [parts for _, parts in ranked[:10]]
        tenth = top[-1]["score"] if len(top) == 10 else 0.0
        for dia_id in q.evidence:
            rank = ids.index(dia_id) if dia_id in ids else None
            if rank is not None and rank < 10:
                continue
            parts = ranked[rank][1] if rank is not None else {}
            entity = parts.get("entity")
            rows.append(
                {
                    "question": q.question,
                    "evidence": dia_id,
                    "rank": rank,
                    "gap": tenth - parts["score"] if parts else None,
                    "entity": entity,
                    "crowding": sum(p.get("entity") == entity for p in top) if entity else 0,
                }
            )
    share = hub_share(conv, memory.extractor)
    return {"evidence": evidence, "misses": rows, "hub_share": share}


def hub_share(conv: Conversation, extractor: Any) -> float:
    """The share of the conversation's extracted entities held by its two most frequent."""
    counts = Counter(
        e.key
        for entities in extractor.extract_batch([t.memory_text for t in conv.turns])
        for e in entities
    )
    total = sum(counts.values())
    return sum(n for _, n in counts.most_common(2)) / total if total else 0.0


def summary(sample_id: str, found: dict[str, Any]) -> str:
    misses = found["misses"]
    gaps = [m["gap"] for m in misses if m["gap"] is not None]
    crowded = sum(m["crowding"] >= CROWDED for m in misses)
    unboosted = sum(m["entity"] is None for m in misses)
    median = statistics.median(gaps) if gaps else float("nan")
    close = sum(g < CLOSE for g in gaps)
    return (
        f"{sample_id}: missed {len(misses)} of {found['evidence']} evidence turns; crowded "
        f"{crowded}, unboosted {unboosted}; median gap {median:.3f}, within {CLOSE} {close}; "
        f"hub share {found['hub_share']:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data", type=Path, default=Path("../shared/benchmarks/locomo/locomo-dev.json")
    )
    parser.add_argument("--categories", default="1", help="comma list of question categories")
    parser.add_argument(
        "--conversations", default="", help="comma list of sample ids (default all)"
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    categories = {int(c) for c in args.categories.split(",")}
    wanted = {c for c in args.conversations.split(",") if c}
    result = {}
    with tempfile.TemporaryDirectory(prefix="fold-misses-") as tmp:
        for conv in load_locomo(args.data):
            if wanted and conv.sample_id not in wanted:
                continue
            memory = Memory(Path(tmp) / f"{conv.sample_id}.db", store="sqlite", entities=True)
            try:
                result[conv.sample_id] = misses_of(conv, categories, memory)
            finally:
                memory.close()
            print(summary(conv.sample_id, result[conv.sample_id]), flush=True)
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
