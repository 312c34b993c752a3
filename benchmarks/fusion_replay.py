"""Replay the fused ranking offline under variants of the keyword signal and of fusion.

    python benchmarks/fusion_replay.py --data benchmarks/results/synthetic-conversations.json \
        --signals /tmp/synth-signals.pkl --out /tmp/synth-replay.json

Builds the store as ``linkmem eval locomo`` does (one memory per turn, one ``add_batch`` and
scope per conversation, default models) and searches every question with the full system and
``top_k`` = the conversation's size, so every memory of the scope is a candidate, with keyword
context off (``keyword_context_weight`` 0: postings of each memory's own words). The signals
fusion receives (cosine, raw BM25, entity boost, hop), read from each result's score parts
(``explain=True``, rounded to 1e-6), are kept per memory (cached in ``--signals``). Each
variant then re-scores every memory from those signals and the turns' text: BM25 is
recomputed with ``linkmem.rank.bm25``'s formula over documents expanded with their neighbour
turns (BM25F-like: neighbours' term counts and lengths at ``weight``, each neighbour's weight
scaled by ``length_ratio`` as ``linkmem.rank.neighbour_terms`` does), or scaled by the
query-term coverage, and fused as ``rank.fusion.fuse`` does. The "own words" rows replay
``linkmem eval locomo`` with ``keyword_context_weight`` 0 (to the parts' rounding); a variant
is exact but for the candidate pool (every memory here, the pool of a real search is smaller),
the hop targets (those of the own-words ranking) and the store's rounding of context weights.

Prints and writes, per variant, recall@10 / @25 of categories 1-4, multi-hop @10 and recall@10
per conversation (the leave-one-out folds: constants are fixed, so a held-out fold's score is
its conversation's), with the dense-only ranking as reference.
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from linkmem import Memory
from linkmem.config import RetrievalConfig
from linkmem.eval.locomo import load_locomo
from linkmem.rank.bm25 import K1, B
from linkmem.rank.terms import query_terms, terms

CONFIG = RetrievalConfig()


def dump_signals(data: Path, out: Path) -> None:
    """Search every question with all memories as candidates; keep what fusion received (each
    result's score parts, ``explain=True``: cosine, raw BM25, entity boost, hop entity)."""
    conversations = []
    with tempfile.TemporaryDirectory() as tmp:
        # The keyword signal of the dump is the memories' own words; variants add context.
        own_words = {"keyword_context_weight": 0.0}
        memory = Memory(Path(tmp) / "replay.db", store="sqlite", entities=True, retrieval=own_words)
        try:
            for conv in load_locomo(data):
                texts = [t.memory_text for t in conv.turns]
                metadata = [t.metadata for t in conv.turns]
                added = memory.add_batch(texts, user_id=conv.sample_id, metadata=metadata)
                questions = [
                    _signals(memory, conv.sample_id, q, len(texts))
                    for q in conv.questions
                    if q.evidence
                ]
                conversations.append(
                    {"sample_id": conv.sample_id, "ids": [r["id"] for r in added["results"]],
                     "dia": [m["dia_id"] for m in metadata], "texts": texts,
                     "questions": questions}
                )  # fmt: skip
        finally:
            memory.close()
    out.write_bytes(pickle.dumps({"convs": conversations}))


def _signals(memory: Memory, scope: str, q: Any, top_k: int) -> dict[str, Any]:
    """One question's signals per memory, from its score parts (rounded to 1e-6)."""
    found = memory.search(q.question, user_id=scope, top_k=top_k, explain=True)
    parts = {hit["id"]: hit["score_details"] for hit in found["results"]}
    return {
        "question": q.question,
        "category": q.category,
        "evidence": list(q.evidence),
        "dense": {m: p["dense"] for m, p in parts.items()},
        "bm25": {m: p["bm25_raw"] for m, p in parts.items()},
        "n_terms": len(query_terms(q.question)),
        "boosts": {m: (p["entity_boost"], p["entity"]) for m, p in parts.items() if p["entity"]},
        "hops": {m: p["hop_entity"] for m, p in parts.items() if p["hop_entity"]},
    }


@dataclass
class Question:
    text: str
    category: int
    evidence: np.ndarray  # bool per memory
    dense: np.ndarray
    bm25: np.ndarray
    n_terms: int
    boost: np.ndarray
    hop: np.ndarray
    terms: list[str]


@dataclass
class Conversation:
    sample_id: str
    counts: list[Counter[str]]
    lengths: np.ndarray
    questions: list[Question] = field(default_factory=list)
    _kept: dict[float, np.ndarray] = field(default_factory=dict)

    def kept_lengths(self, max_df: float) -> np.ndarray:
        """Each memory's length counting only terms in at most ``max_df`` of the memories."""
        if max_df >= 1.0:
            return self.lengths
        if max_df not in self._kept:
            df = Counter(t for c in self.counts for t in c)
            limit = max_df * len(self.counts)
            kept = [sum(n for t, n in c.items() if df[t] <= limit) for c in self.counts]
            self._kept[max_df] = np.array(kept, float)
        return self._kept[max_df]


def load_signals(path: Path) -> list[Conversation]:
    out = []
    for c in pickle.loads(path.read_bytes())["convs"]:
        row = {mid: i for i, mid in enumerate(c["ids"])}
        counts = [Counter(terms(t)) for t in c["texts"]]
        conv = Conversation(c["sample_id"], counts, np.array([sum(x.values()) for x in counts]))
        for q in c["questions"]:
            conv.questions.append(
                Question(
                    q["question"],
                    q["category"],
                    np.isin(np.array(c["dia"]), q["evidence"]),
                    _array(row, q["dense"]),
                    _array(row, q["bm25"]),
                    q["n_terms"],
                    _array(row, {m: v for m, (v, _) in q["boosts"].items()}),
                    _array(row, dict.fromkeys(q["hops"], 1.0)) > 0,
                    list(dict.fromkeys(query_terms(q["question"]))),
                )
            )
        out.append(conv)
    return out


def _array(row: dict[str, int], values: dict[str, float]) -> np.ndarray:
    out = np.zeros(len(row))
    for mid, value in values.items():
        if mid in row:
            out[row[mid]] = value
    return out


@dataclass(frozen=True)
class Variant:
    """One way to score: keyword expansion, coverage, squash constants, signal weights."""

    window: int = 0  # neighbour turns on each side whose words a document carries
    weight: float = 0.0  # their term counts and lengths count this much
    length_ratio: float = 0.0  # >0: a neighbour's weight times min(1, ratio * ref / its length)
    length_ref: str = "own"  # ref: the memory's own length, or "mean" (the batch's mean)
    max_df: float = 1.0  # context carries only terms in at most this share of the batch
    coverage_power: float = 0.0  # BM25 part times (IDF share of query terms matched) ** power
    steepness: float = CONFIG.bm25_steepness
    midpoint_base: float = CONFIG.bm25_midpoint_base
    midpoint_per_term: float = CONFIG.bm25_midpoint_per_term
    entity_scale: float = 1.0  # entity boost and hop times this (0: dense+bm25)
    keyword: bool = True


def expanded_bm25(conv: Conversation, q: Question, v: Variant) -> tuple[np.ndarray, np.ndarray]:
    """Per memory and query term, BM25 (``rank.bm25``'s formula) of the expanded documents."""
    n = len(conv.counts)
    tf = np.array([[c.get(t, 0) for t in q.terms] for c in conv.counts], float).reshape(n, -1)
    lengths = conv.lengths.astype(float)
    if v.window and v.weight:
        near_tf, near_len = np.zeros_like(tf), np.zeros(n)
        common = (tf > 0).mean(0) > v.max_df  # query terms left out of every context
        for off in range(1, v.window + 1):
            for me, other in ((slice(off, None), slice(None, -off)),
                              (slice(None, -off), slice(off, None))):  # fmt: skip
                w = _neighbour_weight(lengths[me], lengths[other], float(lengths.mean()), v)
                near_tf[me] += w[:, None] * np.where(common, 0.0, tf[other])
                near_len[me] += w * conv.kept_lengths(v.max_df)[other]
        tf, lengths = tf + near_tf, lengths + near_len
    df = (tf > 0).sum(0)
    idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5))
    norm = K1 * (1 - B + B * lengths / lengths.mean())
    return idf * tf * (K1 + 1) / (tf + norm[:, None]), idf


