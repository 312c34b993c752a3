"""The floor under a search's dense product: the query's cosine with every memory of a scope.

    python benchmarks/bench_dense_product.py [--sizes 1000,10000] [--dim 384] [--out FILE]

A search multiplies the query's vector with the scope's whole float32 matrix once the vector
arrives (``store.sqlite.search_reads``; two halves on two threads from ``SPLIT_ROWS``). The
query's embedding runs just before and, with its model's weights, pushes the matrix out of
the CPU's caches, so in a search the product reads the matrix from main memory. Per size,
median over ``--rounds`` products, in ms: ``hot`` (the matrix cached, products back to back),
``cold`` (160 MB read between products, as a model's weights do), the same split in two halves
on two threads (``split_cold``), and the product on float16 rows (half the bytes; numpy has no
float16 kernel). Numbers go to ``benchmarks/results/dense_product.json`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

FLUSH_FLOATS = 40_000_000  # 160 MB: more than any last-level cache of the machines used


def timed(work: Callable[[], object], rounds: int, flush: np.ndarray | None) -> float:
    work()
    times = []
    for _ in range(rounds):
        if flush is not None:
            flush.sum()
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return round(statistics.median(times) * 1000, 3)


def measure(size: int, dim: int, rounds: int, flush: np.ndarray) -> dict[str, float]:
    rng = np.random.default_rng(size)
    matrix = rng.standard_normal((size, dim)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    query = matrix[0].copy()
    half = (size // 2) & ~63
    side = ThreadPoolExecutor(1)

    def product(rows: np.ndarray) -> np.ndarray:
        return (np.asarray([query], dtype=np.float32) @ rows.T)[0]

    def split() -> np.ndarray:
        tail = side.submit(product, matrix[half:])
        return np.concatenate([product(matrix[:half]), tail.result()])

    halves = matrix.astype(np.float16)
    out = {
        "matrix_mb": round(matrix.nbytes / 2**20, 1),
        "hot_ms": timed(lambda: product(matrix), rounds, None),
        "cold_ms": timed(lambda: product(matrix), rounds, flush),
        "split_cold_ms": timed(split, rounds, flush),
        "float16_cold_ms": timed(lambda: halves @ query.astype(np.float16), 5, flush),
    }
    side.shutdown()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--rounds", type=int, default=30)
    default_out = Path(__file__).parent / "results" / "dense_product.json"
    parser.add_argument("--out", default=str(default_out))
    args = parser.parse_args()
    flush = np.random.default_rng(0).random(FLUSH_FLOATS, dtype=np.float32)
    results = {
        size: measure(int(size), args.dim, args.rounds, flush) for size in args.sizes.split(",")
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
