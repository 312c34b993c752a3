"""Replay the name gate (``rank.fusion.name_gate``) offline on ``entity_replay.py``'s dumps.

    python benchmarks/name_gate_replay.py --data ../shared/benchmarks/locomo/locomo-dev.json \
        --signals /tmp/dev-entity-signals.pkl

The signals are ``benchmarks/entity_replay.py``'s (the same ``--signals`` file: dumped by it
when missing). Every memory is a candidate; each question's ranking is recomputed as a search
does (dense + squashed BM25, the best entity boost, the hop, then the time signal), with each
name's boost scaled by ``name_gate`` of its margin: the best text score among the memories
linked to the name minus the best among the rest. Prints recall@10 of categories 1-4 (and
@25), multi-hop and adversarial, with the margin per fold over dense+bm25+time (1-4) and over
dense+bm25 (multi-hop, adversarial); ``--diff`` lists the questions a gate changes.
``--inherit`` sets the back-reference window (``entity_replay``'s inheritance; default the
config's). On the synthetic set the replay of back references is not exact (live, at
4a25161 with window 2: full 0.863 without the gate; replayed 0.833).
"""

from __future__ import annotations

import argparse
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
from entity_replay import (  # the script's own folder is on sys.path
    Conversation,
    Question,
    Variant,
    _hop,
    _inherited,
    _order,
    dump_signals,
    load_signals,
    summarise,
    time_part,
)

from linkmem.config import RetrievalConfig
from linkmem.rank.bm25 import squasher
from linkmem.rank.fusion import link_weight, name_gate

NO_GATE = replace(RetrievalConfig(), name_gate_margin=-math.inf)
WINDOW = [RetrievalConfig().entity_inherit_window]  # back references (``--inherit``)
GATES: dict[str, RetrievalConfig] = {"no gate": NO_GATE}
for _centre, _width in [(-0.2, 0.05), (-0.2, 0.1), (-0.15, 0.2), (-0.1, 0.2), (-0.12, 0.2),
                        (-0.2, 0.2), (-0.15, 0.0), (-0.15, 0.1), (-0.15, 0.3)]:  # fmt: skip
    GATES[f"gate {_centre} width {_width}"] = replace(
        RetrievalConfig(), name_gate_margin=_centre, name_gate_width=_width
    )


def text_scores(q: Question, config: RetrievalConfig) -> np.ndarray:
    squash = squasher(
        q.n_terms, config.bm25_midpoint_base, config.bm25_midpoint_per_term,
        config.bm25_midpoint_cap, config.bm25_steepness,
    )  # fmt: skip
    keyword = np.array([squash(x) for x in q.bm25])
    return config.dense_weight * np.maximum(q.dense, 0.0) + config.bm25_weight * keyword


def boosts(conv: Conversation, q: Question, text: np.ndarray, config: RetrievalConfig | None):
    """Each memory's best entity boost; names gated by ``config`` (None: no entities)."""
    best = np.zeros(len(conv.texts))
    if config is None:
        return best
    for eid, sim in q.similar.items():
        name, kind, n_linked = conv.entities[eid]
        linked = conv.links.get(eid)
        if linked is None:
            continue
        if WINDOW[0] and kind in ("PROPER", "QUOTED"):
            linked = linked | _inherited(conv, eid, Variant(inherit_window=WINDOW[0]))
        if kind == "PROPER" and sim >= config.name_match_similarity:
            margin = float(text[linked].max(initial=0) - text[~linked].max(initial=0))
            value = sim * config.name_boost_weight * name_gate(margin, config)
        else:
            decay = link_weight(n_linked, config.entity_link_decay)
            value = sim * config.entity_boost_weight * decay
        best = np.maximum(best, np.where(linked, value, 0.0))
    return best


def ranking(conv: Conversation, q: Question, config: RetrievalConfig | None, time: bool = True):
    base = RetrievalConfig()
    text = text_scores(q, base)
    total = text + boosts(conv, q, text, config)
    if config is not None:
        total = total + _hop(conv, q, Variant(), total, np.maximum(q.dense, 0.0))
    fused = np.minimum(1.0, total / base.max_score)
    order = _order(conv, fused)
    part = time_part(conv, q.text) if time else np.zeros(0)
    if not part.any():
        return order
    part[order[base.time_depth :]] = 0.0
    return _order(conv, np.minimum(1.0, fused + part / base.max_score))


def recalls(convs: list[Conversation], config: RetrievalConfig | None, time: bool = True):
    rows = []
    for conv in convs:
        for q in conv.questions:
            hit = q.evidence[ranking(conv, q, config, time)]
            n = max(int(q.evidence.sum()), 1)
            rows.append((conv.sample_id, q.category, hit[:10].sum() / n, hit[:25].sum() / n))
    return rows


def _margins(result: dict, ref: dict, group: str) -> str:
    if group not in result:
        return ""
    folds = result[group]["folds@10"]
    return " ".join(f"{100 * (folds[f] - ref[group]['folds@10'][f]):+.1f}" for f in folds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="a LoCoMo-format JSON file")
    parser.add_argument("--signals", type=Path, required=True, help="entity_replay's dump")
    parser.add_argument("--diff", help="a gate's name: its changed questions vs no gate")
    parser.add_argument("--inherit", type=int, help="back-reference window (default: config's)")
    args = parser.parse_args()
    if args.inherit is not None:
        WINDOW[0] = args.inherit
    if not args.signals.is_file():
        dump_signals(args.data, args.signals)
    convs = load_signals(args.signals, args.data)
    if args.diff:
        for conv in convs:
            for q in conv.questions:
                n = max(int(q.evidence.sum()), 1)
                new, old = (
                    q.evidence[ranking(conv, q, c)][:10].sum() / n
                    for c in (GATES[args.diff], NO_GATE)
                )
                if new != old:
                    print(f"{conv.sample_id} c{q.category} {new - old:+.2f} {q.text}")
        return
    plain = summarise(recalls(convs, None, time=False))
    timed = summarise(recalls(convs, None))
    print("per fold: 1-4 over dense+bm25+time | multi-hop, adversarial over dense+bm25")
    for name, result in [("dense+bm25", plain), ("dense+bm25+time", timed)] + [
        (name, summarise(recalls(convs, config))) for name, config in GATES.items()
    ]:
        cells = [f"1-4 {result['1-4']['@10']:.3f} / {result['1-4']['@25']:.3f}"]
        cells += [f"{g} {result[g]['@10']:.3f}" for g in ("1", "5") if g in result]
        margins = [_margins(result, timed, "1-4"), _margins(result, plain, "1")]
        margins.append(_margins(result, plain, "5"))
        print(f"{name:28s} {'  '.join(cells)} | " + " | ".join(margins))


if __name__ == "__main__":
    main()
