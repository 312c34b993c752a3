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
(``rank.time_boost``) is replayed from each turn's session date (the first ``time_depth`` of
the fused ranking re-scored, as a search does), so ``dense+bm25+time`` is full without
entities and the default row is close to ``linkmem eval locomo``'s full (its candidate pool
is smaller). ``--diff`` lists the questions whose recall@10 a variant changes.

The rows named "now" start from today's search (back references, window 2, and the name
gate); on them: a name's and a topic's boosts added on the same memory ("topics added"),
topics passed to a memory that says "them" ("pronoun topics"), the multi-word topics whose
last word the question says ("hyponyms": "yoga" -> "aerial yoga"), and the kind of thing the
question asks for matched to stored names and titles (``entities.asked``: "asked kind
<weight> at <minimum similarity>"; "named": only on memories a name boosts).
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
from linkmem.entities.asked import NOT_KINDS, asked_kind, topic_head_is
from linkmem.entities.query_entities import singulars
from linkmem.eval.locomo import load_locomo
from linkmem.extract.dialogue import about_listener
from linkmem.extract.pipeline import load_pipeline
from linkmem.extract.rules import split_speaker
from linkmem.rank.bm25 import squasher
from linkmem.rank.dates import (
    Span,
    day,
    is_when_question,
    memory_spans_batch,
    overlap_share,
    parse_date,
    query_span,
)

CONFIG = RetrievalConfig()
GROUPS = {"1-4": (1, 2, 3, 4), "1": (1,), "2": (2,), "3": (3,), "4": (4,), "5": (5,)}


def dump_signals(data: Path, out: Path) -> None:
    """Search every question with all memories as candidates; keep the signals."""
    captured: dict[str, Any] = {}
    real_fuse, real_similar = search_module._Scores.fuse, boost_module._similar_entities

    def spy_fuse(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003
        ranked = real_fuse(self, *args, **kwargs)
        ids, dense, bm25_raw = self._fused  # the candidates' raw cosines and BM25
        signals = (dict(zip(ids, dense.tolist())), dict(zip(ids, bm25_raw.tolist())))
        captured.setdefault("fuse", (*signals, len(self.plan.terms)))
        return ranked

    def spy_similar(*args):  # noqa: ANN002
        captured["similar"] = real_similar(*args)
        return captured["similar"]

    search_module._Scores.fuse, boost_module._similar_entities = spy_fuse, spy_similar
    conversations = []
    with tempfile.TemporaryDirectory() as tmp:
        memory = Memory(Path(tmp) / "replay.db", store="sqlite", entities=True)
        try:
            for conv in load_locomo(data):
                conversations.append(_dump_conversation(memory, conv, captured))
        finally:
            memory.close()
            search_module._Scores.fuse, boost_module._similar_entities = real_fuse, real_similar
    out.write_bytes(pickle.dumps({"convs": conversations}))


def _dump_conversation(memory: Memory, conv: Any, captured: dict[str, Any]) -> dict[str, Any]:
    texts = [t.memory_text for t in conv.turns]
    metadata = [t.metadata for t in conv.turns]
    added = memory.add_batch(texts, user_id=conv.sample_id, metadata=metadata)
    ids = [r["id"] for r in added["results"]]
    per_memory = memory.store.entities_of_memories(ids)
    entities = {e.id: (e.text, e.kind, e.link_count) for es in per_memory.values() for e in es}
    # Own links only (the replay adds inherited ones itself, ``Variant.inherit_window``).
    own = memory.store.memories_of_entities(list(entities), own_only=True)
    owned = {(mid, eid) for eid, mids in own.items() for mid in mids}
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
        "memory_entities": [
            [e.id for e in per_memory.get(mid, []) if (mid, e.id) in owned] for mid in ids
        ],
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
    anchors: list[Any] = field(default_factory=list)  # each memory's date (its session's)
    mentions: list[list[Span]] = field(default_factory=list)  # its resolved time expressions
    questions: list[Question] = field(default_factory=list)
    speakers: set[str] = field(default_factory=set)
    refers_back: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    pronoun: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    inherit_cache: dict[tuple[str, int, bool, bool], np.ndarray] = field(default_factory=dict)
    name_cache: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)


def _refers_back(conv: Conversation) -> tuple[np.ndarray, np.ndarray]:
    """Per memory: a third-person pronoun in it; that and no name but a speaker's."""
    pronoun, alone = [], []
    for body, eids in zip(conv.body, conv.memory_entities, strict=True):
        words = set(re.findall(r"[a-z]+", body))
        names = [
            e for e in eids
            if conv.entities[e][1] in ("PROPER", "QUOTED")
            and conv.entities[e][0].lower() not in conv.speakers
        ]  # fmt: skip
        pronoun.append(bool(words & _BACK_REFERENCES))
        alone.append(pronoun[-1] and not names)
    return np.array(pronoun), np.array(alone)


def load_signals(path: Path, data: Path) -> list[Conversation]:
    dates = {
        conv.sample_id: [parse_date(t.session_date) for t in conv.turns]
        for conv in load_locomo(data)
    }
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
        conv.speakers = {sp for sp in speakers if sp}
        conv.pronoun, conv.refers_back = _refers_back(conv)
        conv.anchors = dates[c["sample_id"]]
        conv.mentions = memory_spans_batch(c["texts"], conv.anchors)
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
    time: bool = True
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
    #: a memory that refers back ("he", "she", "it", "they") and names no one but its
    #: speaker inherits the names and titles of the ``inherit_window`` memories before it
    #: (``entities.inherit``), boosted at ``inherit_weight`` times the boost of a link
    inherit_window: int = 0
    inherit_weight: float = 1.0
    #: a memory with such a pronoun inherits even when it names someone itself
    inherit_named: bool = False
    #: every memory inherits (pronoun or not): the names of its neighbours
    inherit_all: bool = False
    #: a memory with a name boost that is also linked to one of the query's topics (not a
    #: name) adds this times its best topic boost (boosts of a name and a topic add up)
    topic_add: float = 0.0
    #: a memory with a third-person pronoun also takes the topics of the ``topic_window``
    #: memories before it ("I love turtles" / "walking them ..."); 0: off
    topic_window: int = 0
    #: a query word that is the last word of stored multi-word topics ("yoga" -> "aerial
    #: yoga") matches those topics at this similarity; 0: off
    hyponym_similarity: float = 0.0
    #: the kind of thing a question asks for ("What European countries has ...?" ->
    #: "European countries") embedded and matched to stored names and titles at
    #: ``category_min`` or more: their memories gain ``category_weight`` * similarity, added
    #: to the best boost (``category_named``: only on memories with a name boost)
    category_weight: float = 0.0
    category_min: float = 0.5
    category_named: bool = True
    category_kinds: tuple[str, ...] = ("PROPER", "QUOTED")
    #: also the topics whose head (last word, singular) is the kind's head ("tournaments"
    #: -> "Valorant tournament"), at this similarity or more (0: off), at most
    #: ``category_head_links`` links; ``category_head_flat``: boost category_weight flat
    category_head_min: float = 0.0
    category_head_links: int = CONFIG.entity_pool_max_links
    category_head_flat: bool = False
    #: heads only for a kind of one word ("tournaments", not "board games"), in the plural
    #: when ``category_head_plural`` ("Which book was ..." asks for one)
    category_head_single: bool = False
    category_head_plural: bool = False
    #: ... or after "kinds / types / sorts of" ("What types of yoga ...")
    category_head_typeof: bool = False


def _word_in(word: str, text: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text) is not None


def boosts(conv: Conversation, q: Question, v: Variant, base: np.ndarray) -> np.ndarray:
    """Each memory's best entity boost (``entities.boost.match_entities``, every memory a
    candidate), with the name boost split by speaker / mention."""
    n = len(conv.texts)
    best, names, topics = np.zeros(n), np.zeros(n), np.zeros(n)
    for eid, sim in _query_entities(conv, q, v).items():
        text, kind, n_linked = conv.entities[eid]
        linked = conv.links.get(eid)
        if linked is None:
            continue
        if kind == "PROPER" and sim >= CONFIG.name_match_similarity:
            values = _name_boost(conv, text, linked, v, base) * sim
            flat = v.mentioned_weight * sim
            names = np.maximum(names, values)
        else:
            decay = 1.0 / (1.0 + CONFIG.entity_link_decay * (max(1, n_linked) - 1) ** 2)
            if v.topic_window and kind == "TOPIC":
                linked = linked | _topic_inherited(conv, eid, v.topic_window)
            values = np.where(linked, sim * v.topic_weight * decay, 0.0)
            flat = sim * v.topic_weight * decay
            topics = np.maximum(topics, values)
        if v.inherit_window and kind in ("PROPER", "QUOTED"):
            inherited = _inherited(conv, eid, v) & ~linked
            values = np.maximum(values, np.where(inherited, flat * v.inherit_weight, 0.0))
        best = np.maximum(best, values)
    if v.topic_add:
        best = best + np.where(names > 0, v.topic_add * topics, 0.0)
    if v.category_weight:
        category = _category_boost(conv, q, v)
        best = best + (np.where(names > 0, category, 0.0) if v.category_named else category)
    return best


def _category_boost(conv: Conversation, q: Question, v: Variant) -> np.ndarray:
    n = len(conv.texts)
    phrase = asked_kind(q.text)
    out = np.zeros(n)
    if not phrase:
        return out
    sims = _category_sims(conv, phrase, v.category_kinds)
    for eid, sim in sims.items():
        if sim >= v.category_min and eid in conv.links:
            out = np.maximum(out, np.where(conv.links[eid], v.category_weight * sim, 0.0))
    word = phrase.lower().split()[-1]
    single = len(phrase.split()) == 1 or not v.category_head_single
    plural = bool(singulars(word)) or not v.category_head_plural
    if v.category_head_typeof and re.search(r"\b(?:kinds?|types?|sorts?) of\b", q.text, re.I):
        plural = True
    if v.category_head_min and single and plural and NOT_KINDS.isdisjoint({word, *singulars(word)}):
        for eid, sim in _category_sims(conv, phrase, ("TOPIC",)).items():
            text, _, n_linked = conv.entities[eid]
            if (
                sim >= v.category_head_min
                and n_linked <= v.category_head_links
                and eid in conv.links
                and topic_head_is(text, word)
            ):
                value = v.category_weight * (1.0 if v.category_head_flat else sim)
                out = np.maximum(out, np.where(conv.links[eid], value, 0.0))
    return out


_EMBEDDER: list[Any] = []


def _category_sims(conv: Conversation, phrase: str, kinds: tuple[str, ...]) -> dict[str, float]:
    key = ("category", phrase + "|" + ",".join(kinds))
    if key not in conv.name_cache:
        if not _EMBEDDER:
            from linkmem.components import build_embedder
            from linkmem.config import Settings

            _EMBEDDER.append(build_embedder(Settings()))
        embedder = _EMBEDDER[0]
        vkey = ("entity-vectors", ",".join(kinds))
        if vkey not in conv.name_cache:
            eids = [
                eid for eid, (text, kind, _) in conv.entities.items()
                if kind in kinds and text.lower() not in conv.speakers
            ]  # fmt: skip
            texts = [conv.entities[e][0] for e in eids]
            vectors = embedder.embed_batch(texts) if texts else np.zeros((0, 1))
            conv.name_cache[vkey] = (eids, vectors)
        eids, vectors = conv.name_cache[vkey]
        sims = vectors @ embedder.embed_batch([phrase])[0] if eids else []
        conv.name_cache[key] = dict(zip(eids, map(float, sims)))
    return conv.name_cache[key]


def _query_entities(conv: Conversation, q: Question, v: Variant) -> dict[str, float]:
    """The query's matched entities; with ``hyponym_similarity``, also the multi-word topics
    whose last word is one of the query's words."""
    if not v.hyponym_similarity:
        return q.similar
    out = dict(q.similar)
    words = set(re.findall(r"[a-z]+", q.text.lower()))
    words |= {w[:-1] for w in words if w.endswith("s")}
    for eid, (text, kind, _) in conv.entities.items():
        parts = text.lower().split()
        if kind == "TOPIC" and len(parts) > 1 and parts[-1] in words:
            out[eid] = max(out.get(eid, 0.0), v.hyponym_similarity)
    return out


def _topic_inherited(conv: Conversation, eid: str, window: int) -> np.ndarray:
    key = (eid, -window, False, False)
    if key not in conv.inherit_cache:
        linked = conv.links[eid]
        out = np.zeros(len(linked), bool)
        for i in np.flatnonzero(conv.pronoun):
            out[i] = bool(linked[max(0, i - window) : i].any())
        conv.inherit_cache[key] = out
    return conv.inherit_cache[key]


_BACK_REFERENCES = frozenset("he him his she her hers it its they them their theirs".split())


def _inherited(conv: Conversation, eid: str, v: Variant) -> np.ndarray:
    """The memories that would inherit entity ``eid`` (see ``Variant.inherit_window``): a
    memory inherits from the ``window`` memories before it, linked or inheriting
    themselves ("We took Leo to Lisbon" / "Did he behave?" / "He slept ...")."""
    key = (eid, v.inherit_window, v.inherit_named, v.inherit_all)
    cache = conv.inherit_cache
    if key not in cache:
        linked = conv.links[eid]
        out = np.zeros(len(linked), bool)
        if conv.entities[eid][0].lower() not in conv.speakers:
            refers = conv.pronoun if v.inherit_named else conv.refers_back
            if v.inherit_all:
                refers = np.ones(len(linked), bool)
            for i in np.flatnonzero(refers):
                before = slice(max(0, i - v.inherit_window), i)  # across sessions, as written
                out[i] = bool((linked[before] | out[before]).any())
        cache[key] = out
    return cache[key]


def _name_boost(
    conv: Conversation, text: str, linked: np.ndarray, v: Variant, base: np.ndarray
) -> np.ndarray:
    key = text.lower()
    spoken = _spoken(conv, key) & linked
    mentioned = _mentions(conv, key) & linked
    other = linked & ~spoken & ~mentioned  # linked by a merged alias or an odd parse
    weight = np.where(mentioned, v.mentioned_weight, 0.0)
    if v.addressed_weight:
        named = _mentions(conv, key) & ~linked
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


def _spoken(conv: Conversation, key: str) -> np.ndarray:
    if ("spoken", key) not in conv.name_cache:
        conv.name_cache["spoken", key] = np.array([s == key for s in conv.speaker_of])
    return conv.name_cache["spoken", key]


def _mentions(conv: Conversation, key: str) -> np.ndarray:
    if ("mentioned", key) not in conv.name_cache:
        conv.name_cache["mentioned", key] = np.array([_word_in(key, b) for b in conv.body])
    return conv.name_cache["mentioned", key]


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


def time_part(conv: Conversation, question: str) -> np.ndarray:
    """``rank.time_boost.time_boosts`` of every memory (before the division by max_score)."""
    part = np.zeros(len(conv.texts))
    span = query_span(question)
    if span is not None:
        for i, (anchor, mentions) in enumerate(zip(conv.anchors, conv.mentions, strict=True)):
            own = overlap_share(span, day(anchor)) if anchor is not None else 0.0
            said = max((overlap_share(span, s) for s in mentions), default=0.0)
            part[i] = CONFIG.time_range_weight * own + CONFIG.time_mention_weight * said
    if is_when_question(question):
        part += CONFIG.time_when_weight * np.array([bool(m) for m in conv.mentions], float)
    return part


def ranking(conv: Conversation, q: Question, variant: Variant) -> np.ndarray:
    """Memory rows best first, as ``search`` orders them (time after fusion, ties by id)."""
    fused = np.minimum(1.0, score(conv, q, variant) / CONFIG.max_score)
    order = _order(conv, fused)
    if not variant.time:
        return order
    part = time_part(conv, q.text)
    if not part.any():
        return order
    part[order[CONFIG.time_depth :]] = 0.0
    return _order(conv, np.minimum(1.0, fused + part / CONFIG.max_score))


def recalls(convs: list[Conversation], variant: Variant) -> list[tuple[str, int, float, float]]:
    rows = []
    for conv in convs:
        for q in conv.questions:
            hit = q.evidence[ranking(conv, q, variant)]
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
    "inherit 1": Variant(inherit_window=1),
    "inherit 2": Variant(inherit_window=2),
    "inherit 2 x0.5": Variant(inherit_window=2, inherit_weight=0.5),
    "inherit 4 x0.5": Variant(inherit_window=4, inherit_weight=0.5),
    "inherit 1 named": Variant(inherit_window=1, inherit_named=True),
    "inherit 2 named": Variant(inherit_window=2, inherit_named=True),
    "inherit 3 named": Variant(inherit_window=3, inherit_named=True),
    "neighbours 1 x0.5": Variant(inherit_window=1, inherit_all=True, inherit_weight=0.5),
    "neighbours 2 x0.5": Variant(inherit_window=2, inherit_all=True, inherit_weight=0.5),
}
#: Today's search: back references (window 2) and the name gate (-0.2, width 0.05).
NOW = {"inherit_window": 2, "margin_gate": (-0.225, -0.175)}
VARIANTS |= {
    "now": Variant(**NOW),
    "now, topics added x0.25": Variant(**NOW, topic_add=0.25),
    "now, topics added x0.5": Variant(**NOW, topic_add=0.5),
    "now, topics added x1": Variant(**NOW, topic_add=1.0),
    "now, pronoun topics 2": Variant(**NOW, topic_window=2),
    "now, pronoun topics 2, added x0.5": Variant(**NOW, topic_window=2, topic_add=0.5),
    "now, hyponyms 0.9": Variant(**NOW, hyponym_similarity=0.9),
    "now, hyponyms 0.9, added x0.5": Variant(**NOW, hyponym_similarity=0.9, topic_add=0.5),
    "now, hyponyms, pronoun topics, added x0.5": Variant(
        **NOW, hyponym_similarity=0.9, topic_window=2, topic_add=0.5
    ),
}
for _w in (0.1, 0.2, 0.3, 0.5):
    for _t in (0.5, 0.55, 0.6):
        VARIANTS[f"now, asked kind {_w} at {_t}, named"] = Variant(
            **NOW, category_weight=_w, category_min=_t
        )
        VARIANTS[f"now, asked kind {_w} at {_t}, any"] = Variant(
            **NOW, category_weight=_w, category_min=_t, category_named=False
        )
