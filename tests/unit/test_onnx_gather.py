"""The embedding tables stay int8 in the optimised graph (rows gathered, then scaled): the
cached graph halves and the vectors are bitwise those of the graph that folds the tables."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

from helpers import EMBEDDING_TEXTS  # noqa: E402

from linkmem.embed import onnx_cache, onnx_fuse, onnx_gather, onnx_graph  # noqa: E402
from linkmem.embed.onnx import OnnxMiniLMEmbedder, _session_options, default_model_path  # noqa: E402

TEXTS = [*EMBEDDING_TEXTS, "what did Maria buy in Lisbon", "Ken fixed the road bike"]
_INT8, _FLOAT = 3, 1


def graph(model: bytes):
    return onnx_graph._messages()["Model"].FromString(model).graph


@pytest.fixture(scope="module")
def rewritten() -> bytes:
    """The graph the embedder rewrites before the tables: int8 products where this machine
    has the kernels, fused attention."""
    model = default_model_path().read_bytes()
    if onnx_graph.enabled():
        model = onnx_graph.int8_matmuls(model) or model
    return onnx_fuse.fused(model) or model


def vectors(model: bytes) -> np.ndarray:
    import onnxruntime as ort

    embedder = OnnxMiniLMEmbedder(model_cache=False)
    session = ort.InferenceSession(model, _session_options(), providers=["CPUExecutionProvider"])
    embedder._build_session = lambda *args, **kwargs: session
    return embedder.embed_batch(TEXTS)


def test_the_word_and_position_tables_are_gathered_as_int8(rewritten: bytes) -> None:
    model = onnx_gather.int8_gathers(rewritten)
    assert model is not None
    before, after = graph(rewritten), graph(model)
    tables = {t.name: t for t in after.initializer if t.data_type == _INT8 and len(t.dims) == 2}
    gathered = [node for node in after.node if node.op_type == "Gather"]
    int8_rows = [node for node in gathered if node.input[0] in tables]
    assert {tables[node.input[0]].dims[0] for node in int8_rows} == {30522, 512}
    ops = Counter(node.op_type for node in after.node)
    old = Counter(node.op_type for node in before.node)
    # Each table: one more Gather (its scales), and the Cast and Mul after the rows, not before.
    assert ops["Gather"] == old["Gather"] + 2 and ops["Cast"] == old["Cast"]
    assert onnx_gather.int8_gathers(model) is None  # nothing left to rewrite
    assert onnx_gather.int8_gathers(b"not a model") is None


def test_vectors_are_bitwise_the_folded_tables(rewritten: bytes) -> None:
    model = onnx_gather.int8_gathers(rewritten)
    assert model is not None
    assert np.array_equal(vectors(model), vectors(rewritten))


def test_the_cached_graph_keeps_the_tables_int8(tmp_path: Path) -> None:
    first = OnnxMiniLMEmbedder(model_cache_dir=tmp_path)
    expected = first.embed_batch(TEXTS)
    (cached,) = tmp_path.glob(f"{onnx_cache.PREFIX}*{onnx_cache.SUFFIX}")
    tables = {t.name: t for t in graph(cached.read_bytes()).initializer}
    words = [t for t in tables.values() if list(t.dims) == [30522, 384]]
    assert [t.data_type for t in words] == [_INT8]
    assert cached.stat().st_size < 40e6  # 71 MB with the word table as float32
    again = OnnxMiniLMEmbedder(model_cache_dir=tmp_path)  # reads the cached graph
    assert np.array_equal(again.embed_batch(TEXTS), expected)
    assert np.array_equal(OnnxMiniLMEmbedder(model_cache=False).embed_batch(TEXTS), expected)
