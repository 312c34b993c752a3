"""The ONNX embedder's threads: one per call, a large batch's calls side by side."""

from __future__ import annotations

import numpy as np
import pytest

from linkmem.embed import onnx
from linkmem.errors import ConfigError


def test_default_is_every_available_core() -> None:
    assert onnx.default_threads({}) == onnx.available_cores()
    assert onnx.default_threads({onnx.THREADS_ENV: " "}) == onnx.available_cores()


def test_environment_sets_the_thread_count(monkeypatch: pytest.MonkeyPatch) -> None:
    assert onnx.default_threads({onnx.THREADS_ENV: "3"}) == 3
    monkeypatch.setenv(onnx.THREADS_ENV, "1")
    assert onnx.OnnxMiniLMEmbedder().threads == 1
    assert onnx.OnnxMiniLMEmbedder(threads=2).threads == 2  # an explicit value wins


@pytest.mark.parametrize("value", ["0", "-1", "two", "1.5"])
def test_bad_environment_value_is_a_config_error(value: str) -> None:
    with pytest.raises(ConfigError, match=onnx.THREADS_ENV):
        onnx.default_threads({onnx.THREADS_ENV: value})


def test_bad_thread_argument_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="threads"):
        onnx.OnnxMiniLMEmbedder(threads=-1)


def test_every_call_runs_on_one_thread() -> None:
    pytest.importorskip("onnxruntime")
    embedder = onnx.OnnxMiniLMEmbedder(threads=2).load()
    options = embedder._session.get_session_options()
    assert (options.intra_op_num_threads, options.inter_op_num_threads) == (1, 1)
    assert embedder.embed_batch(["one thread is enough"]).shape == (1, onnx.DIM)


def test_small_batches_stay_one_call() -> None:
    lengths = [12, 5, 4, 6]
    chunks = onnx.plan_chunks(lengths)
    assert onnx.spread(chunks, lengths, threads=2) == chunks == [[2, 1, 3, 0]]


def test_large_batches_are_cut_for_every_thread() -> None:
    lengths = [40] * 10  # one chunk of 400 padded tokens
    chunks = onnx.spread(onnx.plan_chunks(lengths), lengths, threads=3)
    assert len(chunks) == 3
    assert sorted(i for rows in chunks for i in rows) == list(range(10))
    assert onnx.spread([[0]], [400], threads=2) == [[0]]  # one text: nothing to cut
    assert onnx.spread(onnx.plan_chunks(lengths), lengths, threads=1) == [list(range(10))]


def test_concurrent_calls_give_the_same_vectors() -> None:
    pytest.importorskip("onnxruntime")
    texts = [f"text number {i} about {'the garden shed ' * (i % 7)}" for i in range(150)]
    texts.append("a long answer that needs several windows. " * 120)
    one = onnx.OnnxMiniLMEmbedder(threads=1).embed_batch(texts)
    three = onnx.OnnxMiniLMEmbedder(threads=3).embed_batch(texts)
    np.testing.assert_allclose(three, one, atol=1e-5)


def test_a_failing_call_fails_the_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("onnxruntime")
    embedder = onnx.OnnxMiniLMEmbedder(threads=2).load()
    calls = []

    def boom(encodings):
        calls.append(len(encodings))
        raise RuntimeError("model call failed")

    monkeypatch.setattr(embedder, "_embed_encoded", boom)
    with pytest.raises(RuntimeError, match="model call failed"):
        embedder.embed_batch([f"text {i} " * 20 for i in range(200)])
    assert calls  # and the side threads stopped: nothing hangs
