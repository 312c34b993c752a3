"""The model's int8 matrix products on onnxruntime's int8 kernels: every linear layer is
rewritten, the weights are the file's, and the vectors stay close to the float32 graph's."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

from helpers import EMBEDDING_TEXTS  # noqa: E402

from linkmem.embed import onnx_graph  # noqa: E402
from linkmem.embed.onnx import INT8_ENV, OnnxMiniLMEmbedder, default_model_path  # noqa: E402

TEXTS = EMBEDDING_TEXTS

pytestmark = pytest.mark.skipif(not onnx_graph.enabled(), reason="no int8 kernels here")


def op_types(model: bytes) -> Counter[str]:
    return Counter(
        node.op_type for node in onnx_graph._messages()["Model"].FromString(model).graph.node
    )


@pytest.fixture(scope="module")
def shipped() -> bytes:
    return default_model_path().read_bytes()


@pytest.fixture(scope="module")
def rewritten(shipped: bytes) -> bytes:
    model = onnx_graph.int8_matmuls(shipped)
    assert model is not None
    return model


@pytest.mark.parametrize("feed_forward_only, products", [(True, 12), (False, 36)])
def test_linear_layers_become_int8_products(
    shipped: bytes, feed_forward_only: bool, products: int
) -> None:
    """Six layers of two feed-forward products, and four attention projections."""
    rewritten = onnx_graph.int8_matmuls(shipped, feed_forward_only=feed_forward_only)
    assert rewritten is not None
    before, after = op_types(shipped), op_types(rewritten)
    assert after["MatMulNBits"] == products
    assert after["MatMul"] == before["MatMul"] - products
    assert after["Cast"] == before["Cast"] - products
    assert after["Mul"] == before["Mul"] - products
    assert after["Gather"] == before["Gather"]  # embeddings are left as they are


def test_the_weights_are_the_files(shipped: bytes, rewritten: bytes) -> None:
    messages = onnx_graph._messages()
    old = {t.name: t for t in messages["Model"].FromString(shipped).graph.initializer}
    new = {t.name: t for t in messages["Model"].FromString(rewritten).graph.initializer}
    node = next(
        n for n in messages["Model"].FromString(rewritten).graph.node if n.op_type == "MatMulNBits"
    )
    rows, cols = (a.i for a in node.attribute[:2])
    packed = np.frombuffer(new[node.input[1]].raw_data, np.uint8).reshape(cols, rows)
    scales = np.frombuffer(new[node.input[2]].raw_data, np.float32).reshape(cols, -1)
    name = node.input[1].removesuffix("_linkmem_nbits")
    weights = np.frombuffer(old[name].raw_data, np.int8).reshape(rows, cols)
    assert np.array_equal(packed.astype(np.int16) - 128, weights.T)
    file_scales = np.frombuffer(old[name.removesuffix("_q") + "_scale"].raw_data, np.float32)
    assert np.array_equal(scales, np.repeat(file_scales[:, None], scales.shape[1], axis=1))


def test_a_model_without_int8_products_is_not_rewritten(rewritten: bytes) -> None:
    assert onnx_graph.int8_matmuls(rewritten) is None  # all of them rewritten already
    assert onnx_graph.int8_matmuls(b"not a model") is None


def test_vectors_stay_close_to_the_float32_graphs() -> None:
    float32 = OnnxMiniLMEmbedder(int8_matmuls=False, model_cache=False).embed_batch(TEXTS)
    int8 = OnnxMiniLMEmbedder(model_cache=False).embed_batch(TEXTS)
    assert not np.array_equal(int8, float32)
    assert np.all(np.sum(int8 * float32, axis=1) > 0.999)


def test_cached_int8_graph_gives_the_same_vectors(tmp_path: Path) -> None:
    first = OnnxMiniLMEmbedder(model_cache_dir=tmp_path).embed_batch(TEXTS)
    second = OnnxMiniLMEmbedder(model_cache_dir=tmp_path)
    assert np.array_equal(second.embed_batch(TEXTS), first)
    level = str(second._session.get_session_options().graph_optimization_level)
    assert "DISABLE_ALL" in level  # read from the cache


def test_the_environment_turns_int8_off(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(INT8_ENV, "0")
    off = OnnxMiniLMEmbedder(model_cache_dir=tmp_path).embed_batch(TEXTS)
    assert np.array_equal(
        off, OnnxMiniLMEmbedder(model_cache=False, int8_matmuls=False).embed_batch(TEXTS)
    )
    monkeypatch.setenv(INT8_ENV, "1")
    assert not np.array_equal(OnnxMiniLMEmbedder(model_cache_dir=tmp_path).embed_batch(TEXTS), off)