def _neighbour_weight(own: np.ndarray, other: np.ndarray, mean: float, v: Variant) -> np.ndarray:
    """Each neighbour's weight: ``weight``, times min(1, ratio * reference / its length) when
    ``length_ratio`` is set (reference: the memory's own length, or the batch mean)."""
    if not v.length_ratio:
        return np.full(len(own), v.weight)
    ref = own if v.length_ref == "own" else np.full(len(own), mean)
    return v.weight * np.minimum(1.0, v.length_ratio * ref / np.maximum(other, 1.0))


def score(conv: Conversation, q: Question, v: Variant) -> np.ndarray:
    cosine = np.maximum(q.dense, 0.0)
    keyword = np.zeros_like(cosine)
    if v.keyword:
        raw, coverage = q.bm25, np.ones_like(cosine)
        if v.window or v.coverage_power:
            per_term, idf = expanded_bm25(conv, q, v)
            raw = per_term.sum(1)
            coverage = ((per_term > 0) * idf).sum(1) / max(float(idf.sum()), 1e-12)
        keyword = _squash(raw, q.n_terms, v) * coverage**v.coverage_power
    hop = np.where(q.hop, CONFIG.hop_weight * cosine, 0.0)
    total = CONFIG.dense_weight * cosine + CONFIG.bm25_weight * keyword
    return total + v.entity_scale * (q.boost + hop)


