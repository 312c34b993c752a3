"""The ONNX embedder's thread count: every core by default, or as configured."""

from __future__ import annotations

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


def test_session_runs_the_configured_threads() -> None:
    pytest.importorskip("onnxruntime")
    embedder = onnx.OnnxMiniLMEmbedder(threads=1).load()
    options = embedder._session.get_session_options()
    assert (options.intra_op_num_threads, options.inter_op_num_threads) == (1, 1)
    assert embedder.embed_batch(["one thread is enough"]).shape == (1, onnx.DIM)
