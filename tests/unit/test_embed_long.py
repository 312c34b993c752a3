"""Texts longer than the embedder's window: pooled chunk vectors (pure), windows of the
tokenizer, and the default embedder end to end (a fact past the first window is seen)."""

from __future__ import annotations

import numpy as np
import pytest

from linkmem.embed.base import pool_chunks
from linkmem.embed.onnx import (
    CHUNK_STRIDE,
    MAX_TOKENS,
    OnnxMiniLMEmbedder,
    build_tokenizer,
    windows,
)
from linkmem.errors import ConfigError

ROWS = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8], [-1.0, 0.0]], dtype=np.float32)


def test_pool_chunks_by_hand() -> None:
    owners = [0, 0, 1, 2]
    mean = pool_chunks(ROWS, owners, 3, "mean")
    np.testing.assert_allclose(mean[0], [2**-0.5, 2**-0.5], atol=1e-6)
    np.testing.assert_allclose(mean[1:], ROWS[2:], atol=1e-6)
    np.testing.assert_allclose(pool_chunks(ROWS, owners, 3, "max")[0], [2**-0.5, 2**-0.5])
    np.testing.assert_allclose(pool_chunks(ROWS, owners, 3, "first"), ROWS[[0, 2, 3]])
    # max: element-wise over a text's windows, then unit length.
    got = pool_chunks(ROWS[[2, 3]], [0, 0], 1, "max")
    np.testing.assert_allclose(got[0], [0.6, 0.8], atol=1e-6)
    with pytest.raises(ValueError, match="pooling"):
        pool_chunks(ROWS, owners, 3, "sum")


def test_windows_cover_a_long_text_with_overlap() -> None:
    tokenizer = build_tokenizer()
    long = tokenizer.encode(" ".join(f"w{i}" for i in range(600)))
    short = tokenizer.encode("hello there")
    flat, owners = windows([short, long], "mean")
    assert owners[0] == 0 and set(owners[1:]) == {1} and len(flat) >= 3
    assert all(len(e.ids) <= MAX_TOKENS and e.ids[0] == 101 and e.ids[-1] == 102 for e in flat)
    first, second = flat[1].ids[1:-1], flat[2].ids[1:-1]
    assert first[-CHUNK_STRIDE:] == second[:CHUNK_STRIDE]
    assert windows([short, long], "first") == ([short, long], [0, 1])


def test_unknown_pooling_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="long_text_pooling"):
        OnnxMiniLMEmbedder(long_text_pooling="median")


@pytest.mark.slow
def test_a_fact_past_the_first_window_moves_the_vector() -> None:
    filler = "The meeting notes cover the roadmap, the hiring plan and the budget. " * 40
    fact = "My sister Ines moved to Porto last spring."
    query = "Which city does my sister live in now?"
    truncating = OnnxMiniLMEmbedder(long_text_pooling="first")
    pooled = OnnxMiniLMEmbedder()
    head, tail = truncating.embed_batch([filler + fact, query])
    assert np.allclose(head, truncating.embed_batch([filler])[0], atol=1e-5)  # fact unseen
    vectors = pooled.embed_batch([filler + fact, query, "short text"])
    assert float(vectors[0] @ vectors[1]) > float(head @ tail) + 0.02  # measured +0.027
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(vectors[2], pooled.embed_batch(["short text"])[0], atol=1e-5)
