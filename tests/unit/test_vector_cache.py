"""The memo of short texts' vectors: same rows as computing them, bounded, thread-safe."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from linkmem.embed.fake import FakeEmbedder
from linkmem.embed.vector_cache import VectorCache


class Counting:
    def __init__(self) -> None:
        self.inner = FakeEmbedder()
        self.calls: list[list[str]] = []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.calls.append(texts)
        return self.inner.embed_batch(texts)


def test_rows_equal_the_computed_ones_and_repeats_are_not_recomputed() -> None:
    compute, cache = Counting(), VectorCache(size=10, max_chars=20)
    texts = ["Maria", "Lisbon", "Maria", "a text longer than twenty characters"]
    first = cache.embed(texts, compute, compute.inner.dim)
    np.testing.assert_array_equal(first, compute.inner.embed_batch(texts))
    assert compute.calls == [["Maria", "Lisbon", "a text longer than twenty characters"]]
    again = cache.embed(["Lisbon", "Maria", texts[3]], compute, compute.inner.dim)
    np.testing.assert_array_equal(again, first[[1, 0, 3]])
    assert compute.calls[-1] == [texts[3]]  # long texts are not kept
    assert len(cache) == 2


def test_least_recently_used_goes_first() -> None:
    compute, cache = Counting(), VectorCache(size=2)
    cache.embed(["a", "b"], compute, compute.inner.dim)
    cache.embed(["a"], compute, compute.inner.dim)  # "b" is now the oldest
    cache.embed(["c"], compute, compute.inner.dim)
    cache.embed(["a", "b"], compute, compute.inner.dim)
    assert compute.calls[-1] == ["b"]


def test_size_zero_keeps_nothing() -> None:
    compute, cache = Counting(), VectorCache(size=0)
    cache.embed(["a"], compute, compute.inner.dim)
    cache.embed(["a"], compute, compute.inner.dim)
    assert len(compute.calls) == 2 and len(cache) == 0


def test_threads_share_it_safely() -> None:
    compute, cache = Counting(), VectorCache(size=50)
    names = [f"name {i}" for i in range(100)]
    expected = compute.inner.embed_batch(names)
    dim = compute.inner.dim
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda i: cache.embed(names[i % 7 :: 7], compute, dim), range(140)))
    for i, rows in enumerate(results):
        np.testing.assert_array_equal(rows, expected[i % 7 :: 7])
    assert len(cache) == 50