for _t in (0.3, 0.4, 0.5):
    for _flat in (False, True):
        VARIANTS[f"now, asked kind 0.2 at 0.5; heads at {_t}{' flat' if _flat else ''}"] = Variant(
            **NOW, category_weight=0.2, category_min=0.5, category_named=False,
            category_head_min=_t, category_head_flat=_flat,
        )  # fmt: skip
for _t in (0.3, 0.5):
    for _flat in (False, True):
        for _plural in (False, True):
            _name = f"now, asked kind 0.2 at 0.5; one-word heads at {_t}"
            VARIANTS[_name + (" flat" if _flat else "") + (" plural" if _plural else "")] = Variant(
                **NOW, category_weight=0.2, category_min=0.5, category_named=False,
                category_head_min=_t, category_head_flat=_flat, category_head_single=True,
                category_head_plural=_plural,
            )  # fmt: skip
for _flat in (False, True):
    _name = "now, asked kind 0.2 at 0.5; one-word heads at 0.5 plural or types of"
    VARIANTS[_name + (" flat" if _flat else "")] = Variant(
        **NOW, category_weight=0.2, category_min=0.5, category_named=False,
        category_head_min=0.5, category_head_flat=_flat, category_head_single=True,
        category_head_plural=True, category_head_typeof=True,
    )  # fmt: skip
