"""Replay the entity signals (name boost, topic boost, hop) offline under variants.

    python benchmarks/entity_replay.py --data ../shared/benchmarks/locomo/locomo-dev.json \
        --signals /tmp/dev-entity-signals.pkl --out /tmp/dev-entity-replay.json

Builds the store as ``linkmem eval locomo`` does and searches every question with the full
system and ``top_k`` = the conversation's size (every memory a candidate), keeping per question
the cosine and raw BM25 of every memory and the query entities' similarity to every stored
entity (``entities.boost._similar_entities``); per conversation each memory's entities (text,
kind, link count) and its speaker label. The entity boost, the name boost and the hop are then
recomputed from those, as ``entities.boost`` / ``entities.hop`` / ``rank.fusion`` do (the
default variant reproduces the real ranking), under variants of how a named person boosts:
every memory linked to the name (today), only memories that name them in their text, memories
spoken by them at another weight, a boost capped by the memory's own text evidence.

Prints and writes, per variant, recall@10 per category group and per conversation (the
leave-one-out folds: constants fixed, a held-out fold's score is its conversation's), and the
margin over dense+bm25 on every fold. A dump from before the speaker rule of
``extract.dialogue.about_listener`` replays it with ``asking_weight=0``. The time signal
(``rank.time_boost``) is not replayed: with it on, the default row is close to, not equal to,
``linkmem eval locomo``.
"""

from __future__ import annotations

import argparse
import json
import pickle
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from fusion_replay import _array  # the script's own folder is on sys.path

import linkmem.entities.boost as boost_module
import linkmem.search as search_module
from linkmem import Memory
from linkmem.config import RetrievalConfig
from linkmem.eval.locomo import load_locomo
from linkmem.extract.dialogue import about_listener
from linkmem.extract.pipeline import load_pipeline
from linkmem.extract.rules import split_speaker
from linkmem.rank.bm25 import squasher

CONFIG = RetrievalConfig()
GROUPS = {"1-4": (1, 2, 3, 4), "1": (1,), "2": (2,), "3": (3,), "4": (4,), "5": (5,)}


def dump_signals(data: Path, out: Path) -> None:
    """Search every question with all memories as candidates; keep the signals."""
    captured: dict[str, Any] = {}
    real_fuse_all, real_similar = search_module.fuse_all, boost_module._similar_entities

    def spy_fuse(candidates, dense, bm25_raw, n_terms, boosts, config, hops=None):  # noqa: ANN001
        captured.setdefault("fuse", (dict(dense), dict(bm25_raw), n_terms))
        return real_fuse_all(candidates, dense, bm25_raw, n_terms, boosts, config, hops)

    def spy_similar(*args):  # noqa: ANN002
        captured["similar"] = real_similar(*args)
        return captured["similar"]

    search_module.fuse_all, boost_module._similar_entities = spy_fuse, spy_similar
    conversations = []
    with tempfile.TemporaryDirectory() as tmp:
        memory = Memory(Path(tmp) / "replay.db", store="sqlite", entities=True)
        try:
            for conv in load_locomo(data):
                conversations.append(_dump_conversation(memory, conv, captured))
        finally:
            memory.close()
            search_module.fuse_all, boost_module._similar_entities = real_fuse_all, real_similar
    out.write_bytes(pickle.dumps({"convs": conversations}))


def _dump_conversation(memory: Memory, conv: Any, captured: dict[str, Any]) -> dict[str, Any]:
    texts = [t.memory_text for t in conv.turns]
    metadata = [t.metadata for t in conv.turns]
    added = memory.add_batch(texts, user_id=conv.sample_id, metadata=metadata)
    ids = [r["id"] for r in added["results"]]
    per_memory = memory.store.entities_of_memories(ids)
    entities = {e.id: (e.text, e.kind, e.link_count) for es in per_memory.values() for e in es}
    questions = []
    for q in conv.questions:
        if not q.evidence:
            continue
        captured.clear()
        memory.search(q.question, user_id=conv.sample_id, top_k=len(texts))
        dense, bm25, n_terms = captured["fuse"]
        questions.append(
            {"question": q.question, "category": q.category, "evidence": list(q.evidence),
             "dense": dense, "bm25": bm25, "n_terms": n_terms,
             "similar": dict(captured.get("similar", {}))}
        )  # fmt: skip
    return {
        "sample_id": conv.sample_id, "ids": ids, "dia": [m["dia_id"] for m in metadata],
        "texts": texts, "entities": entities,
        "memory_entities": [[e.id for e in per_memory.get(mid, [])] for mid in ids],
        "questions": questions,
    }  # fmt: skip


