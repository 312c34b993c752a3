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

``--why`` also sorts every miss into the first of these causes that fits (``why_missed``) and
prints a table of counts per conversation:

- *not linked to the person named*: the question names someone the turn has no link to
  (spoken by the other speaker, or by no one the store links);
- *query entity matched, boost hidden*: the turn is linked to an entity the query matched
  other than the name, whose boost is maxed with the name's, so it shows nowhere;
- *an entity of the kind, not matched*: the turn has a specific entity (not a speaker, at most
  ``entity_pool_max_links`` links) whose embedding is within 0.4 of the question's or of the
  kind it asks for (``entities.asked``), and the query did not match it;
- *pronoun, its neighbour has the word*: a pronoun in the turn, no content word of the
  question in it, one in one of the two turns before;
- *shares a word, loses on text*: a content word of the question (not a name) is in the
  turn; it loses to the same person's other turns;
- *a neighbour has the word*: none in the turn, one in the two turns before, no pronoun;
- *no route*: no word, entity or neighbour of the question (a paraphrase).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from linkmem import Memory
from linkmem.entities import boost as boost_module
from linkmem.entities.asked import asked_kind
from linkmem.errors import ConfigError
from linkmem.eval.locomo import Conversation, load_locomo
from linkmem.rank.dates import parse_date
from linkmem.rank.terms import STOP_WORDS
from linkmem.retrieval_config import RetrievalConfig
from linkmem.search import Signals

FULL = Signals(dense=True, keyword=True, entities=True, time=True)
#: A miss is "crowded" when its boosting entity boosts at least this many of the top 10.
CROWDED = 8
#: A miss is "close" when its score is within this of the 10th result's.
CLOSE = 0.02


#: Pronouns that point at a thing or person in an earlier turn.
PRONOUNS = frozenset("he him his she her it its they them their these those".split())
#: An entity this similar to the question or its kind is "of the kind" (``--why``).
LIKE_KIND = 0.4
CAUSES = (
    "not linked to the person named",
    "query entity matched, boost hidden",
    "an entity of the kind, not matched",
    "pronoun, its neighbour has the word",
    "shares a word, loses on text",
    "a neighbour has the word",
    "no route",
)


def _content_words(text: str) -> set[str]:
    words = set(re.findall(r"[a-z]+", text.lower())) - STOP_WORDS
    return words | {w[:-1] for w in words if w.endswith("s") and len(w) > 3}


def _body(text: str) -> str:
    return text.split(":", 1)[-1]


class Why:
    """Sorts one conversation's misses by cause (see the module docstring)."""

    def __init__(self, conv: Conversation, memory: Memory, ids: list[str]) -> None:
        self.texts = [t.memory_text for t in conv.turns]
        self.row = {t.dia_id: i for i, t in enumerate(conv.turns)}
        self.entities = memory.store.entities_of_memories(ids)
        self.ids = ids
        self.speakers = {s.lower() for s in conv.speakers}
        self.embed = memory.embedder.embed_batch
        self.max_links = RetrievalConfig().entity_pool_max_links
        self.by_id = {e.id: e for es in self.entities.values() for e in es}
        self._vectors: dict[str, np.ndarray] = {}

    def _vector(self, text: str) -> np.ndarray:
        if text not in self._vectors:
            self._vectors[text] = self.embed([text])[0]
        return self._vectors[text]

    def cause(self, question: str, matched: dict[str, float], dia_id: str) -> str:
        """The first cause that fits evidence turn ``dia_id`` of ``question`` (``matched``:
        the stored entities the query matched, with their similarity)."""
        i = self.row[dia_id]
        linked = self.entities.get(self.ids[i], [])
        by_id = self.by_id
        names = {
            by_id[e].text.lower()
            for e, sim in matched.items()
            if e in by_id and by_id[e].kind == "PROPER" and sim >= 0.9
        }
        texts = {e.text.lower() for e in linked}
        if names and not names & texts:
            return CAUSES[0]
        if any(e.id in matched and e.text.lower() not in names for e in linked):
            return CAUSES[1]
        kind = asked_kind(question)
        wanted = [self._vector(question)] + ([self._vector(kind)] if kind else [])
        for e in linked:
            if e.text.lower() in self.speakers or e.link_count > self.max_links:
                continue
            if max(float(self._vector(e.text) @ w) for w in wanted) >= LIKE_KIND:
                return CAUSES[2]
        words = _content_words(question) - self.speakers - {n.split()[0] for n in names}
        shares = bool(words & _content_words(_body(self.texts[i])))
        before = range(max(0, i - 2), i)
        neighbour = any(words & _content_words(_body(self.texts[j])) for j in before)
        pronoun = bool(set(re.findall(r"[a-z]+", _body(self.texts[i]).lower())) & PRONOUNS)
        if pronoun and neighbour and not shares:
            return CAUSES[3]
        if shares:
            return CAUSES[4]
        return CAUSES[5] if neighbour else CAUSES[6]