for _t in (0.5, 0.6):
    VARIANTS[f"now, asked kind 0.2 at 0.5; heads at {_t} plural or types of"] = Variant(
        **NOW, category_weight=0.2, category_min=0.5, category_named=False,
        category_head_min=_t, category_head_plural=True, category_head_typeof=True,
    )  # fmt: skip
for _w in (0.1, 0.2, 0.3):
    VARIANTS[f"now, asked kind {_w} at 0.55, named, topics too"] = Variant(
        **NOW, category_weight=_w, category_min=0.55, category_kinds=("PROPER", "QUOTED", "TOPIC")
    )


def report(results: dict[str, dict[str, Any]]) -> None:
    """Per variant: recall@10 of each group with its worst fold's margin over dense+bm25, and
    of 1-4 over dense+bm25+time (what the entity signal adds)."""
    refs = {"": results["dense+bm25"], "+time ": results["dense+bm25+time"]}
    for name, r in results.items():
        cells = []
        for group, (label, ref) in [(g, ("", refs[""])) for g in ("1-4", "1", "2", "5")] + [
            ("1-4", ("+time ", refs["+time "]))
        ]:
            folds = r[group]["folds@10"]
            margin = min(folds[f] - ref[group]["folds@10"][f] for f in folds)
            cells.append(f"{group} {r[group]['@10']:.3f} ({label}min {100 * margin:+.1f})")
        print(f"{name:40s} " + "  ".join(cells) + f"  @25 {r['1-4']['@25']:.3f}")