@dataclass
class Question:
    text: str
    category: int
    evidence: np.ndarray  # bool per memory
    dense: np.ndarray
    bm25: np.ndarray
    n_terms: int
    similar: dict[str, float]


@dataclass
class Conversation:
    sample_id: str
    texts: list[str]
    id_order: np.ndarray  # rank of each memory's id (fusion breaks ties by id)
    entities: dict[str, tuple[str, str, int]]  # id -> (text, kind, link count)
    memory_entities: list[list[str]]
    links: dict[str, np.ndarray]  # entity id -> bool per memory
    speaker_of: list[str]  # speaker label key per memory ("" if none)
    body: list[str]  # lower-cased text after the speaker label
    about_listener: np.ndarray  # bool per memory: extract.dialogue.about_listener of its text
    questions: list[Question] = field(default_factory=list)


def load_signals(path: Path) -> list[Conversation]:
    out = []
    for c in pickle.loads(path.read_bytes())["convs"]:
        n = len(c["ids"])
        row = {mid: i for i, mid in enumerate(c["ids"])}
        links: dict[str, np.ndarray] = {}
        for i, eids in enumerate(c["memory_entities"]):
            for eid in eids:
                links.setdefault(eid, np.zeros(n, bool))[i] = True
        speakers, bodies = [], []
        for text in c["texts"]:
            label, start = split_speaker(text)
            speakers.append(label.text.lower() if label else "")
            bodies.append(text[start:])
        listener = np.array([about_listener(doc) for doc in load_pipeline().pipe(bodies)])
        conv = Conversation(
            c["sample_id"], c["texts"], np.argsort(np.argsort(np.array(c["ids"]))),
            c["entities"], c["memory_entities"], links, speakers,
            [b.lower() for b in bodies], listener,
        )  # fmt: skip
        for q in c["questions"]:
            conv.questions.append(
                Question(
                    q["question"],
                    q["category"],
                    np.isin(np.array(c["dia"]), q["evidence"]),
                    _array(row, q["dense"]),
                    _array(row, q["bm25"]),
                    q["n_terms"],
                    q["similar"],
                )  # fmt: skip
            )
        out.append(conv)
    return out


# ---------------------------------------------------------------- variants
@dataclass(frozen=True)
class Variant:
    """How the entity signals score. Defaults reproduce ``RetrievalConfig()``."""

    entities: bool = True
    topic_weight: float = CONFIG.entity_boost_weight
    #: weight of a query name on memories spoken by that person (speaker label only)
    spoken_weight: float = CONFIG.name_boost_weight
    #: weight of a query name on memories whose text names the person
    mentioned_weight: float = CONFIG.name_boost_weight
    #: name boost times min(1, base / cap_base) (base = dense + squashed BM25); 0 = no cap
    cap_base: float = 0.0
    #: every entity boost (names and topics) times min(1, base / cap_all); 0 = no cap
    cap_all: float = 0.0
    hop_weight: float = CONFIG.hop_weight
    hop_sources: int = CONFIG.hop_sources
    hop_max_links: int = CONFIG.hop_max_links
    #: weight on memories that name the person without a link (addressed: "Thanks, Caroline!")
    addressed_weight: float = 0.0
    #: query-level gate: the name boost times min(1, agree / gate), agree = the share of the
    #: ``gate_top`` best memories by text (dense + BM25) linked to the name; 0 = no gate
    gate: float = 0.0
    gate_top: int = 5
    #: margin gate: the name boost times clip((m - lo) / (hi - lo), 0, 1), m = the best text
    #: score (dense + squashed BM25) among the name's memories minus the best among the rest
    margin_gate: tuple[float, float] | None = None
    #: memories spoken by the person but about the listener (``extract.dialogue.
    #: about_listener``) are boosted this much instead of ``spoken_weight`` (None: as spoken;
    #: 0 is what the extractor does since it leaves their speaker label unlinked)
    asking_weight: float | None = None
    #: memories about the listener are boosted by the listener's name this much
    listener_weight: float = 0.0


