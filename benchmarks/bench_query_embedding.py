"""A lone query's embedding, step by step, and how close the int8 kernels' vectors stay.

    python benchmarks/bench_query_embedding.py [--queries 300] [--rounds 3] [--turns 2760]
        [--variants float32,ffn,fused,all] [--out FILE]

Variants, each an ``OnnxMiniLMEmbedder`` of its own (memo off, no model cache), called in
turn on the same query, ``--rounds`` times over ``--queries`` LoCoMo dev questions
(``bench_core.make_queries`` if the data is not there):
- ``float32``: the model as shipped (``int8_matmuls=False``): onnxruntime folds the int8
  weights into float32 constants;
- ``ffn``: the feed-forward products on int8 kernels (``linkmem.embed.onnx_graph``);
- ``fused``: the default, ``ffn`` with each layer's attention and GELU as onnxruntime's fused
  kernels (``linkmem.embed.onnx_fuse``);
- ``all``: every linear product on int8 kernels (attention's projections too), not fused.
Each call is timed by step (tokenizer, the input arrays, ``session.run``, pooling), as wall
time and as the calling thread's CPU time (which a busy machine inflates less). Then the
LoCoMo dev turns (``--turns`` of them) and the questions are embedded by every variant:
the cosine of each vector to the float32 one, and the overlap of each question's ten nearest
turns with the float32 ones.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np
from bench_core import make_queries

from linkmem.embed import onnx, onnx_graph
from linkmem.embed.base import l2_normalise
from linkmem.embed.vector_cache import VectorCache

LOCOMO = (
    Path(__file__).resolve().parents[2] / "shared" / "benchmarks" / "locomo" / "locomo-dev.json"
)
STEPS = ("tokenize", "arrays", "run", "pool", "total")


def locomo(path: Path) -> tuple[list[str], list[str]]:
    """The dev questions and turns, or ([], []) if the data is not there."""
    if not path.is_file():
        return [], []
    data = json.loads(path.read_text(encoding="utf-8"))
    questions = [qa["question"] for sample in data for qa in sample["qa"]]
    turns = [
        turn["text"]
        for sample in data
        for key, session in sample["conversation"].items()
        if key.startswith("session_") and isinstance(session, list)
        for turn in session
    ]
    return questions, turns


def embedder(variant: str) -> onnx.OnnxMiniLMEmbedder:
    if variant == "all":
        onnx_graph.FEED_FORWARD_ONLY = False
    model = onnx.OnnxMiniLMEmbedder(
        int8_matmuls=variant != "float32", fused_attention=variant == "fused", model_cache=False
    ).load()
    onnx_graph.FEED_FORWARD_ONLY = True
    model.vector_cache = VectorCache(0)
    return model


def timed_call(model: onnx.OnnxMiniLMEmbedder, text: str) -> dict[str, tuple[float, float]]:
    """One query's embedding as ``_embed_texts`` does it, each step's (wall, CPU) seconds."""
    marks = [(time.perf_counter(), time.thread_time())]
    encoding = model.tokenizer.encode(text)
    marks.append((time.perf_counter(), time.thread_time()))
    ids = np.asarray([encoding.ids], dtype=np.int64)
    mask = np.ones_like(ids)
    feeds = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in model._input_names:
        feeds["token_type_ids"] = np.zeros_like(ids)
    marks.append((time.perf_counter(), time.thread_time()))
    (hidden,) = model._session.run([model._output_name], feeds)
    marks.append((time.perf_counter(), time.thread_time()))
    l2_normalise(onnx.mean_pool(hidden, mask))
    marks.append((time.perf_counter(), time.thread_time()))
    steps = {
        name: (marks[i + 1][0] - marks[i][0], marks[i + 1][1] - marks[i][1])
        for i, name in enumerate(STEPS[:-1])
    }
    steps["total"] = (marks[-1][0] - marks[0][0], marks[-1][1] - marks[0][1])
    return steps


def fidelity(models: dict[str, onnx.OnnxMiniLMEmbedder], questions: list[str], turns: list[str]):
    reference_q = models["float32"].embed_batch(questions)
    reference_t = models["float32"].embed_batch(turns)
    nearest = np.argsort(-(reference_q @ reference_t.T), axis=1)[:, :10]
    out = {}
    shipped = None
    for name, model in models.items():
        vq, vt = model.embed_batch(questions), model.embed_batch(turns)
        if name == "ffn":
            shipped = vq, vt
        cos_q, cos_t = (vq * reference_q).sum(1), (vt * reference_t).sum(1)
        mine = np.argsort(-(vq @ vt.T), axis=1)[:, :10]
        overlap = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(mine, nearest, strict=True)])
        out[name] = {
            "questions_cos_min": round(float(cos_q.min()), 5),
            "turns_cos_min": round(float(cos_t.min()), 5),
            "turns_cos_p1": round(float(np.percentile(cos_t, 1)), 5),
            "turns_cos_mean": round(float(cos_t.mean()), 6),
            "turns_below_0.999": int((cos_t < 0.999).sum()),
            "top10_overlap": round(float(overlap), 4),
        }
        if shipped is not None and name != "ffn":  # against the previous default, ffn
            both = np.concatenate([(vq * shipped[0]).sum(1), (vt * shipped[1]).sum(1)])
            out[name]["ffn_cos_min"] = round(float(both.min()), 6)
            out[name]["ffn_below_0.9999"] = int((both < 0.9999).sum())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--turns", type=int, default=2760, help="0: no fidelity check")
    parser.add_argument("--variants", default="float32,ffn,fused,all")
    parser.add_argument("--data", default=str(LOCOMO))
    parser.add_argument(
        "--out", default=str(Path(__file__).parent / "results" / "query_embedding.json")
    )
    args = parser.parse_args()
    variants = args.variants.split(",")
    if "float32" not in variants:
        variants.insert(0, "float32")
    questions, turns = locomo(Path(args.data))
    queries = (questions or make_queries(args.queries))[: args.queries]
    models = {name: embedder(name) for name in variants}
    for text in queries[:20]:  # warm up
        for model in models.values():
            timed_call(model, text)
    load_before = os.getloadavg()
    samples: dict[str, dict[str, list[tuple[float, float]]]] = {
        name: {step: [] for step in STEPS} for name in variants
    }
    for round_ in range(args.rounds):
        for index, text in enumerate(queries):
            order = variants if (index + round_) % 2 == 0 else variants[::-1]
            for name in order:
                for step, value in timed_call(models[name], text).items():
                    samples[name][step].append(value)
    result: dict = {"queries": len(queries), "rounds": args.rounds, "load": [load_before]}
    tokens = statistics.median(len(models["float32"].tokenizer.encode(q).ids) for q in queries)
    print(f"{len(queries)} queries x {args.rounds} rounds, median {tokens:g} word pieces")
    print(f"{'variant':<8} " + " ".join(f"{s + ' wall/cpu':>18}" for s in STEPS) + "  (ms, p50)")
    for name in variants:
        row = {}
        for step in STEPS:
            wall = statistics.median(v[0] for v in samples[name][step]) * 1e3
            cpu = statistics.median(v[1] for v in samples[name][step]) * 1e3
            row[step] = {"wall_ms": round(wall, 3), "cpu_ms": round(cpu, 3)}
        result[name] = row
        print(
            f"{name:<8} "
            + " ".join(f"{r['wall_ms']:>8.2f}/{r['cpu_ms']:<8.2f} " for r in row.values())
        )
    for name, base in [(name, "float32") for name in variants[1:]] + [("fused", "ffn")]:
        if name not in variants or base not in variants:
            continue
        for kind, index in (("wall", 0), ("cpu", 1)):
            ratios = [
                new[index] / old[index]
                for new, old in zip(samples[name]["total"], samples[base]["total"], strict=True)
            ]
            ratio = round(statistics.median(ratios), 3)
            result[name][f"paired_{kind}_ratio_p50_vs_{base}"] = ratio
            print(f"{name}/{base} paired {kind} ratio p50: {ratio:.3f}")
    result["load"].append(os.getloadavg())
    if args.turns and turns:
        result["fidelity"] = fidelity(models, questions, turns[: args.turns])
        for name, row in result["fidelity"].items():
            print(name, row)
    print(
        "load before / after:",
        [round(x, 2) for x in result["load"][0]],
        [round(x, 2) for x in result["load"][1]],
    )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
