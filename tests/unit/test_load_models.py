"""``components.load_models``: spaCy loads on a side thread while the embedder loads."""

from __future__ import annotations

import threading

import pytest

from linkmem.components import LazyExtractor, load_models
from linkmem.config import resolve_settings
from linkmem.errors import ModelUnavailable


class Recorder:
    def __init__(self) -> None:
        self.thread: str | None = None

    def load(self) -> None:
        self.thread = threading.current_thread().name


def test_pipeline_loads_beside_the_embedder() -> None:
    pytest.importorskip("spacy")
    extractor = LazyExtractor(resolve_settings(env={}))
    embedder = Recorder()
    load_models(embedder, extractor)
    assert embedder.thread == threading.current_thread().name
    assert extractor.extract_batch(["Alice flew to Paris."])[0]  # waits for the side load


def test_no_extractor_or_no_loader_is_fine() -> None:
    embedder = Recorder()
    load_models(embedder, None)
    load_models(embedder, object())
    assert embedder.thread is not None


def test_a_failed_side_load_is_raised_by_the_call_that_needs_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    extractor = LazyExtractor(resolve_settings(env={}))
    extractor.pipeline = "no_such_pipeline_installed"

    def fail(*args: object) -> None:
        raise ModelUnavailable("no pipeline")

    monkeypatch.setattr("linkmem.extract.spacy.SpacyEntityExtractor", fail, raising=False)
    load_models(Recorder(), extractor)
    with pytest.raises(ModelUnavailable):
        extractor.extract_batch(["text"])