def misses_of(
    conv: Conversation, categories: set[int], memory: Memory, why: bool = False
) -> dict[str, Any]:
    """The missed evidence turns of one conversation's questions (of ``categories``), with
    their score parts (and cause, with ``why``); ``memory`` (entity linking on) gets the
    conversation's turns."""
    if memory.extractor is None:
        raise ConfigError("fold_misses needs a Memory with entity linking on")
    added = memory.add_batch(
        [t.memory_text for t in conv.turns],
        user_id=conv.sample_id,
        metadata=[t.metadata for t in conv.turns],
        timestamp=[parse_date(t.session_date) for t in conv.turns],
    )
    causes = Why(conv, memory, [r["id"] for r in added["results"]]) if why else None
    captured: dict[str, dict[str, float]] = {}
    real_similar = boost_module._similar_entities

    def spy(*args: Any) -> dict[str, float]:
        captured["similar"] = real_similar(*args)
        return captured["similar"]

    rows = []
    evidence = 0
    for q in conv.questions:
        if q.category not in categories or not q.evidence:
            continue
        evidence += len(q.evidence)
        captured.clear()
        boost_module._similar_entities = spy  # the query's matched entities, for ``why``
        try:
            found = memory.search(
                q.question,
                user_id=conv.sample_id,
                top_k=len(conv.turns),
                signals=FULL,
                explain=True,
            )["results"]
        finally:
            boost_module._similar_entities = real_similar
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
                    "category": q.category,
                    "cause": (
                        causes.cause(q.question, captured.get("similar", {}), dia_id)
                        if causes is not None and dia_id in causes.row
                        else None
                    ),
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


def why_table(result: dict[str, Any], categories: set[int]) -> str:
    """Misses of ``categories`` per cause (rows) and conversation (columns), as markdown."""
    convs = list(result)
    result = {
        c: {"misses": [m for m in r["misses"] if m["category"] in categories]}
        for c, r in result.items()
    }
    lines = ["| cause | " + " | ".join(convs) + " | total |", "|---|" + "---:|" * (len(convs) + 1)]
    for cause in CAUSES:
        counts = [sum(m["cause"] == cause for m in result[c]["misses"]) for c in convs]
        lines.append(f"| {cause} | " + " | ".join(map(str, counts)) + f" | {sum(counts)} |")
    totals = [len(result[c]["misses"]) for c in convs]
    lines.append("| **missed** | " + " | ".join(map(str, totals)) + f" | {sum(totals)} |")
    return "\n".join(lines)


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
    parser.add_argument("--why", action="store_true", help="sort the misses by cause")
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
                result[conv.sample_id] = misses_of(conv, categories, memory, args.why)
            finally:
                memory.close()
            print(summary(conv.sample_id, result[conv.sample_id]), flush=True)
    if args.why:
        print(f"\ncategories {args.categories}:\n" + why_table(result, categories))
        if len(categories) > 1 and 1 in categories:
            print("\nmulti-hop (1):\n" + why_table(result, {1}))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