def _word_in(word: str, text: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text) is not None


def boosts(conv: Conversation, q: Question, v: Variant, base: np.ndarray) -> np.ndarray:
    """Each memory's best entity boost (``entities.boost.entity_boosts``, every memory a
    candidate), with the name boost split by speaker / mention."""
    n = len(conv.texts)
    best = np.zeros(n)
    for eid, sim in q.similar.items():
        text, kind, n_linked = conv.entities[eid]
        linked = conv.links.get(eid)
        if linked is None:
            continue
        if kind == "PROPER" and sim >= CONFIG.name_match_similarity:
            values = _name_boost(conv, text, linked, v, base) * sim
        else:
            decay = 1.0 / (1.0 + CONFIG.entity_link_decay * (max(1, n_linked) - 1) ** 2)
            values = np.where(linked, sim * v.topic_weight * decay, 0.0)
        best = np.maximum(best, values)
    return best


def _name_boost(
    conv: Conversation, text: str, linked: np.ndarray, v: Variant, base: np.ndarray
) -> np.ndarray:
    key = text.lower()
    spoken = np.array([s == key for s in conv.speaker_of]) & linked
    mentioned = np.array([_word_in(key, b) for b in conv.body]) & linked
    other = linked & ~spoken & ~mentioned  # linked by a merged alias or an odd parse
    weight = np.where(mentioned, v.mentioned_weight, 0.0)
    if v.addressed_weight:
        named = np.array([_word_in(key, b) for b in conv.body]) & ~linked
        weight = np.maximum(weight, np.where(named, v.addressed_weight, 0.0))
    spoken_weight = np.full(len(spoken), v.spoken_weight)
    if v.asking_weight is not None:
        spoken_weight[conv.about_listener] = v.asking_weight
    weight = np.maximum(weight, np.where(spoken, spoken_weight, 0.0))
    if v.listener_weight:
        heard = np.array([_listener(conv, i) == key for i in range(len(spoken))])
        heard &= conv.about_listener
        weight = np.maximum(weight, np.where(heard, v.listener_weight, 0.0))
    weight = np.maximum(weight, np.where(other, v.mentioned_weight, 0.0))
    if v.cap_base:
        weight = weight * np.minimum(1.0, base / v.cap_base)
    if v.gate:
        top = _order(conv, base)[: v.gate_top]
        weight = weight * min(1.0, float(linked[top].mean()) / v.gate)
    if v.margin_gate is not None:
        lo, hi = v.margin_gate
        margin = float(base[spoken].max(initial=0) - base[~spoken].max(initial=0))
        open_ = min(1.0, max(0.0, (margin - lo) / (hi - lo))) if hi > lo else float(margin > lo)
        weight = weight * open_
    return weight


def _listener(conv: Conversation, i: int) -> str:
    """The speaker of the nearest turn before (else after) ``i`` by someone else."""
    me = conv.speaker_of[i]
    for j in (i - 1, i + 1):
        if 0 <= j < len(conv.speaker_of) and conv.speaker_of[j] not in ("", me):
            return conv.speaker_of[j]
    return ""


def score(conv: Conversation, q: Question, v: Variant) -> np.ndarray:
    cosine = np.maximum(q.dense, 0.0)
    squash = squasher(
        q.n_terms, CONFIG.bm25_midpoint_base, CONFIG.bm25_midpoint_per_term,
        CONFIG.bm25_midpoint_cap, CONFIG.bm25_steepness,
    )  # fmt: skip
    keyword = np.array([squash(x) for x in q.bm25])
    base = CONFIG.dense_weight * cosine + CONFIG.bm25_weight * keyword
    if not v.entities:
        return base
    boost = boosts(conv, q, v, base)
    if v.cap_all:
        boost = boost * np.minimum(1.0, base / v.cap_all)
    total = base + boost
    return total + _hop(conv, q, v, total, cosine)