def diff(convs: list[Conversation], variant: Variant, ref: Variant) -> None:
    """The questions whose recall@10 ``variant`` changes against ``ref``."""
    for conv in convs:
        for q in conv.questions:
            n = max(int(q.evidence.sum()), 1)
            new, old = (q.evidence[ranking(conv, q, v)][:10].sum() / n for v in (variant, ref))
            if new != old:
                print(f"{conv.sample_id} c{q.category} {new - old:+.2f} {q.text}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="a LoCoMo-format JSON file")
    parser.add_argument("--signals", type=Path, required=True, help="cache of the signals")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--diff", help="a variant's name: its changed questions vs +time")
    parser.add_argument("--variants", help="names of variants to run, separated by |: (all)")
    args = parser.parse_args()
    if not args.signals.is_file():
        dump_signals(args.data, args.signals)
    convs = load_signals(args.signals, args.data)
    if args.diff:
        diff(convs, VARIANTS[args.diff], Variant(entities=False))
        return
    results = {"dense+bm25": summarise(recalls(convs, Variant(entities=False, time=False)))}
    results["dense+bm25+time"] = summarise(recalls(convs, Variant(entities=False)))
    chosen = args.variants.split("|") if args.variants else list(VARIANTS)
    results |= {name: summarise(recalls(convs, VARIANTS[name])) for name in chosen}
    report(results)
    args.out.write_text(json.dumps({"data": str(args.data), "variants": results}, indent=1))


if __name__ == "__main__":
    main()
