"""Each layer's attention and GELU as onnxruntime's fused kernels: the graph shrinks to a
fifth, the weights are the file's, and the vectors are the unfused graph's."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

from helpers import EMBEDDING_TEXTS  # noqa: E402

from linkmem.embed import onnx_fuse, onnx_graph  # noqa: E402
from linkmem.embed.onnx import FUSE_ENV, OnnxMiniLMEmbedder, default_model_path  # noqa: E402

TEXTS = EMBEDDING_TEXTS


def graph(model: bytes):
    return onnx_graph._messages()["Model"].FromString(model).graph


@pytest.fixture(scope="module")
def shipped() -> bytes:
    return default_model_path().read_bytes()


@pytest.fixture(scope="module")
def fused(shipped: bytes) -> bytes:
    model = onnx_fuse.fused(shipped)
    assert model is not None
    return model


def test_attention_and_gelu_become_one_node_each(shipped: bytes, fused: bytes) -> None:
    before = Counter(node.op_type for node in graph(shipped).node)
    after = Counter(node.op_type for node in graph(fused).node)
    assert before["Softmax"] == before["Erf"] == 6
    assert after["Attention"] == after["Gelu"] == 6
    for gone in ("Softmax", "Erf", "Transpose", "IsNaN", "Where", "Range", "GatherND"):
        assert after[gone] == 0, gone
    assert sum(after.values()) < sum(before.values()) / 3


def test_the_projections_are_the_files_weights(shipped: bytes, fused: bytes) -> None:
    """Query, key and value side by side: the int8 values times their column scales."""
    old = {t.name: t for t in graph(shipped).initializer}
    new = {t.name: t for t in graph(fused).initializer}
    first = next(node for node in graph(fused).node if node.op_type == "Attention")
    qkv = np.frombuffer(new[first.input[1]].raw_data, np.float32).reshape(384, 1152)
    heads = next(a.i for a in first.attribute if a.name == "num_heads")
    assert heads == 12
    # The first layer's query, key and value weights are val_49, val_57, val_65 in the file.
    for index, name in enumerate(("val_49", "val_57", "val_65")):
        q = np.frombuffer(old[f"{name}_q"].raw_data, np.int8).reshape(384, 384)
        scale = np.frombuffer(old[f"{name}_scale"].raw_data, np.float32).reshape(1, 384)
        expected = q.astype(np.float32) * scale
        assert np.array_equal(qkv[:, index * 384 : (index + 1) * 384], expected)


def test_what_cannot_be_fused_is_left_alone(fused: bytes) -> None:
    assert onnx_fuse.fused(fused) is None  # no attention left to fuse
    assert onnx_fuse.fused(b"not a model") is None


def test_float32_vectors_are_the_unfused_graphs() -> None:
    plain = OnnxMiniLMEmbedder(int8_matmuls=False, fused_attention=False, model_cache=False)
    fast = OnnxMiniLMEmbedder(int8_matmuls=False, fused_attention=True, model_cache=False)
    cosines = np.sum(plain.embed_batch(TEXTS) * fast.embed_batch(TEXTS), axis=1)
    assert np.all(cosines > 0.99999)


def test_padding_is_masked_as_before() -> None:
    """A batch pads its short texts; each vector is the one the text gets alone."""
    model = OnnxMiniLMEmbedder(model_cache=False)
    alone = np.vstack([model._embed_texts([text]) for text in TEXTS])
    together = model._embed_texts(TEXTS)
    assert np.all(np.sum(alone * together, axis=1) > 0.9999)


@pytest.mark.skipif(not onnx_graph.enabled(), reason="no int8 kernels here")
def test_int8_vectors_stay_close_to_the_unfused_graphs() -> None:
    """The int8 products quantise their inputs: the attention's last-bit differences move
    a few values to the next step, so a three-piece text moves most (0.99984)."""
    plain = OnnxMiniLMEmbedder(fused_attention=False, model_cache=False).embed_batch(TEXTS)
    fast = OnnxMiniLMEmbedder(fused_attention=True, model_cache=False).embed_batch(TEXTS)
    assert np.all(np.sum(plain * fast, axis=1) > 0.9998)


def test_the_environment_turns_fusion_off(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(FUSE_ENV, "0")
    off = OnnxMiniLMEmbedder(model_cache_dir=tmp_path).embed_batch(TEXTS)
    plain = OnnxMiniLMEmbedder(fused_attention=False, model_cache=False).embed_batch(TEXTS)
    assert np.array_equal(off, plain)
    monkeypatch.delenv(FUSE_ENV)
    first = OnnxMiniLMEmbedder(model_cache_dir=tmp_path).embed_batch(TEXTS)
    assert not np.array_equal(first, off)
    again = OnnxMiniLMEmbedder(model_cache_dir=tmp_path)  # reads the fused graph's cache
    assert np.array_equal(again.embed_batch(TEXTS), first)
    level = str(again._session.get_session_options().graph_optimization_level)
    assert "DISABLE_ALL" in level