def _hop(conv: Conversation, q: Question, v: Variant, total: np.ndarray, cosine: np.ndarray):
    """``entities.hop.hop_targets`` on the ranking of ``total``, then hop_weight * cosine."""
    if v.hop_weight <= 0:
        return 0.0
    clipped = np.minimum(1.0, total / CONFIG.max_score)
    sources = _order(conv, clipped)[: v.hop_sources]
    matched = set(q.similar)
    rare = {
        eid
        for s in sources
        for eid in conv.memory_entities[s]
        if conv.entities[eid][2] <= v.hop_max_links and eid not in matched
    }
    reached = np.zeros(len(cosine), bool)
    for eid in rare:
        reached |= conv.links.get(eid, reached)
    reached[sources] = False
    return np.where(reached, v.hop_weight * cosine, 0.0)


def _order(conv: Conversation, scores: np.ndarray) -> np.ndarray:
    return np.lexsort((conv.id_order, -scores))


def recalls(convs: list[Conversation], variant: Variant) -> list[tuple[str, int, float, float]]:
    rows = []
    for conv in convs:
        for q in conv.questions:
            total = score(conv, q, variant)
            order = _order(conv, np.minimum(1.0, total / CONFIG.max_score))
            hit = q.evidence[order]
            n = max(int(q.evidence.sum()), 1)
            rows.append((conv.sample_id, q.category, hit[:10].sum() / n, hit[:25].sum() / n))
    return rows


def summarise(rows: list[tuple[str, int, float, float]]) -> dict[str, Any]:
    folds = list(dict.fromkeys(r[0] for r in rows))
    out: dict[str, Any] = {}
    for group, cats in GROUPS.items():
        sel = [r for r in rows if r[1] in cats]
        if not sel:
            continue
        out[group] = {
            "@10": float(np.mean([r[2] for r in sel])),
            "@25": float(np.mean([r[3] for r in sel])),
            "folds@10": {f: _mean([r[2] for r in sel if r[0] == f]) for f in folds},
        }
    return out


def _mean(values: list[float]) -> float:
    return float(np.mean(values)) if values else float("nan")


NAMES_OFF = {"spoken_weight": 0.0, "mentioned_weight": 0.0}
VARIANTS: dict[str, Variant] = {
    "full (default)": Variant(),
    "no name boost": Variant(**NAMES_OFF),
    "mentioned only": Variant(spoken_weight=0.0),
    "spoken 0.05": Variant(spoken_weight=0.05),
    "addressed 0.1": Variant(addressed_weight=0.1),
    "gate top-5 agreement 0.8": Variant(gate=0.8),
    "margin gate 0": Variant(margin_gate=(0.0, 0.0)),
    "listener 0.05": Variant(listener_weight=0.05),
    "text cap 0.7": Variant(cap_all=0.7),
    "text cap 0.8": Variant(cap_all=0.8),
    "text cap 0.9": Variant(cap_all=0.9),
    "text cap on names only 0.8": Variant(cap_base=0.8),
    "text cap 0.8, no name boost": Variant(cap_all=0.8, **NAMES_OFF),
}


def report(results: dict[str, dict[str, Any]]) -> None:
    ref = results["dense+bm25"]
    for name, r in results.items():
        cells = []
        for group in ("1-4", "1", "2", "5"):
            margins = [
                r[group]["folds@10"][f] - ref[group]["folds@10"][f] for f in r[group]["folds@10"]
            ]
            cells.append(f"{group} {r[group]['@10']:.3f} (min {100 * min(margins):+.1f})")
        print(f"{name:48s} " + "  ".join(cells) + f"  @25 {r['1-4']['@25']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="a LoCoMo-format JSON file")
    parser.add_argument("--signals", type=Path, required=True, help="cache of the signals")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if not args.signals.is_file():
        dump_signals(args.data, args.signals)
    convs = load_signals(args.signals)
    results = {"dense+bm25": summarise(recalls(convs, Variant(entities=False)))}
    results |= {name: summarise(recalls(convs, v)) for name, v in VARIANTS.items()}
    report(results)
    args.out.write_text(json.dumps({"data": str(args.data), "variants": results}, indent=1))


if __name__ == "__main__":
    main()
