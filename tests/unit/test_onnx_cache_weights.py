"""The cached optimised model keeps its weights in a file of their own, which a later session
maps instead of reading: identical vectors, and other entries' weights are removed with them."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

from helpers import EMBEDDING_TEXTS  # noqa: E402

from linkmem.embed import onnx_cache  # noqa: E402
from linkmem.embed.onnx import OnnxMiniLMEmbedder  # noqa: E402

TEXTS = [*EMBEDDING_TEXTS, "what did Maria buy in Lisbon"]


def files(folder: Path, suffix: str) -> list[Path]:
    return sorted(folder.glob(f"{onnx_cache.PREFIX}*{suffix}"))


def test_the_weights_are_a_file_of_their_own_and_mapped(tmp_path: Path) -> None:
    uncached = OnnxMiniLMEmbedder(model_cache=False).embed_batch(TEXTS)
    writer = OnnxMiniLMEmbedder(model_cache_dir=tmp_path)
    assert np.array_equal(writer.embed_batch(TEXTS), uncached)
    (graph,) = files(tmp_path, onnx_cache.SUFFIX)
    (weights,) = files(tmp_path, onnx_cache.WEIGHTS_SUFFIX)
    assert weights.name.startswith(f"{graph.stem}-")
    assert graph.stat().st_size < 100_000 and weights.stat().st_size > 30_000_000
    reader = OnnxMiniLMEmbedder(model_cache_dir=tmp_path)
    assert np.array_equal(reader.embed_batch(TEXTS), uncached)
    assert "DISABLE_ALL" in str(reader._session.get_session_options().graph_optimization_level)
    maps = Path("/proc/self/maps")
    if maps.exists():  # Linux: the reader's session maps the weights file
        assert str(weights) in maps.read_text()
    assert not list(tmp_path.glob(".*"))  # no temporary file left


def test_other_entries_go_with_their_weights(tmp_path: Path) -> None:
    old_graph = tmp_path / f"{onnx_cache.PREFIX}0123456789{onnx_cache.SUFFIX}"
    old_weights = tmp_path / f"{onnx_cache.PREFIX}0123456789-x1{onnx_cache.WEIGHTS_SUFFIX}"
    unrelated = tmp_path / "notes.weights"
    for path in (old_graph, old_weights, unrelated):
        path.write_bytes(b"an older model or runtime")
    OnnxMiniLMEmbedder(model_cache_dir=tmp_path).load()
    assert not old_graph.exists() and not old_weights.exists() and unrelated.exists()
    assert len(files(tmp_path, onnx_cache.SUFFIX)) == len(files(tmp_path, ".weights")) == 1


def test_a_rewrite_keeps_a_racing_writers_weights_until_stale(tmp_path: Path) -> None:
    OnnxMiniLMEmbedder(model_cache_dir=tmp_path).load()
    (graph,) = files(tmp_path, onnx_cache.SUFFIX)
    racing = graph.with_name(f"{graph.stem}-racing{onnx_cache.WEIGHTS_SUFFIX}")
    crashed = graph.with_name(f"{graph.stem}-crashed{onnx_cache.WEIGHTS_SUFFIX}")
    for path in (racing, crashed):
        path.write_bytes(b"weights of another writer of this entry")
    os.utime(crashed, (0, 0))
    graph.write_bytes(b"half a file")  # unusable: the entry is written again
    expected = OnnxMiniLMEmbedder(model_cache=False).embed_batch(TEXTS)
    assert np.array_equal(OnnxMiniLMEmbedder(model_cache_dir=tmp_path).embed_batch(TEXTS), expected)
    assert racing.exists() and not crashed.exists()
    again = OnnxMiniLMEmbedder(model_cache_dir=tmp_path)  # reads the new entry
    assert np.array_equal(again.embed_batch(TEXTS), expected)


def test_each_writer_names_its_own_weights_file(tmp_path: Path) -> None:
    target = tmp_path / f"{onnx_cache.PREFIX}key{onnx_cache.SUFFIX}"
    names = {
        onnx_cache.weights_file(target, tmp_path / f".{onnx_cache.PREFIX}{writer}.tmp").name
        for writer in ("abc", "xyz")
    }
    prefix, suffix = onnx_cache.PREFIX, onnx_cache.WEIGHTS_SUFFIX
    assert names == {f"{prefix}key-abc{suffix}", f"{prefix}key-xyz{suffix}"}
