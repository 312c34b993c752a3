"""The cached optimised ONNX model: written once, read after, identical vectors, and every
failure falls back to building the session from the model file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

from linkmem.embed import onnx_cache  # noqa: E402
from linkmem.embed.onnx import OnnxMiniLMEmbedder  # noqa: E402

TEXTS = ["what did Maria buy in Lisbon", "ok", "The garden shed needs a new roof. " * 40]


def cached_files(folder: Path) -> list[Path]:
    return sorted(folder.glob(f"{onnx_cache.PREFIX}*{onnx_cache.SUFFIX}"))


def level(embedder: OnnxMiniLMEmbedder) -> str:
    return str(embedder._session.get_session_options().graph_optimization_level)


@pytest.fixture(scope="module")
def uncached() -> np.ndarray:
    return OnnxMiniLMEmbedder(model_cache=False).embed_batch(TEXTS)


def test_first_load_writes_the_cache_and_later_loads_read_it(
    tmp_path: Path, uncached: np.ndarray
) -> None:
    first = OnnxMiniLMEmbedder(model_cache_dir=tmp_path).load()
    (written,) = cached_files(tmp_path)
    assert not list(tmp_path.glob(".*"))  # no temporary file left
    second = OnnxMiniLMEmbedder(model_cache_dir=tmp_path).load()
    assert "DISABLE_ALL" in level(second) and "DISABLE_ALL" not in level(first)
    assert cached_files(tmp_path) == [written]
    assert np.array_equal(first.embed_batch(TEXTS), uncached)
    assert np.array_equal(second.embed_batch(TEXTS), uncached)


def test_default_folder_is_in_linkmem_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LINKMEM_HOME", str(tmp_path))
    monkeypatch.delenv(onnx_cache.CACHE_ENV, raising=False)
    assert onnx_cache.default_cache_dir() == tmp_path / "cache"
    assert onnx_cache.default_cache_dir({onnx_cache.CACHE_ENV: "/x"}) == Path("/x")
    OnnxMiniLMEmbedder().load()
    assert len(cached_files(tmp_path / "cache")) == 1


def test_environment_turns_the_cache_off(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(onnx_cache.CACHE_ENV, "0")
    OnnxMiniLMEmbedder(model_cache_dir=tmp_path).load()
    assert not list(tmp_path.iterdir())


def test_unwritable_folder_falls_back(tmp_path: Path, uncached: np.ndarray) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    embedder = OnnxMiniLMEmbedder(model_cache_dir=blocker / "cache")
    assert np.array_equal(embedder.embed_batch(TEXTS), uncached)


def test_damaged_cache_file_is_rebuilt(tmp_path: Path, uncached: np.ndarray) -> None:
    OnnxMiniLMEmbedder(model_cache_dir=tmp_path).load()
    (written,) = cached_files(tmp_path)
    written.write_bytes(b"half a file")
    embedder = OnnxMiniLMEmbedder(model_cache_dir=tmp_path)
    assert np.array_equal(embedder.embed_batch(TEXTS), uncached)
    assert written.stat().st_size > 1000


def test_a_new_entry_removes_older_ones(tmp_path: Path) -> None:
    old = tmp_path / f"{onnx_cache.PREFIX}0123456789{onnx_cache.SUFFIX}"
    old.write_bytes(b"an older model or runtime")
    unrelated = tmp_path / "notes.txt"
    unrelated.write_text("kept")
    OnnxMiniLMEmbedder(model_cache_dir=tmp_path).load()
    assert not old.exists() and unrelated.exists()
    assert len(cached_files(tmp_path)) == 1


def test_key_follows_the_model_file_and_runtime(tmp_path: Path) -> None:
    model = tmp_path / "model.onnx"
    model.write_bytes(b"x")
    key = onnx_cache.cache_key(model, "1.0")
    assert key == onnx_cache.cache_key(model, "1.0")
    assert key != onnx_cache.cache_key(model, "1.1")
    assert key != onnx_cache.cache_key(model, "1.0", "int8")  # a rewritten graph
    model.write_bytes(b"xy")
    assert key != onnx_cache.cache_key(model, "1.0")