def _squash(raw: np.ndarray, n_terms: int, v: Variant) -> np.ndarray:
    n = max(1, n_terms)
    midpoint = v.midpoint_base + v.midpoint_per_term * min(n, CONFIG.bm25_midpoint_cap)
    slope = v.steepness / math.sqrt(n)
    return np.where(raw > 0, 1.0 / (1.0 + np.exp(-slope * (raw - midpoint))), 0.0)


Scorer = Callable[[Conversation, Question], np.ndarray]


def recalls(convs: list[Conversation], scorer: Scorer) -> dict[str, Any]:
    rows = []
    for conv in convs:
        for q in conv.questions:
            order = np.argsort(-scorer(conv, q), kind="stable")
            hit = q.evidence[order]
            total = max(int(q.evidence.sum()), 1)
            rows.append(
                (conv.sample_id, q.category, hit[:10].sum() / total, hit[:25].sum() / total)
            )

    def mean(selected: list[tuple]) -> float:
        return round(float(np.mean(selected)), 3) if selected else float("nan")

    main = [r for r in rows if r[1] in (1, 2, 3, 4)]
    folds = {s: mean([r[2] for r in main if r[0] == s]) for s in dict.fromkeys(r[0] for r in rows)}
    return {
        "1-4@10": mean([r[2] for r in main]),
        "1-4@25": mean([r[3] for r in main]),
        "multi-hop@10": mean([r[2] for r in rows if r[1] == 1]),
        "folds@10": folds,
        "worst_fold@10": min(folds.values()),
    }


#: The defaults' keyword context (``RetrievalConfig.keyword_context_*``).
NEIGHBOURS = Variant(
    window=CONFIG.keyword_context_window,
    weight=CONFIG.keyword_context_weight,
    length_ratio=CONFIG.keyword_context_length_ratio,
)
VARIANTS: dict[str, Variant] = {
    "full (own words)": Variant(),
    "dense+bm25 (own words)": Variant(entity_scale=0.0),
    "full (default: neighbour words)": NEIGHBOURS,
    "dense+bm25 (default: neighbour words)": replace(NEIGHBOURS, entity_scale=0.0),
    "full without BM25 (replay)": Variant(keyword=False),
    "coverage^1": Variant(coverage_power=1.0),
    "coverage^2": Variant(coverage_power=2.0),
    "squash steepness 0.7": Variant(steepness=0.7),
    "squash midpoint base 2": Variant(midpoint_base=2.0),
    "entities x0.5": Variant(entity_scale=0.5),
    "neighbours w1 x0.3": Variant(window=1, weight=0.3),
    "neighbours w2 x0.3": Variant(window=2, weight=0.3),
    "neighbours w2 x0.5": Variant(window=2, weight=0.5),
    "neighbours w2 x0.5, dense+bm25": Variant(window=2, weight=0.5, entity_scale=0.0),
    "neighbours w2 x0.5, steepness 0.7": Variant(window=2, weight=0.5, steepness=0.7),
    "neighbours w2 x0.5, steepness 0.7, entities x0.5": Variant(
        window=2, weight=0.5, steepness=0.7, entity_scale=0.5
    ),
    "neighbours w2 x0.5, coverage^1": Variant(window=2, weight=0.5, coverage_power=1.0),
    "neighbours w2 x0.5, length ratio 1": Variant(window=2, weight=0.5, length_ratio=1.0),
    "neighbours w2 x0.5, length ratio 2": Variant(window=2, weight=0.5, length_ratio=2.0),
    "neighbours w2 x0.5, length ratio 4, df <= 10%": Variant(
        window=2, weight=0.5, length_ratio=4.0, max_df=0.1
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="a LoCoMo-format JSON file")
    parser.add_argument("--signals", type=Path, required=True, help="cache of the signals")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if not args.signals.is_file():
        dump_signals(args.data, args.signals)
    convs = load_signals(args.signals)
    results = {"dense": recalls(convs, lambda _c, q: np.maximum(q.dense, 0.0))}
    results |= {
        name: recalls(convs, lambda c, q, v=v: score(c, q, v)) for name, v in VARIANTS.items()
    }
    for name, r in results.items():
        folds = " ".join(f"{x:.3f}" for x in r["folds@10"].values())
        print(
            f"{name:52s} {r['1-4@10']:.3f} / {r['1-4@25']:.3f}  multi-hop {r['multi-hop@10']:.3f}"
            f"  worst {r['worst_fold@10']:.3f}  folds {folds}"
        )
    args.out.write_text(json.dumps({"data": str(args.data), "variants": results}, indent=1))


if __name__ == "__main__":
    main()
